// Gather(params, indices, axis), GatherNd(x, indices), the scatters (x, indices, updates): ScatterUpdate,
// ScatterNdUpdate and the reducing ScatterR, ScatterNdR (R: Add, Sub, Mul, Div, Max, Min) in place,
// TensorScatterUpdate and TensorScatterR into a copy,
// and UnsortedSegmentSum(x, segment_ids, num_segments). Indices are int32 or int64; out-of-range
// indices raise an error naming the op and the index (UnsortedSegmentSum drops ids outside
// [0, num_segments), as MindSpore). The index math is functors/gather.h, shared with the CUDA kernels.
#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "opforge/functors/gather.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

int64_t Prod(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

template <typename E, typename I>
class GatherCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const auto& params = ctx.input(0).shape;
    const auto& indices = ctx.input(1).shape;
    const int64_t nd = static_cast<int64_t>(params.size());
    int64_t axis = ctx.GetInt("axis");
    OPF_CHECK(axis >= -nd && axis < nd, "For '" << op << "', the 'axis' must be in [" << -nd << ", " << nd
                                                << "), but got " << axis << ".");
    if (axis < 0) axis += nd;
    outer_ = Prod(params, 0, static_cast<size_t>(axis));
    p_ = params[axis];
    inner_ = Prod(params, static_cast<size_t>(axis) + 1, params.size());
    n_ = Prod(indices, 0, indices.size());
    std::vector<int64_t> want(params.begin(), params.begin() + axis);
    want.insert(want.end(), indices.begin(), indices.end());
    want.insert(want.end(), params.begin() + axis + 1, params.end());
    OPF_CHECK(ctx.output(0).shape == want, "For '" << op << "', the output shape must be " << ShapeToString(want)
                                                   << ", but got " << ShapeToString(ctx.output(0).shape) << ".");
    total_ = outer_ * n_ * inner_;
  }

  void Launch(const KernelArgs& args) override {
    const E* params = args.input<E>(0);
    const I* idx = args.input<I>(1);
    E* out = args.output<E>(0);
    if (total_ == 0) return;
    for (int64_t j = 0; j < n_; ++j) {
      const int64_t v = static_cast<int64_t>(idx[j]);
      OPF_CHECK(v >= 0 && v < p_, "For 'Gather', every 'input_indices' value must be in [0, "
                                      << p_ << "), but got input_indices[" << j << "] = " << v << ".");
    }
    // Slice by slice (out[o, j, :] = params[o, idx[j], :], GatherSource's addressing): a copy of `inner`
    // elements each, and one division per chunk of slices, not three per element.
    const int64_t p = p_, n = n_, inner = inner_;
    if (inner == 1) {  // single elements (a gather along the last axis): row by row of the output
      ParallelFor(outer_, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const E* row = params + o * p;
          E* dst = out + o * n;
          for (int64_t j = 0; j < n; ++j) dst[j] = row[static_cast<int64_t>(idx[j])];
        }
      });
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / inner);
    ParallelFor(outer_ * n, grain, [&](int64_t begin, int64_t end) {
      int64_t o = begin / n, j = begin % n;
      for (int64_t s = begin; s < end; ++s) {
        const E* src = params + (o * p + static_cast<int64_t>(idx[j])) * inner;
        std::copy(src, src + inner, out + s * inner);
        if (++j == n) {
          j = 0;
          ++o;
        }
      }
    });
  }

 private:
  int64_t outer_ = 0, p_ = 0, inner_ = 0, n_ = 0, total_ = 0;
};

// x's leading k dims addressed by rows of k coordinates (indices [..., k]).
NdIndex MakeNdIndex(const std::string& op, const std::vector<int64_t>& x, const std::vector<int64_t>& indices,
                    int64_t* rows) {
  OPF_CHECK(!indices.empty(), "For '" << op << "', the 'indices' must have at least 1 dim.");
  const int64_t k = indices.back();
  OPF_CHECK(k >= 0 && k <= static_cast<int64_t>(x.size()) && k <= kMaxNdIndexDims,
            "For '" << op << "', the last dim of 'indices' " << ShapeToString(indices)
                    << " must be at most the rank of 'x' " << ShapeToString(x) << " (and " << kMaxNdIndexDims
                    << ").");
  NdIndex nd{};
  nd.k = k;
  nd.inner = Prod(x, static_cast<size_t>(k), x.size());
  for (int64_t d = 0; d < k; ++d) {
    nd.dim[d] = x[d];
    nd.stride[d] = Prod(x, static_cast<size_t>(d) + 1, x.size());
  }
  *rows = Prod(indices, 0, indices.size() - 1);
  return nd;
}

