// A row's softmax statistics (max, sum of exp(x - max)) with a block: each thread's online piece merged by
// warp shuffles, then across warps through shared memory (SoftmaxMerge of opforge/functors/softmax.h).
// Used by softmax.cu and loss.cu.
#pragma once

#include "block.cuh"
#include "opforge/functors/softmax.h"

namespace opforge {
namespace cuda {

template <typename S>
__device__ SoftmaxPiece<S> WarpMergeSoftmax(SoftmaxPiece<S> p) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const SoftmaxPiece<S> other{__shfl_xor_sync(kAllLanes, p.max, offset), __shfl_xor_sync(kAllLanes, p.sum, offset)};
    p = SoftmaxMerge(p, other);
  }
  return p;
}

OPF_HD constexpr int SoftmaxCells(int block) { return 2 * (block / 32 + 1); }

// The statistics of the contiguous row x[0, n) (n >= 1), returned to every thread of the block (kBlock
// threads, a multiple of 32). `cells`: SoftmaxCells(kBlock) shared values; the caller synchronises
// before they are written again by another function.
template <typename T, int kBlock>
__device__ SoftmaxRowStats<T> BlockSoftmaxStats(const T* x, int64_t n, acc_t<T>* cells) {
  using S = acc_t<T>;
  constexpr int kWarps = kBlock / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  SoftmaxPiece<S> p{S(0), S(0)};
  for (int64_t k = threadIdx.x; k < n; k += kBlock) p = SoftmaxMerge(p, SoftmaxPiece<S>{S(Load(x[k])), S(1)});
  p = WarpMergeSoftmax(p);
  if (lane == 0) {
    cells[2 * warp] = p.max;
    cells[2 * warp + 1] = p.sum;
  }
  __syncthreads();
  if (warp == 0) {
    p = lane < kWarps ? SoftmaxPiece<S>{cells[2 * lane], cells[2 * lane + 1]} : SoftmaxPiece<S>{S(0), S(0)};
    p = WarpMergeSoftmax(p);
    if (lane == 0) {
      cells[2 * kWarps] = p.max;
      cells[2 * kWarps + 1] = p.sum;
    }
  }
  __syncthreads();
  return {static_cast<compute_t<T>>(cells[2 * kWarps]), cells[2 * kWarps + 1]};
}

}  // namespace cuda
}  // namespace opforge
