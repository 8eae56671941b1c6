// Gather, GatherNd, ScatterNdUpdate and UnsortedSegmentSum on the GPU (the CPU's csrc/kernels/cpu/
// gather.cc), with the index math of functors/gather.h. The host checks the indices before a launch
// (opforge/kernels/gpu/gather.py), so every index here is in range.
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

// One thread per output element: deterministic, the rows summed in order as on the CPU.
template <typename T, typename I>
__global__ void UnsortedSegmentSumKernel(const T* x, const I* ids, T* out, int64_t total, int64_t rows,
                                         int64_t inner) {
  OPF_GRID_STRIDE_LOOP(i, total) { out[i] = SegmentSumAt(x, ids, rows, inner, i / inner, i % inner); }
}

}  // namespace cuda
}  // namespace opforge