template <typename I>
void CheckNdRows(const std::string& op, const NdIndex& nd, const I* idx, int64_t rows,
                 const std::vector<int64_t>& x) {
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t d = nd.BadCoordinate(idx, row);
    if (d < 0) continue;
    std::ostringstream coords;
    for (int64_t c = 0; c < nd.k; ++c) coords << (c ? ", " : "") << static_cast<int64_t>(idx[row * nd.k + c]);
    OPF_CHECK(false, "For '" << op << "', the index row " << row << " [" << coords.str()
                             << "] of 'indices' is out of range for 'x' of shape " << ShapeToString(x)
                             << ": its coordinate " << d << " must be in [0, " << nd.dim[d] << ").");
  }
}

template <typename E, typename I>
class GatherNdCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    x_ = ctx.input(0).shape;
    const auto& indices = ctx.input(1).shape;
    nd_ = MakeNdIndex(ctx.op_name(), x_, indices, &rows_);
    std::vector<int64_t> want(indices.begin(), indices.end() - 1);
    want.insert(want.end(), x_.begin() + nd_.k, x_.end());
    OPF_CHECK(ctx.output(0).shape == want, "For '" << ctx.op_name() << "', the output shape must be "
                                                   << ShapeToString(want) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const E* x = args.input<E>(0);
    const I* idx = args.input<I>(1);
    E* out = args.output<E>(0);
    CheckNdRows("GatherNd", nd_, idx, rows_, x_);
    const NdIndex nd = nd_;
    ParallelFor(rows_ * nd.inner, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = x[nd.RowOffset(idx, i / nd.inner) + i % nd.inner];
    });
  }

 private:
  std::vector<int64_t> x_;
  NdIndex nd_{};
  int64_t rows_ = 0;
};

// A scatter of Op (ScatterUpdateOp, ScatterAddOp of functors/gather.h); kRowIndices: the indices address x's
// first dim (ScatterUpdate, ScatterAdd), else rows of k coordinates (the Nd and Tensor scatters). In place,
// the output is input 0's buffer (the call writes the Parameter); otherwise a copy of it.
template <typename E, typename I, typename Op, bool kRowIndices>
class ScatterCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    x_ = ctx.input(0).shape;
    std::vector<int64_t> indices = ctx.input(1).shape;
    if (kRowIndices) {
      OPF_CHECK(!x_.empty(), "For '" << ctx.op_name() << "', the 'input_x' must have at least 1 dim.");
      indices.push_back(1);
    }
    nd_ = MakeNdIndex(ctx.op_name(), x_, indices, &rows_);
    std::vector<int64_t> want(indices.begin(), indices.end() - 1);
    want.insert(want.end(), x_.begin() + nd_.k, x_.end());
    OPF_CHECK(ctx.input(2).shape == want, "For '" << ctx.op_name() << "', the 'updates' must have shape "
                                                  << ShapeToString(want) << ", but got "
                                                  << ShapeToString(ctx.input(2).shape) << ".");
    numel_ = ctx.input(0).numel();
    op_ = ctx.op_name();
  }

  void Launch(const KernelArgs& args) override {
    const E* x = args.input<E>(0);
    const I* idx = args.input<I>(1);
    const E* updates = args.input<E>(2);
    E* out = args.output<E>(0);
    CheckNdRows(op_, nd_, idx, rows_, x_);
    if (out != x && numel_ > 0) std::memcpy(static_cast<void*>(out), x, static_cast<size_t>(numel_) * sizeof(E));
    const NdIndex nd = nd_;
    const int64_t rows = rows_;
    ParallelFor(nd.inner, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(rows, 1)),
                [&](int64_t begin, int64_t end) { ScatterColumns<Op>(updates, idx, out, nd, rows, begin, end); });
  }

 private:
  std::vector<int64_t> x_;
  NdIndex nd_{};
  int64_t rows_ = 0, numel_ = 0;
  std::string op_;
};

