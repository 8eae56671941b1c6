// Reductions: the reducers of opforge/functors/reduce.h over the input seen as kept dims (which select an
// output) and reduced dims (walked for each output), merged as the CPU kernels merge them.
//
// Rows whose reduced elements are contiguous (the innermost dim reduced) take blocks: each block reduces
// a chunk of one output with a shared-memory tree (ReduceBlockKernel); one block per output finishes in
// that pass, more write a partial per block that ReduceBlockFinishKernel combines, one block per output.
// A row that is one contiguous, aligned run is read in 16-byte packs. Shorter rows (32 to 255 elements)
// take a warp each (ReduceWarpKernel). The trees' order is fixed, so a shape, alignment and launch give
// one result.
//
// Few outputs over many elements split each output's reduced elements into `chunks` strided
// chunks (chunk c takes elements c, c + chunks, ...): ReducePartialKernel writes one partial
// result per (chunk, output), ReduceCombineKernel folds partials into fewer while there are many,
// and ReduceFinishKernel combines the last ones and stores. Many outputs take one pass
// (ReduceKernel: one thread per output). opforge/kernels/gpu/reduce.py picks the passes.
#pragma once

#include "opforge/cuda.h"
#include "opforge/functors/reduce.h"
#include "pack.cuh"

namespace opforge {
namespace cuda {

constexpr int kMaxReduceDims = 8;

// Reduced element r of output o is x[KeptOffset(o) + ReducedOffset(r)].
struct ReduceIndex {
  int64_t kept_ndim;
  int64_t kept_size[kMaxReduceDims];
  int64_t kept_stride[kMaxReduceDims];
  int64_t red_ndim;
  int64_t red_size[kMaxReduceDims];
  int64_t red_stride[kMaxReduceDims];
  int64_t outputs;        // the product of the kept sizes
  int64_t count;          // the product of the reduced sizes: elements per output (0: an empty reduction)
  int64_t chunks;         // chunks per output in ReducePartialKernel
  int64_t chunk_fastest;  // 1: neighbouring threads take neighbouring chunks (the innermost dim is reduced)

  OPF_HD int64_t KeptOffset(int64_t o) const {
    int64_t off = 0;
    for (int64_t d = kept_ndim - 1; d >= 0; --d) {
      off += (o % kept_size[d]) * kept_stride[d];
      o /= kept_size[d];
    }
    return off;
  }

