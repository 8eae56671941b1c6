// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceAll, ReduceAny over the attr "axis" (empty: all axes), "keep_dims":
// out = sum(x), sum(x) / count or max(x) (NaN propagates, as in np.max).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/lanes.h"
#include "kernels/cpu/scan.h"
#include "opforge/functors/reduce.h"

namespace opforge {
namespace {


template <typename T>
acc_t<T> Widen(T v) {
  return SumReducer<T>::Widen(v);
}

// Sum of a contiguous run in 16 lanes (kernels/cpu/lanes.h): they vectorise, widening float32 to the
// float64 sum eight at a time in the AVX-512 clone.
template <typename T>
OPF_VECTOR_CLONES acc_t<T> SumRun(const T* x, int64_t n) {
  return lanes::Sum<acc_t<T>>(n, [x](int64_t i) { return Widen(x[i]); });
}

// Input offset of linear index i over dims `sizes` (row-major) with input `strides`.
int64_t Offset(int64_t i, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    off += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return off;
}

// Calls f(offset) for every offset spanned by dims (sizes, strides), in row-major order; no dims
// means one call with offset 0. `idx` is caller-owned scratch.
template <typename F>
void ForEachOffset(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, std::vector<int64_t>& idx,
                   F&& f) {
  const size_t nd = sizes.size();
  idx.assign(nd, 0);
  int64_t off = 0;
  for (;;) {
    f(off);
    size_t d = nd;
    for (;;) {  // odometer step
      if (d == 0) return;
      --d;
      off += strides[d];
      if (++idx[d] < sizes[d]) break;
      off -= sizes[d] * strides[d];
      idx[d] = 0;
    }
  }
}

// How the input is walked, worked out in Init. Dims of size 1 are dropped and neighbouring dims
// that are both kept or both reduced are merged, so the input alternates kept / reduced blocks.
struct ReducePlan {
  enum Kind {
    kEmpty,        // the input has no elements
    kFull,         // one output: a contiguous sum of the whole input
    kInnerReduce,  // innermost dim reduced: each output sums contiguous runs (row sums)
    kInnerKeep,    // innermost dim kept: outputs accumulate contiguous rows (column sums)
  };
  Kind kind = kEmpty;
  int64_t in_numel = 0, out_numel = 0, count = 0;  // count: input elements per output
  int64_t inner = 0;                               // length of the innermost contiguous run
  // Kept dims that select an output (for kInnerKeep without the innermost one) and reduced dims
  // walked per output (for kInnerReduce without the innermost one), each with input strides.
  std::vector<int64_t> kept_sizes, kept_strides, red_sizes, red_strides;

  void Init(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
    in_numel = 1;
    out_numel = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      in_numel *= shape[d];
      if (!reduced[d]) out_numel *= shape[d];
    }
    if (in_numel == 0) {
      kind = kEmpty;
      return;
    }
    count = in_numel / out_numel;
    if (out_numel == 1) {
      kind = kFull;
      inner = in_numel;
      return;
    }
    std::vector<int64_t> sizes;
    std::vector<bool> flags;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (!flags.empty() && flags.back() == reduced[d]) {
        sizes.back() *= shape[d];
      } else {
        sizes.push_back(shape[d]);
        flags.push_back(reduced[d]);
      }
    }
    int64_t stride = 1;
    std::vector<int64_t> strides(sizes.size());
    for (size_t d = sizes.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= sizes[d];
    }
    // out_numel > 1 here, so at least one kept dim survives the collapse.
    kind = flags.back() ? kInnerReduce : kInnerKeep;
    inner = sizes.back();
    for (size_t d = 0; d + 1 < sizes.size(); ++d) {
      (flags[d] ? red_sizes : kept_sizes).push_back(sizes[d]);
      (flags[d] ? red_strides : kept_strides).push_back(strides[d]);
    }
  }
};