template <typename E, typename I>
using ScatterNdUpdateCpuKernel = ScatterCpuKernel<E, I, ScatterUpdateOp, false>;
template <typename E, typename I>
using ScatterUpdateCpuKernel = ScatterCpuKernel<E, I, ScatterUpdateOp, true>;
// The reducing scatters of F (AddOp, SubOp, ...): on x's first dim, or on rows of N-d indices.
template <typename T, typename I, typename F>
using ScatterRowsReduceCpuKernel = ScatterCpuKernel<T, I, ScatterReduceOp<F>, true>;
template <typename T, typename I, typename F>
using ScatterNdReduceCpuKernel = ScatterCpuKernel<T, I, ScatterReduceOp<F>, false>;

template <typename T, typename I>
class UnsortedSegmentSumCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const auto& x = ctx.input(0).shape;
    const auto& ids = ctx.input(1).shape;
    OPF_CHECK(ids.size() <= x.size() && std::equal(ids.begin(), ids.end(), x.begin()),
              "For '" << ctx.op_name() << "', the 'segment_ids' shape " << ShapeToString(ids)
                      << " must be a prefix of the 'x' shape " << ShapeToString(x) << ".");
    rows_ = Prod(ids, 0, ids.size());
    inner_ = Prod(x, ids.size(), x.size());
    segments_ = ctx.GetInt("num_segments");
    std::vector<int64_t> want{segments_};
    want.insert(want.end(), x.begin() + static_cast<int64_t>(ids.size()), x.end());
    OPF_CHECK(ctx.output(0).shape == want, "For '" << ctx.op_name() << "', the output shape must be "
                                                   << ShapeToString(want) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const I* ids = args.input<I>(1);
    T* out = args.output<T>(0);
    const int64_t total = segments_ * inner_;
    std::vector<compute_t<T>> acc(static_cast<size_t>(total), compute_t<T>(0));
    for (int64_t i = 0; i < rows_; ++i) {  // rows in order, as SegmentSumAt sums them
      const int64_t s = static_cast<int64_t>(ids[i]);
      if (s < 0 || s >= segments_) continue;
      for (int64_t r = 0; r < inner_; ++r) acc[s * inner_ + r] = acc[s * inner_ + r] + Load(x[i * inner_ + r]);
    }
    for (int64_t i = 0; i < total; ++i) out[i] = Store<T>(acc[i]);
  }

 private:
  int64_t rows_ = 0, inner_ = 0, segments_ = 0;
};

#define REG_GATHER(ID, E, IID, I)                                                                              \
  MS_REG_CPU_KERNEL(Gather, KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddOutputAttr(ID),                 \
                    GatherCpuKernel<E, I>);                                                                    \
  MS_REG_CPU_KERNEL(GatherNd, KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddOutputAttr(ID),               \
                    GatherNdCpuKernel<E, I>);                                                                  \
  MS_REG_CPU_KERNEL(ScatterNdUpdate,                                                                           \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddInputAttr(ID).AddOutputAttr(ID),        \
                    ScatterNdUpdateCpuKernel<E, I>);                                                           \
  MS_REG_CPU_KERNEL(TensorScatterUpdate,                                                                       \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddInputAttr(ID).AddOutputAttr(ID),        \
                    ScatterNdUpdateCpuKernel<E, I>);                                                           \
  MS_REG_CPU_KERNEL(ScatterUpdate,                                                                             \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddInputAttr(ID).AddOutputAttr(ID),        \
                    ScatterUpdateCpuKernel<E, I>)
#define REG_GATHER_BOTH(ID, E)                   \
  REG_GATHER(ID, E, kNumberTypeInt32, int32_t); \
  REG_GATHER(ID, E, kNumberTypeInt64, int64_t)

REG_GATHER_BOTH(kNumberTypeBool, uint8_t);
REG_GATHER_BOTH(kNumberTypeInt8, uint8_t);
REG_GATHER_BOTH(kNumberTypeInt16, uint16_t);
REG_GATHER_BOTH(kNumberTypeInt32, uint32_t);
REG_GATHER_BOTH(kNumberTypeInt64, uint64_t);
REG_GATHER_BOTH(kNumberTypeUInt8, uint8_t);
REG_GATHER_BOTH(kNumberTypeUInt16, uint16_t);
REG_GATHER_BOTH(kNumberTypeUInt32, uint32_t);
REG_GATHER_BOTH(kNumberTypeUInt64, uint64_t);
REG_GATHER_BOTH(kNumberTypeFloat16, uint16_t);
REG_GATHER_BOTH(kNumberTypeBFloat16, uint16_t);
REG_GATHER_BOTH(kNumberTypeFloat32, uint32_t);
REG_GATHER_BOTH(kNumberTypeFloat64, uint64_t);
REG_GATHER_BOTH(kNumberTypeComplex64, uint64_t);
REG_GATHER_BOTH(kNumberTypeComplex128, Bytes16);

