// Data-movement operators on the GPU (the CPU's csrc/kernels/cpu/array.cc): Slice, StridedSlice,
// ReverseV2, Tile (StridedCopyKernel), SliceGrad, StridedSliceGrad (StridedScatterKernel into zeros),
// Concat, Stack (ConcatKernel, one launch per input), Split, Unstack (SplitKernel, one launch per
// output), Select. The index math is functors/array_index.h; the host builds the plans
// (opforge/kernels/gpu/array.py). Elements move as raw bytes of their size.
#include "copy.cuh"
#include "opforge/functors/add_n.h"
#include "opforge/functors/array_index.h"

namespace opforge {
namespace cuda {

template <typename E>
__global__ void StridedCopyKernel(const E* x, E* y, int64_t n, StridedIndex index) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = x[index.Offset(i)]; }
}

// dx must hold zeros; the index never wraps, so no two threads write one element.
template <typename E>
__global__ void StridedScatterKernel(const E* dy, E* dx, int64_t n, StridedIndex index) {
  OPF_GRID_STRIDE_LOOP(i, n) { dx[index.Offset(i)] = dy[i]; }
}

template <typename E>
__global__ void ConcatKernel(const E* x, E* y, int64_t n, int64_t in_cols, int64_t out_cols, int64_t col0) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[ConcatOffset(i, in_cols, out_cols, col0)] = x[i]; }
}

template <typename E>
__global__ void SplitKernel(const E* x, E* y, int64_t n, int64_t out_cols, int64_t in_cols, int64_t col0) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = x[ConcatOffset(i, out_cols, in_cols, col0)]; }
}

template <typename E>
__global__ void SelectKernel(const uint8_t* cond, const E* x, const E* y, E* out, int64_t n) {
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = cond[i] ? x[i] : y[i]; }
}

// AddN of more than 8 inputs, 8 (k) at a time in input order: the sum so far is carried in acc, in the compute
// type (float for the half types), so the chunks give AddNAt's bits: the first chunk starts from x0, the last
// rounds into out once. The slots past k repeat an input and are not read.
template <typename T>
__global__ void AddNKernel(const T* x0, const T* x1, const T* x2, const T* x3, const T* x4, const T* x5,
                           const T* x6, const T* x7, int64_t k, compute_t<T>* acc, int64_t first, int64_t last,
                           T* out, int64_t n) {
  const T* const xs[8] = {x0, x1, x2, x3, x4, x5, x6, x7};
  const AddOp add;
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> sum = first ? Load(xs[0][i]) : add(acc[i], Load(xs[0][i]));
    for (int64_t j = 1; j < k; ++j) sum = add(sum, Load(xs[j][i]));
    if (last) {
      out[i] = Store<T>(sum);
    } else {
      acc[i] = sum;
    }
  }
}

// AddN of k <= 8 inputs passed as parameters, so a call launched from C needs no pointer array on the
// device; the slots past k repeat an input and are not read.
template <typename T>
__global__ void AddNDirectKernel(const T* x0, const T* x1, const T* x2, const T* x3, const T* x4, const T* x5,
                                 const T* x6, const T* x7, int64_t k, T* out, int64_t n) {
  const T* const xs[8] = {x0, x1, x2, x3, x4, x5, x6, x7};
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = AddNAt(xs, k, i); }
}

}  // namespace cuda
}  // namespace opforge