// Reads the attrs "axis" and "keep_dims" and returns which input dims are reduced.
std::vector<bool> ReducedDims(const KernelContext& ctx) {
  const std::string& op = ctx.op_name();
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const int64_t nd = static_cast<int64_t>(shape.size());
  const std::vector<int64_t> axes = ctx.HasAttr("axis") ? ctx.GetInts("axis") : std::vector<int64_t>{};
  const bool keep_dims = ctx.HasAttr("keep_dims") && ctx.GetBool("keep_dims");
  // Like NumPy, a 0-d input accepts axis 0 / -1: one element reduced to itself.
  const int64_t range = std::max<int64_t>(nd, 1);
  std::vector<bool> reduced(static_cast<size_t>(nd), axes.empty());
  std::vector<bool> seen(static_cast<size_t>(range), false);
  for (int64_t a : axes) {
    OPF_CHECK(a >= -range && a < range, "For '" << op << "', each axis must be in [" << -range << ", " << range
                                                << "), but got axis " << a << " for input shape "
                                                << ShapeToString(shape) << ".");
    const int64_t axis = a < 0 ? a + range : a;
    OPF_CHECK(!seen[axis], "For '" << op << "', the axes must be unique, but got axis " << ShapeToString(axes)
                                   << " for input shape " << ShapeToString(shape) << ".");
    seen[axis] = true;
    if (axis < nd) reduced[axis] = true;
  }
  std::vector<int64_t> want;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) {
      want.push_back(shape[d]);
    } else if (keep_dims) {
      want.push_back(1);
    }
  }
  OPF_CHECK(ctx.output(0).shape == want, "For '" << op << "', the output shape must be " << ShapeToString(want)
                                                 << " (keep_dims=" << (keep_dims ? "True" : "False") << "), but got "
                                                 << ShapeToString(ctx.output(0).shape) << ".");
  return reduced;
}

// The reducers of opforge/functors/reduce.h with the CPU's fast scan of a contiguous run.
template <typename T>
struct CpuSum : SumReducer<T> {
  static acc_t<T> Run(const T* x, int64_t n) { return SumRun(x, n); }
};

template <typename T>
struct CpuMean : MeanReducer<T> {
  static acc_t<T> Run(const T* x, int64_t n) { return SumRun(x, n); }
};

template <typename T>
struct CpuMax : MaxReducer<T> {
  using A = typename MaxReducer<T>::A;
  static A Run(const T* x, int64_t n) {
    bool nan = false;
    const A best = MaxScan<A>(x, n, MaxReducer<T>::Identity(), &nan);
    if constexpr (std::is_floating_point_v<A>) {
      if (nan) return std::numeric_limits<A>::quiet_NaN();
    }
    return best;
  }
};

// Min, Prod, All, Any: the reducer's combine over a run (the compiler vectorises the simple loop).
template <typename R, typename T>
OPF_VECTOR_CLONES typename R::A RunOf(const T* x, int64_t n) {
  typename R::A acc = R::Identity();
  for (int64_t i = 0; i < n; ++i) acc = R::Combine(acc, R::Widen(x[i]));
  return acc;
}

template <typename T>
struct CpuMin : MinReducer<T> {
  static typename MinReducer<T>::A Run(const T* x, int64_t n) {
#ifdef OPF_SCAN_AVX
    if constexpr (std::is_same_v<T, float>) {
      if (HasAvx()) {
        bool nan = false;
        const float best = ExtremeScanAvx<false>(x, n, MinReducer<T>::Identity(), &nan);
        return nan ? std::numeric_limits<float>::quiet_NaN() : best;
      }
    }
#endif
    return RunOf<MinReducer<T>>(x, n);
  }
};

template <typename T>
struct CpuProd : ProdReducer<T> {
  static typename ProdReducer<T>::A Run(const T* x, int64_t n) { return RunOf<ProdReducer<T>>(x, n); }
};

template <typename T>
struct CpuAll : AllReducer {
  static unsigned char Run(const bool* x, int64_t n) { return RunOf<AllReducer>(x, n); }
};

template <typename T>
struct CpuAny : AnyReducer {
  static unsigned char Run(const bool* x, int64_t n) { return RunOf<AnyReducer>(x, n); }
};

template <typename T, typename R>
class ReduceCpuKernel : public CpuKernel {
  using A = typename R::A;

 public:
  void Init(const KernelContext& ctx) override {
    plan_.Init(ctx.input(0).shape, ReducedDims(ctx));
    OPF_CHECK(R::EmptyOk() || plan_.kind != ReducePlan::kEmpty || plan_.out_numel == 0,
              "For '" << ctx.op_name() << "', cannot reduce a zero-size axis of input shape "
                      << ShapeToString(ctx.input(0).shape) << ": the reduction has no identity.");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* out = args.output<T>(0);
    switch (plan_.kind) {
      case ReducePlan::kEmpty:
        std::fill(out, out + plan_.out_numel, R::Empty());
        break;
      case ReducePlan::kFull:
        out[0] = R::Finish(FullReduce(x), plan_.count);
        break;
      case ReducePlan::kInnerReduce:
        InnerReduce(x, out);
        break;
      case ReducePlan::kInnerKeep:
        InnerKeep(x, out);
        break;
    }
  }