  OPF_HD int64_t ReducedOffset(int64_t r) const {
    if (red_ndim == 1) return r * red_stride[0];
    int64_t off = 0;
    for (int64_t d = red_ndim - 1; d >= 0; --d) {
      off += (r % red_size[d]) * red_stride[d];
      r /= red_size[d];
    }
    return off;
  }
};

// The reduced elements first, first + step, ... of the output whose elements start at `base`, four at a
// time into four accumulators: the four loads are independent, so they are in flight together (one
// dependent load after another left a thread waiting on memory latency). The order is fixed by the
// shape and launch, so the result is deterministic.
template <typename R, typename In>
OPF_HD typename R::A ReduceStrided(const In* x, const ReduceIndex& ix, int64_t base, int64_t first, int64_t step) {
  using A = typename R::A;
  A acc0 = R::Identity(), acc1 = R::Identity(), acc2 = R::Identity(), acc3 = R::Identity();
  int64_t r = first;
  for (; r + 3 * step < ix.count; r += 4 * step) {
    const In v0 = x[base + ix.ReducedOffset(r)], v1 = x[base + ix.ReducedOffset(r + step)];
    const In v2 = x[base + ix.ReducedOffset(r + 2 * step)], v3 = x[base + ix.ReducedOffset(r + 3 * step)];
    acc0 = R::Combine(acc0, R::Widen(v0));
    acc1 = R::Combine(acc1, R::Widen(v1));
    acc2 = R::Combine(acc2, R::Widen(v2));
    acc3 = R::Combine(acc3, R::Widen(v3));
  }
  for (; r < ix.count; r += step) acc0 = R::Combine(acc0, R::Widen(x[base + ix.ReducedOffset(r)]));
  return R::Combine(R::Combine(acc0, acc1), R::Combine(acc2, acc3));
}

// ReduceStrided for an output whose elements are one contiguous run row[0, count), when `row` is aligned
// to a pack: thread `first` of `step` takes packs first, first + step, ... (two in flight), then the
// elements past the last whole pack, first, first + step, ... of them. Else ReduceStrided.
template <typename R, typename In>
__device__ typename R::A ReduceContiguous(const In* x, const ReduceIndex& ix, int64_t base, int64_t first,
                                          int64_t step) {
  using A = typename R::A;
  constexpr int W = kPackWidth<In>;
  const In* row = x + base;
  if (W == 1 || reinterpret_cast<uint64_t>(row) % (sizeof(In) * W) != 0) {
    return ReduceStrided<R>(x, ix, base, first, step);
  }
  const Pack<In, W>* packs = reinterpret_cast<const Pack<In, W>*>(row);
  const int64_t whole = ix.count / W;
  A acc0 = R::Identity(), acc1 = R::Identity();
  int64_t p = first;
  for (; p + step < whole; p += 2 * step) {
    const Pack<In, W> a = packs[p], b = packs[p + step];
#pragma unroll
    for (int i = 0; i < W; ++i) {
      acc0 = R::Combine(acc0, R::Widen(a.v[i]));
      acc1 = R::Combine(acc1, R::Widen(b.v[i]));
    }
  }
  if (p < whole) {
    const Pack<In, W> a = packs[p];
#pragma unroll
    for (int i = 0; i < W; ++i) acc0 = R::Combine(acc0, R::Widen(a.v[i]));
  }
  for (int64_t r = whole * W + first; r < ix.count; r += step) acc1 = R::Combine(acc1, R::Widen(row[r]));
  return R::Combine(acc0, acc1);
}

// Whether each output's reduced elements are one contiguous run (one reduced dim, stride 1).
OPF_HD bool ContiguousRows(const ReduceIndex& ix) { return ix.red_ndim == 1 && ix.red_stride[0] == 1; }

// One pass: one thread per output.
template <typename R, typename In, typename Out>
__global__ void ReduceKernel(const In* x, Out* out, ReduceIndex ix) {
  OPF_GRID_STRIDE_LOOP(o, ix.outputs) {
    out[o] = ix.count == 0 ? R::Empty() : R::Finish(ReduceStrided<R>(x, ix, ix.KeptOffset(o), 0, 1), ix.count);
  }
}

// partial[c * outputs + o]: chunk c of output o.
template <typename R, typename In>
__global__ void ReducePartialKernel(const In* x, typename R::A* partial, ReduceIndex ix) {
  OPF_GRID_STRIDE_LOOP(t, ix.outputs * ix.chunks) {
    const int64_t o = ix.chunk_fastest ? t / ix.chunks : t % ix.outputs;
    const int64_t c = ix.chunk_fastest ? t % ix.chunks : t / ix.outputs;
    partial[c * ix.outputs + o] = ReduceStrided<R>(x, ix, ix.KeptOffset(o), c, ix.chunks);
  }
}

// out[c * outputs + o] = the combination of in[j * outputs + o] for j = c, c + n_out, ... < n_in.
template <typename R>
__global__ void ReduceCombineKernel(const typename R::A* in, typename R::A* out, int64_t outputs, int64_t n_in,
                                    int64_t n_out) {
  OPF_GRID_STRIDE_LOOP(t, outputs * n_out) {
    const int64_t o = t % outputs, c = t / outputs;
    typename R::A acc = R::Identity();
    for (int64_t j = c; j < n_in; j += n_out) acc = R::Combine(acc, in[j * outputs + o]);
    out[t] = acc;
  }
}

// out[o] = Finish(the combination of partial[c * outputs + o] for c < n).
template <typename R, typename Out>
__global__ void ReduceFinishKernel(const typename R::A* partial, Out* out, int64_t n, ReduceIndex ix) {
  OPF_GRID_STRIDE_LOOP(o, ix.outputs) {
    typename R::A acc = R::Identity();
    for (int64_t c = 0; c < n; ++c) acc = R::Combine(acc, partial[c * ix.outputs + o]);
    out[o] = R::Finish(acc, ix.count);
  }
}

// The combination of every thread's `acc` in the block (a tree over shared memory; kBlock a power of 2),
// returned to every thread. The caller synchronises before `cells` is written again.
template <typename R, int kBlock>
__device__ typename R::A BlockCombine(typename R::A acc, typename R::A* cells) {
  cells[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) cells[threadIdx.x] = R::Combine(cells[threadIdx.x], cells[threadIdx.x + s]);
    __syncthreads();
  }
  return cells[0];
}

// Block b reduces chunk c = b % per_output of output o = b / per_output: thread t takes the chunk's
// elements t, t + kBlock, ... (chunk c starts at c * kBlock and steps per_output * kBlock). With one chunk
// per output it stores the result, else the chunk's partial at partial[c * outputs + o].
template <typename R, typename In, typename Out, int kBlock>
__global__ void ReduceBlockKernel(const In* x, typename R::A* partial, Out* out, ReduceIndex ix, int64_t per_output) {
  using A = typename R::A;
  // Raw words: an accumulator type may have a constructor, which a __shared__ variable must not.
  __shared__ SharedWords raw[(kBlock * sizeof(A) + sizeof(SharedWords) - 1) / sizeof(SharedWords)];
  A* cells = reinterpret_cast<A*>(raw);
  for (int64_t b = blockIdx.x; b < ix.outputs * per_output; b += gridDim.x) {
    const int64_t o = b / per_output, c = b % per_output;
    const int64_t first = c * kBlock + threadIdx.x, step = per_output * kBlock;
    A acc = ContiguousRows(ix) ? ReduceContiguous<R>(x, ix, ix.KeptOffset(o), first, step)
                               : ReduceStrided<R>(x, ix, ix.KeptOffset(o), first, step);
    acc = BlockCombine<R, kBlock>(acc, cells);
    if (threadIdx.x == 0) {
      if (per_output == 1) {
        out[o] = ix.count == 0 ? R::Empty() : R::Finish(acc, ix.count);
      } else {
        partial[c * ix.outputs + o] = acc;
      }
    }
    __syncthreads();
  }
}

// Rows of 32 to 255 elements whose innermost reduced dim is contiguous: a warp per output (kBlock / 32 of
// them a block), lanes reading neighbouring elements, combined by a tree over the warp's 32 shared cells
// (any accumulator type; __syncwarp between levels).
template <typename R, typename In, typename Out, int kBlock>
__global__ void ReduceWarpKernel(const In* x, Out* out, ReduceIndex ix) {
  using A = typename R::A;
  constexpr int kWarps = kBlock / 32;
  __shared__ SharedWords raw[(kBlock * sizeof(A) + sizeof(SharedWords) - 1) / sizeof(SharedWords)];
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  A* cells = reinterpret_cast<A*>(raw) + warp * 32;
  // o is the same for the 32 lanes of a warp, so they leave the loop together
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kWarps + warp; o < ix.outputs;
       o += static_cast<int64_t>(gridDim.x) * kWarps) {
    cells[lane] = ReduceStrided<R>(x, ix, ix.KeptOffset(o), lane, 32);
    __syncwarp();
    for (int s = 16; s > 0; s >>= 1) {
      if (lane < s) cells[lane] = R::Combine(cells[lane], cells[lane + s]);
      __syncwarp();
    }
    if (lane == 0) out[o] = ix.count == 0 ? R::Empty() : R::Finish(cells[0], ix.count);
    __syncwarp();
  }
}

// out[o] = Finish(the combination of partial[c * outputs + o], c < per_output): a block per output.
template <typename R, typename Out, int kBlock>
__global__ void ReduceBlockFinishKernel(const typename R::A* partial, Out* out, int64_t per_output, ReduceIndex ix) {
  using A = typename R::A;
  __shared__ SharedWords raw[(kBlock * sizeof(A) + sizeof(SharedWords) - 1) / sizeof(SharedWords)];
  A* cells = reinterpret_cast<A*>(raw);
  for (int64_t o = blockIdx.x; o < ix.outputs; o += gridDim.x) {
    A acc = R::Identity();
    for (int64_t c = threadIdx.x; c < per_output; c += kBlock) acc = R::Combine(acc, partial[c * ix.outputs + o]);
    acc = BlockCombine<R, kBlock>(acc, cells);
    if (threadIdx.x == 0) out[o] = R::Finish(acc, ix.count);
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace opforge
