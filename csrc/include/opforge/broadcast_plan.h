// How two C-contiguous inputs map onto their NumPy-broadcast output: worked out once, by the CPU
// kernels in Init and, through _C.broadcast_plan, by the GPU launch glue for its kernels' index.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "opforge/kernel.h"

namespace opforge {

// How two C-contiguous inputs map onto their broadcast output, worked out once in Init.
struct BroadcastPlan {
  enum Kind { kSame, kScalarA, kScalarB, kGeneral };
  Kind kind = kSame;
  int64_t numel = 0;
  // kGeneral only: the output shape with size-1 dims dropped and neighbouring dims merged where
  // both inputs are either contiguous or broadcast across them, plus each input's element
  // strides (0 on a broadcast dim). The innermost strides are therefore 0 or 1.
  std::vector<int64_t> shape, a_strides, b_strides;

  void Init(const std::string& op, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
            const std::vector<int64_t>& out) {
    const size_t nd = out.size();
    OPF_CHECK(a.size() <= nd && b.size() <= nd && Fits(a, out) && Fits(b, out),
              "For '" << op << "', the shapes of the inputs " << ShapeToString(a) << " and " << ShapeToString(b)
                      << " must broadcast to the output shape, but got output shape " << ShapeToString(out) << ".");
    numel = Numel(out);
    const int64_t na = Numel(a), nb = Numel(b);
    // With no zero dims, an input as large as the output has exactly its shape (up to leading 1s).
    if (numel == 0 || (na == numel && nb == numel)) {
      kind = kSame;
    } else if (na == 1 && nb == numel) {
      kind = kScalarA;
    } else if (nb == 1 && na == numel) {
      kind = kScalarB;
    } else {
      kind = kGeneral;
      Collapse(Align(a, nd), Align(b, nd), out);
    }
  }

  // Calls f(out_offset, a_offset, b_offset, count) for the contiguous output runs of [begin, end);
  // within a run the inputs advance by the innermost strides.
  template <typename F>
  void ForEachRun(int64_t begin, int64_t end, F&& f) const {
    const size_t nd = shape.size();
    std::vector<int64_t> idx(nd);
    int64_t ia = 0, ib = 0, rem = begin;
    for (size_t d = nd; d-- > 0;) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      ia += idx[d] * a_strides[d];
      ib += idx[d] * b_strides[d];
    }
    const size_t last = nd - 1;
    for (int64_t pos = begin; pos < end;) {
      const int64_t run = std::min(shape[last] - idx[last], end - pos);
      f(pos, ia, ib, run);
      pos += run;
      idx[last] += run;
      ia += run * a_strides[last];
      ib += run * b_strides[last];
      // Carry into the outer dims, as an odometer does.
      for (size_t d = last; d > 0 && idx[d] == shape[d]; --d) {
        idx[d] = 0;
        ia += a_strides[d - 1] - shape[d] * a_strides[d];
        ib += b_strides[d - 1] - shape[d] * b_strides[d];
        ++idx[d - 1];
      }
    }
  }

 private:
  static int64_t Numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  }
  // Right-aligns `s` to nd dims by prepending 1s.
  static std::vector<int64_t> Align(const std::vector<int64_t>& s, size_t nd) {
    std::vector<int64_t> r(nd - s.size(), 1);
    r.insert(r.end(), s.begin(), s.end());
    return r;
  }
  static bool Fits(const std::vector<int64_t>& s, const std::vector<int64_t>& out) {
    const size_t off = out.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] != out[off + d] && s[d] != 1) return false;
    return true;
  }
  static std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& s) {
    std::vector<int64_t> st(s.size());
    int64_t acc = 1;
    for (size_t d = s.size(); d-- > 0;) {
      st[d] = s[d] == 1 ? 0 : acc;  // a size-1 dim never advances: stride 0 broadcasts it
      acc *= s[d];
    }
    return st;
  }
  void Collapse(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& out) {
    const std::vector<int64_t> sa = ContiguousStrides(a), sb = ContiguousStrides(b);
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      const bool same_pattern =
          !shape.empty() && (a_strides.back() == 0) == (sa[d] == 0) && (b_strides.back() == 0) == (sb[d] == 0);
      if (same_pattern) {  // contiguous across both dims for each input: merge, keep the inner stride
        shape.back() *= out[d];
        a_strides.back() = sa[d];
        b_strides.back() = sb[d];
      } else {
        shape.push_back(out[d]);
        a_strides.push_back(sa[d]);
        b_strides.push_back(sb[d]);
      }
    }
  }
};

}  // namespace opforge