 private:
  // Fixed chunks (independent of the thread count, so results are reproducible), combined in order.
  A FullReduce(const T* x) const {
    const int64_t n = plan_.in_numel;
    const int64_t chunks = std::clamp<int64_t>(n / kParallelGrain, 1, 256);
    const int64_t chunk = (n + chunks - 1) / chunks;
    std::vector<A> partial(static_cast<size_t>(chunks), R::Identity());
    ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t lo = c * chunk, hi = std::min(n, lo + chunk);
        if (lo < hi) partial[c] = R::Run(x + lo, hi - lo);
      }
    });
    A total = R::Identity();
    for (A p : partial) total = R::Combine(total, p);
    return total;
  }

  int64_t OutputGrain() const { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, plan_.count)); }

  // Each output reduces its contiguous innermost runs, one per position of the outer reduced dims.
  void InnerReduce(const T* x, T* out) const {
    const ReducePlan& p = plan_;
    ParallelFor(p.out_numel, OutputGrain(), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> idx;
      for (int64_t o = begin; o < end; ++o) {
        const T* base = x + Offset(o, p.kept_sizes, p.kept_strides);
        A acc = R::Identity();
        ForEachOffset(p.red_sizes, p.red_strides, idx,
                      [&](int64_t off) { acc = R::Combine(acc, R::Run(base + off, p.inner)); });
        out[o] = R::Finish(acc, p.count);
      }
    });
  }

  // Outputs come in contiguous rows of `inner`; each row combines the matching input rows one by
  // one, which streams memory. Threads split the outputs, so a wide column reduction still parallelises.
  void InnerKeep(const T* x, T* out) const {
    const ReducePlan& p = plan_;
    // One accumulator per output, allocated here because the parallel body must not throw.
    std::vector<A> acc_all(static_cast<size_t>(p.out_numel));
    ParallelFor(p.out_numel, OutputGrain(), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> idx;
      for (int64_t o = begin; o < end;) {
        const int64_t row = o / p.inner, c0 = o % p.inner, n = std::min(p.inner - c0, end - o);
        const T* base = x + Offset(row, p.kept_sizes, p.kept_strides) + c0;
        A* acc = acc_all.data() + o;
        std::fill(acc, acc + n, R::Identity());
        ForEachOffset(p.red_sizes, p.red_strides, idx, [&](int64_t off) {
          const T* src = base + off;
          for (int64_t c = 0; c < n; ++c) acc[c] = R::Combine(acc[c], R::Widen(src[c]));
        });
        for (int64_t c = 0; c < n; ++c) out[o + c] = R::Finish(acc[c], p.count);
        o += n;
      }
    });
  }

  ReducePlan plan_;
};

// Every integer type, as MindSpore's CPU registers the reductions.
#define REG_REDUCE(OP, T, ID, REDUCER) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), ReduceCpuKernel<T, REDUCER<T>>)

