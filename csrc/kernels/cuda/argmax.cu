// Argmax, Argmin with the CPU's rule (opforge/functors/argmax.h): ties keep the first index, the first NaN
// wins. x is viewed as [outer, n, inner]: long contiguous rows (inner 1) take a block each (ArgRowsKernel:
// each thread scans a strided part, warps merge their winners with shuffles, the block through shared
// memory); otherwise one thread per output element scans the axis (ArgScan).
#include "opforge/cuda.h"
#include "opforge/functors/argmax.h"

namespace opforge {
namespace cuda {

template <bool kMin, typename T, typename O>
__device__ void ArgScan(const T* x, O* y, int64_t outputs, int64_t n, int64_t inner) {
  OPF_GRID_STRIDE_LOOP(i, outputs) {
    const T* row = x + (i / inner) * n * inner + i % inner;
    compute_t<T> best = Load(row[0]);
    int64_t index = 0;
    for (int64_t k = 1; k < n; ++k) {
      const compute_t<T> v = Load(row[k * inner]);
      if (ArgReplaces<kMin>(v, best)) {
        best = v;
        index = k;
      }
    }
    y[i] = static_cast<O>(index);
  }
}

template <typename T, typename O>
__global__ void ArgMaxKernel(const T* x, O* y, int64_t outputs, int64_t n, int64_t inner) {
  ArgScan<false>(x, y, outputs, n, inner);
}

template <typename T, typename O>
__global__ void ArgMinKernel(const T* x, O* y, int64_t outputs, int64_t n, int64_t inner) {
  ArgScan<true>(x, y, outputs, n, inner);
}

// (best, index) becomes the winner of the warp's lanes (index -1: a lane with no element).
template <bool kMin, typename C>
__device__ void ArgWarpMerge(C& best, int64_t& index) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const C other = __shfl_xor_sync(0xffffffffu, best, offset);
    const int64_t other_index = __shfl_xor_sync(0xffffffffu, index, offset);
    if (other_index >= 0 && (index < 0 || ArgBeats<kMin>(other, other_index, best, index))) {
      best = other;
      index = other_index;
    }
  }
}

// y[r] = the arg of row r of n >= 1 contiguous elements, a block of kBlock threads (a multiple of 32) per row.
template <bool kMin, typename T, typename O, int kBlock>
__global__ void ArgRowsKernel(const T* x, O* y, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  constexpr int kWarps = kBlock / 32;
  __shared__ C warp_best[kWarps];
  __shared__ int64_t warp_index[kWarps];
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    C best = C(0);
    int64_t index = -1;
    for (int64_t k = threadIdx.x; k < n; k += kBlock) {
      const C v = Load(row[k]);
      if (index < 0 || ArgReplaces<kMin>(v, best)) {
        best = v;
        index = k;
      }
    }
    ArgWarpMerge<kMin>(best, index);
    if (lane == 0) {
      warp_best[warp] = best;
      warp_index[warp] = index;
    }
    __syncthreads();
    if (warp == 0) {
      best = lane < kWarps ? warp_best[lane] : C(0);
      index = lane < kWarps ? warp_index[lane] : -1;
      ArgWarpMerge<kMin>(best, index);
      if (lane == 0) y[r] = static_cast<O>(index);
    }
    __syncthreads();  // the shared cells are the next row's
  }
}

}  // namespace cuda
}  // namespace opforge