#define REG_USS(T, ID)                                                                                          \
  MS_REG_CPU_KERNEL(UnsortedSegmentSum,                                                                         \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(kNumberTypeInt32).AddOutputAttr(ID),             \
                    UnsortedSegmentSumCpuKernel<T, int32_t>);                                                  \
  MS_REG_CPU_KERNEL(UnsortedSegmentSum,                                                                         \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(kNumberTypeInt64).AddOutputAttr(ID),             \
                    UnsortedSegmentSumCpuKernel<T, int64_t>)

// ScatterR, ScatterNdR and TensorScatterR of the reduction R (Add, Sub, ...) with the functor F.
#define REG_SCATTER_REDUCE_AS(R, F, T, ID, IID, I)                                                            \
  MS_REG_CPU_KERNEL(Scatter##R, KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddInputAttr(ID).AddOutputAttr(ID), \
                    ScatterRowsReduceCpuKernel<T, I, F>);                                                        \
  MS_REG_CPU_KERNEL(ScatterNd##R,                                                                                \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddInputAttr(ID).AddOutputAttr(ID),          \
                    ScatterNdReduceCpuKernel<T, I, F>);                                                          \
  MS_REG_CPU_KERNEL(TensorScatter##R,                                                                            \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(IID).AddInputAttr(ID).AddOutputAttr(ID),          \
                    ScatterNdReduceCpuKernel<T, I, F>)
#define REG_SCATTER_REDUCE_T(R, F, T, ID)                         \
  REG_SCATTER_REDUCE_AS(R, F, T, ID, kNumberTypeInt32, int32_t); \
  REG_SCATTER_REDUCE_AS(R, F, T, ID, kNumberTypeInt64, int64_t)
#define REG_SCATTER_REDUCE_FLOAT(R, F)                            \
  REG_SCATTER_REDUCE_T(R, F, float16, kNumberTypeFloat16);       \
  REG_SCATTER_REDUCE_T(R, F, bfloat16, kNumberTypeBFloat16);     \
  REG_SCATTER_REDUCE_T(R, F, float, kNumberTypeFloat32);         \
  REG_SCATTER_REDUCE_T(R, F, double, kNumberTypeFloat64)
// DataType.NUMBER_Default: the floats and int8, int16, int32, int64, uint8.
#define REG_SCATTER_REDUCE(R, F)                             \
  REG_SCATTER_REDUCE_FLOAT(R, F);                            \
  REG_SCATTER_REDUCE_T(R, F, int8_t, kNumberTypeInt8);       \
  REG_SCATTER_REDUCE_T(R, F, int16_t, kNumberTypeInt16);     \
  REG_SCATTER_REDUCE_T(R, F, int32_t, kNumberTypeInt32);     \
  REG_SCATTER_REDUCE_T(R, F, int64_t, kNumberTypeInt64);     \
  REG_SCATTER_REDUCE_T(R, F, uint8_t, kNumberTypeUInt8)

REG_SCATTER_REDUCE(Add, AddOp);
REG_SCATTER_REDUCE(Sub, SubOp);
REG_SCATTER_REDUCE(Mul, MulOp);
REG_SCATTER_REDUCE(Max, MaximumOp);
REG_SCATTER_REDUCE(Min, MinimumOp);
REG_SCATTER_REDUCE_FLOAT(Div, DivOp);  // an integer division by zero would trap: floats only

REG_USS(float16, kNumberTypeFloat16);
REG_USS(bfloat16, kNumberTypeBFloat16);
REG_USS(float, kNumberTypeFloat32);
REG_USS(double, kNumberTypeFloat64);
REG_USS(int32_t, kNumberTypeInt32);
REG_USS(int64_t, kNumberTypeInt64);

}  // namespace
}  // namespace opforge
