// Gather, GatherNd, the scatters and UnsortedSegmentSum on the GPU (the CPU's csrc/kernels/cpu/
// gather.cc), with the index math of functors/gather.h. Every index read here is in range: the indices
// are the in-range copy range_check.cu makes (opforge/kernels/gpu/gather.py raises after the launches
// where one was not), or were checked on the host before the launch.
#include "copy.cuh"
#include "opforge/functors/gather.h"

namespace opforge {
namespace cuda {

template <typename E, typename I>
__global__ void GatherKernel(const E* params, const I* indices, E* out, int64_t total, int64_t p, int64_t n,
                             int64_t inner) {
  OPF_GRID_STRIDE_LOOP(i, total) { out[i] = params[GatherSource(indices, i, p, n, inner)]; }
}

template <typename E, typename I>
__global__ void GatherNdKernel(const E* x, const I* indices, E* out, int64_t total, NdIndex nd) {
  OPF_GRID_STRIDE_LOOP(i, total) { out[i] = x[nd.RowOffset(indices, i / nd.inner) + i % nd.inner]; }
}

// out holds a copy of x (or is x); rows with one index race (any one of them wins).
template <typename E, typename I>
__global__ void ScatterNdUpdateKernel(const E* updates, const I* indices, E* out, int64_t total, NdIndex nd) {
  OPF_GRID_STRIDE_LOOP(i, total) { out[nd.RowOffset(indices, i / nd.inner) + i % nd.inner] = updates[i]; }
}

// The reducing scatters (ScatterR, ScatterNdR, TensorScatterR; R: Add, Sub, Mul, Div, Max, Min, with the
// functor F): one thread per column of the update slices, every row in order (ScatterColumns), so rows with
// one index fold as on the CPU, without atomics and bit for bit; the parallelism is the slice's length (a
// row of an embedding table, not its count).
template <typename T, typename I, typename F>
__global__ void ScatterReduceKernel(const T* updates, const I* indices, T* out, int64_t rows, NdIndex nd) {
  OPF_GRID_STRIDE_LOOP(r, nd.inner) {
    ScatterColumns<ScatterReduceOp<F>>(updates, indices, out, nd, rows, r, r + 1);
  }
}

// One thread per output element: deterministic, the rows summed in order as on the CPU.
template <typename T, typename I>
__global__ void UnsortedSegmentSumKernel(const T* x, const I* ids, T* out, int64_t total, int64_t rows,
                                         int64_t inner) {
  OPF_GRID_STRIDE_LOOP(i, total) { out[i] = SegmentSumAt(x, ids, rows, inner, i / inner, i % inner); }
}

}  // namespace cuda
}  // namespace opforge
