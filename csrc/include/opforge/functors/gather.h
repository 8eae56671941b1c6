// Index math of Gather, GatherNd, the scatters and UnsortedSegmentSum, shared by the CPU kernels
// (csrc/kernels/cpu/gather.cc) and the CUDA kernels (csrc/kernels/cuda/gather.cu). The indices have
// been checked to be in range before these run (the CPU kernels check them; the GPU reads them back).
#pragma once

#include "opforge/functors/arithmetic.h"
#include "opforge/half.h"
#include "opforge/portable.h"

namespace opforge {

// Gather: params viewed as [outer, p, inner], indices as [n], the output as [outer, n, inner]; the
// params offset of output element i.
template <typename I>
OPF_HD int64_t GatherSource(const I* indices, int64_t i, int64_t p, int64_t n, int64_t inner) {
  const int64_t r = i % inner, j = (i / inner) % n, o = i / (inner * n);
  return (o * p + static_cast<int64_t>(indices[j])) * inner + r;
}

constexpr int kMaxNdIndexDims = 8;

// GatherNd and the scatters: each index row holds k coordinates into the leading dims of x; a row
// addresses a slice of `inner` elements. stride[d] is dim d's stride in elements. (ScatterAdd and
// ScatterUpdate index x's first dim: rows of k = 1.)
struct NdIndex {
  int64_t k;
  int64_t inner;
  int64_t dim[kMaxNdIndexDims];
  int64_t stride[kMaxNdIndexDims];

  template <typename I>
  OPF_HD int64_t RowOffset(const I* indices, int64_t row) const {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) offset += static_cast<int64_t>(indices[row * k + d]) * stride[d];
    return offset;
  }
  // The first coordinate of the row out of [0, dim), or -1.
  template <typename I>
  OPF_HD int64_t BadCoordinate(const I* indices, int64_t row) const {
    for (int64_t d = 0; d < k; ++d) {
      const int64_t v = static_cast<int64_t>(indices[row * k + d]);
      if (v < 0 || v >= dim[d]) return d;
    }
    return -1;
  }
};

// How a scatter writes an element of `updates` into its target: Update replaces it; a reducing scatter
// (Add, Sub, Mul, Div, Max, Min) writes F(target, value) in compute_t<T>, with the elementwise operators'
// functors: integers wrap as NumPy's, Max and Min keep a NaN, Div is for floating types only.
struct ScatterUpdateOp {
  template <typename E>
  static OPF_HD void Apply(E* target, E value) {
    *target = value;
  }
};

template <typename F>
struct ScatterReduceOp {
  template <typename T>
  static OPF_HD void Apply(T* target, T value) {
    *target = Store<T>(F()(Load(*target), Load(value)));
  }
};

using ScatterAddOp = ScatterReduceOp<AddOp>;

// Columns [r0, r1) of the update slices, every row in order into `out`: of rows with one index, Update
// keeps the last and a reduction folds them in row order, so a split over columns (threads) gives one result.
template <typename Op, typename E, typename I>
OPF_HD void ScatterColumns(const E* updates, const I* indices, E* out, const NdIndex& nd, int64_t rows, int64_t r0,
                           int64_t r1) {
  for (int64_t row = 0; row < rows; ++row) {
    E* target = out + nd.RowOffset(indices, row);
    const E* source = updates + row * nd.inner;
    for (int64_t r = r0; r < r1; ++r) Op::Apply(target + r, source[r]);
  }
}

// UnsortedSegmentSum, one output element (segment s, position r of a row) at a time: the sum of the
// rows of x whose id is s (ids outside [0, num_segments) are dropped, as MindSpore's), in order.
template <typename T, typename I>
OPF_HD T SegmentSumAt(const T* x, const I* ids, int64_t rows, int64_t inner, int64_t s, int64_t r) {
  compute_t<T> acc = compute_t<T>(0);
  for (int64_t i = 0; i < rows; ++i) {
    if (static_cast<int64_t>(ids[i]) == s) acc = acc + Load(x[i * inner + r]);
  }
  return Store<T>(acc);
}

}  // namespace opforge
