// Block-level building blocks of the GPU kernels: sums over a warp (shuffles) and over a block (shuffles,
// then one shared cell per warp). The tests' host emulation runs them with real barriers and shuffles.
#pragma once

#include "opforge/cuda.h"

namespace opforge {
namespace cuda {

constexpr unsigned kAllLanes = 0xffffffffu;

// The sum of v over the 32 lanes of the warp, returned to every lane (a fixed butterfly: deterministic).
template <typename S>
__device__ S WarpSum(S v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kAllLanes, v, offset);
  return v;
}

// The combination of every thread's v over the block, returned to every thread: each warp's by
// warp_reduce (WarpSum, WarpMax), then the warps' in warp 0, lanes past the last warp reading `pad`
// (kPadFirst: the first warp's result, for a max; else S(0), for a sum). kBlock threads (a multiple
// of 32, at most 1024) in x; `cells` holds kBlock / 32 + 1 shared values. A call may follow another on
// the same cells without a barrier between them: each call's writes come after a barrier every thread's
// reads of the previous call precede.
template <int kBlock, bool kPadFirst, typename S, typename WarpReduce>
__device__ S BlockReduce(S v, S* cells, WarpReduce warp_reduce) {
  constexpr int kWarps = kBlock / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  v = warp_reduce(v);
  if (lane == 0) cells[warp] = v;
  __syncthreads();
  if (warp == 0) {
    S w = lane < kWarps ? cells[lane] : (kPadFirst ? cells[0] : S(0));
    w = warp_reduce(w);
    if (lane == 0) cells[kWarps] = w;
  }
  __syncthreads();
  return cells[kWarps];
}

template <typename S, int kBlock>
__device__ S BlockSum(S v, S* cells) {
  return BlockReduce<kBlock, false>(v, cells, [](S x) { return WarpSum(x); });
}

// The max over the 32 lanes of the warp (a NaN may be dropped: callers that need NaN to spread get it
// from a later sum, as softmax's exp(x - max) does).
template <typename S>
__device__ S WarpMax(S v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const S other = __shfl_xor_sync(kAllLanes, v, offset);
    v = other > v ? other : v;
  }
  return v;
}

template <typename S, int kBlock>
__device__ S BlockMax(S v, S* cells) {
  return BlockReduce<kBlock, true>(v, cells, [](S x) { return WarpMax(x); });
}

// The sum (kMax false) or the max of v over a group of kGroup threads: one warp (kGroup == 32, no shared
// memory, no barrier: the warps of a block work on different rows) or the whole block of kGroup threads.
template <int kGroup, bool kMax, typename S>
__device__ S GroupReduce(S v, S* cells) {
  if constexpr (kGroup == 32) {
    if constexpr (kMax) return WarpMax(v);
    return WarpSum(v);
  } else {
    if constexpr (kMax) return BlockMax<S, kGroup>(v, cells);
    return BlockSum<S, kGroup>(v, cells);
  }
}

// The inclusive prefix sum of v over the lanes of the warp (lane l gets lanes 0..l), in log2(32) shuffles.
template <typename S>
__device__ S WarpInclusiveScan(S v) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const S other = __shfl_up_sync(kAllLanes, v, offset);
    if (lane >= offset) v += other;
  }
  return v;
}

// The exclusive prefix sum of v over the threads of the block in thread order (thread t gets threads 0..t-1),
// and the block's total in *total; kBlock threads (a multiple of 32, at most 1024) in x. `cells` holds
// kBlock / 32 + 1 shared values. A call may follow another on the same cells without a barrier between them:
// a warp's cell is written only by that warp, after its lanes' reads of the previous call (the shuffles
// before the write take every lane), and the others only after the first barrier.
template <typename S, int kBlock>
__device__ S BlockExclusiveScan(S v, S* cells, S* total) {
  constexpr int kWarps = kBlock / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const S inclusive = WarpInclusiveScan(v);
  S before = __shfl_up_sync(kAllLanes, inclusive, 1);  // exclusive within the warp
  if (lane == 0) before = S(0);
  if (lane == 31) cells[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const S warp_total = lane < kWarps ? cells[lane] : S(0);
    const S through = WarpInclusiveScan(warp_total);
    S warps_before = __shfl_up_sync(kAllLanes, through, 1);
    if (lane == 0) warps_before = S(0);
    if (lane < kWarps) cells[lane] = warps_before;
    if (lane == kWarps - 1) cells[kWarps] = through;
  }
  __syncthreads();
  *total = cells[kWarps];
  return cells[warp] + before;
}

}  // namespace cuda
}  // namespace opforge