REG_REDUCE(ReduceSum, float16, kNumberTypeFloat16, CpuSum);
REG_REDUCE(ReduceSum, bfloat16, kNumberTypeBFloat16, CpuSum);
REG_REDUCE(ReduceSum, float, kNumberTypeFloat32, CpuSum);
REG_REDUCE(ReduceSum, double, kNumberTypeFloat64, CpuSum);
REG_REDUCE(ReduceSum, int32_t, kNumberTypeInt32, CpuSum);
REG_REDUCE(ReduceSum, int64_t, kNumberTypeInt64, CpuSum);
REG_REDUCE(ReduceSum, int8_t, kNumberTypeInt8, CpuSum);
REG_REDUCE(ReduceSum, int16_t, kNumberTypeInt16, CpuSum);
REG_REDUCE(ReduceSum, uint8_t, kNumberTypeUInt8, CpuSum);
REG_REDUCE(ReduceSum, uint16_t, kNumberTypeUInt16, CpuSum);
REG_REDUCE(ReduceSum, uint32_t, kNumberTypeUInt32, CpuSum);
REG_REDUCE(ReduceSum, uint64_t, kNumberTypeUInt64, CpuSum);
REG_REDUCE(ReduceMean, float16, kNumberTypeFloat16, CpuMean);
REG_REDUCE(ReduceMean, bfloat16, kNumberTypeBFloat16, CpuMean);
REG_REDUCE(ReduceMean, float, kNumberTypeFloat32, CpuMean);
REG_REDUCE(ReduceMean, double, kNumberTypeFloat64, CpuMean);
REG_REDUCE(ReduceMax, float16, kNumberTypeFloat16, CpuMax);
REG_REDUCE(ReduceMax, bfloat16, kNumberTypeBFloat16, CpuMax);
REG_REDUCE(ReduceMax, float, kNumberTypeFloat32, CpuMax);
REG_REDUCE(ReduceMax, double, kNumberTypeFloat64, CpuMax);
REG_REDUCE(ReduceMax, int32_t, kNumberTypeInt32, CpuMax);
REG_REDUCE(ReduceMax, int64_t, kNumberTypeInt64, CpuMax);
REG_REDUCE(ReduceMax, int8_t, kNumberTypeInt8, CpuMax);
REG_REDUCE(ReduceMax, int16_t, kNumberTypeInt16, CpuMax);
REG_REDUCE(ReduceMax, uint8_t, kNumberTypeUInt8, CpuMax);
REG_REDUCE(ReduceMax, uint16_t, kNumberTypeUInt16, CpuMax);
REG_REDUCE(ReduceMax, uint32_t, kNumberTypeUInt32, CpuMax);
REG_REDUCE(ReduceMax, uint64_t, kNumberTypeUInt64, CpuMax);
REG_REDUCE(ReduceMin, float16, kNumberTypeFloat16, CpuMin);
REG_REDUCE(ReduceMin, bfloat16, kNumberTypeBFloat16, CpuMin);
REG_REDUCE(ReduceMin, float, kNumberTypeFloat32, CpuMin);
REG_REDUCE(ReduceMin, double, kNumberTypeFloat64, CpuMin);
REG_REDUCE(ReduceMin, int32_t, kNumberTypeInt32, CpuMin);
REG_REDUCE(ReduceMin, int64_t, kNumberTypeInt64, CpuMin);
REG_REDUCE(ReduceMin, int8_t, kNumberTypeInt8, CpuMin);
REG_REDUCE(ReduceMin, int16_t, kNumberTypeInt16, CpuMin);
REG_REDUCE(ReduceMin, uint8_t, kNumberTypeUInt8, CpuMin);
REG_REDUCE(ReduceMin, uint16_t, kNumberTypeUInt16, CpuMin);
REG_REDUCE(ReduceMin, uint32_t, kNumberTypeUInt32, CpuMin);
REG_REDUCE(ReduceMin, uint64_t, kNumberTypeUInt64, CpuMin);
REG_REDUCE(ReduceProd, float16, kNumberTypeFloat16, CpuProd);
REG_REDUCE(ReduceProd, bfloat16, kNumberTypeBFloat16, CpuProd);
REG_REDUCE(ReduceProd, float, kNumberTypeFloat32, CpuProd);
REG_REDUCE(ReduceProd, double, kNumberTypeFloat64, CpuProd);
REG_REDUCE(ReduceProd, int32_t, kNumberTypeInt32, CpuProd);
REG_REDUCE(ReduceProd, int64_t, kNumberTypeInt64, CpuProd);
REG_REDUCE(ReduceProd, int8_t, kNumberTypeInt8, CpuProd);
REG_REDUCE(ReduceProd, int16_t, kNumberTypeInt16, CpuProd);
REG_REDUCE(ReduceProd, uint8_t, kNumberTypeUInt8, CpuProd);
REG_REDUCE(ReduceProd, uint16_t, kNumberTypeUInt16, CpuProd);
REG_REDUCE(ReduceProd, uint32_t, kNumberTypeUInt32, CpuProd);
REG_REDUCE(ReduceProd, uint64_t, kNumberTypeUInt64, CpuProd);
REG_REDUCE(ReduceAll, bool, kNumberTypeBool, CpuAll);
REG_REDUCE(ReduceAny, bool, kNumberTypeBool, CpuAny);

}  // namespace
}  // namespace opforge
