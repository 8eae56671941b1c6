// The scans of CumSum and CumProd (and, at the end, of Cummax and Cummin) over one line, shared by the CPU kernels (csrc/kernels/cpu/cumsum.cc)
// and the CUDA kernels (csrc/kernels/cuda/cumsum.cu): n elements x[0], x[stride], ...; y[k] = the
// combination (R: SumReducer or ProdReducer of reduce.h) of x[j] for j <= k (exclusive: j < k; reverse:
// j >= k, exclusive: j > k), accumulated in acc_t<T> (double for float32 / float64, float for the half
// types, wrapping 64-bit integers for integers, as ReduceSum and ReduceProd). Host and device; no
// standard library.
#pragma once

#include "opforge/functors/reduce.h"
#include "opforge/half.h"

namespace opforge {

template <typename R, typename T>
OPF_HD void ScanLine(const T* x, T* y, int64_t n, int64_t stride, bool exclusive, bool reverse) {
  auto acc = R::Identity();
  for (int64_t t = 0; t < n; ++t) {
    const int64_t k = (reverse ? n - 1 - t : t) * stride;
    const auto v = R::Widen(x[k]);
    if (!exclusive) acc = R::Combine(acc, v);
    y[k] = R::Finish(acc, 1);
    if (exclusive) acc = R::Combine(acc, v);
  }
}

}  // namespace opforge

namespace opforge {

// Cummax (kMax) and Cummin over one line: y[k] = the max (min) of x[0..k] and index[k] its position, the
// latest on ties; a NaN wins and stays, as in MaxReducer / MinReducer.
template <bool kMax, typename T>
OPF_HD void ExtremeScanLine(const T* x, T* y, int64_t* index, int64_t n, int64_t stride) {
  using C = compute_t<T>;
  C best = C(0);
  int64_t at = 0;
  for (int64_t t = 0; t < n; ++t) {
    const C v = Load(x[t * stride]);
    const bool better = kMax ? v >= best : v <= best;
    if (t == 0 || (!math::IsNan(best) && (better || math::IsNan(v)))) {
      best = v;
      at = t;
    }
    y[t * stride] = Store<T>(best);
    index[t * stride] = at;
  }
}

}  // namespace opforge
