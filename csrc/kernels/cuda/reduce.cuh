// Reductions as grid-stride loops, without shared memory or barriers (so the tests' host emulation
// runs them): the reducers of opforge/functors/reduce.h over the input seen as kept dims (which
// select an output) and reduced dims (walked for each output), merged as the CPU kernels merge them.
//
// Few outputs over many elements split each output's reduced elements into `chunks` strided
// chunks (chunk c takes elements c, c + chunks, ...): ReducePartialKernel writes one partial
// result per (chunk, output), ReduceCombineKernel folds partials into fewer while there are many,
// and ReduceFinishKernel combines the last ones and stores. Many outputs take one pass
// (ReduceKernel: one thread per output). opforge/kernels/gpu/reduce.py picks the passes.
#pragma once

#include "opforge/cuda.h"
#include "opforge/functors/reduce.h"

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

// The reduced elements first, first + step, ... of the output whose elements start at `base`.
template <typename R, typename In>
OPF_HD typename R::A ReduceStrided(const In* x, const ReduceIndex& ix, int64_t base, int64_t first, int64_t step) {
  typename R::A acc = R::Identity();
  for (int64_t r = first; r < ix.count; r += step) acc = R::Combine(acc, R::Widen(x[base + ix.ReducedOffset(r)]));
  return acc;
}

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

}  // namespace cuda
}  // namespace opforge
