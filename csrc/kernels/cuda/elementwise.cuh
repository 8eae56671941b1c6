// Elementwise CUDA kernels around the functors of opforge/functors/: the loops the CPU kernels
// run (csrc/kernels/cpu/elementwise.h, broadcast.h), as grid-stride loops.
#pragma once

#include "opforge/cuda.h"
#include "pack.cuh"

namespace opforge {
namespace cuda {

// The broadcast of two C-contiguous inputs onto the output, from the CPU kernels' BroadcastPlan
// (_C.broadcast_plan): dims merged, strides 0 where an input is broadcast. ndim == 0: all three
// have the same number of elements and the index is the offset.
constexpr int kMaxBroadcastDims = 8;
// Whether every flat index below n, and so every input offset of a broadcast onto n elements, fits
// in 32 bits.
OPF_HD bool FitsIn32Bits(int64_t n) { return n <= 0xffffffffLL; }

struct BroadcastIndex {
  int64_t ndim;
  int64_t shape[kMaxBroadcastDims];
  int64_t a_stride[kMaxBroadcastDims];
  int64_t b_stride[kMaxBroadcastDims];

  // I: the index type. 64-bit division is many times slower than 32-bit on a GPU, so the kernel
  // divides in 32 bits when every index fits (I = uint32_t).
  OPF_HD void Offsets(int64_t flat, bool narrow, int64_t* ia, int64_t* ib) const {
    if (narrow) {
      OffsetsIn<uint32_t>(flat, ia, ib);
    } else {
      OffsetsIn<uint64_t>(flat, ia, ib);
    }
  }

  template <typename I>
  OPF_HD void OffsetsIn(int64_t flat, int64_t* ia, int64_t* ib) const {
    if (ndim == 0) {
      *ia = *ib = flat;
      return;
    }
    I i = static_cast<I>(flat), a = 0, b = 0;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const I extent = static_cast<I>(shape[d]);
      const I c = i % extent;
      i /= extent;
      a += c * static_cast<I>(a_stride[d]);
      b += c * static_cast<I>(b_stride[d]);
    }
    *ia = static_cast<int64_t>(a);
    *ib = static_cast<int64_t>(b);
  }
};

// A result stored as Out: the input type's rounding (Store) when they agree, else a conversion
// (a comparison's bool as a byte).
template <typename Out, typename T, typename V>
OPF_HD Out StoreAs(V v) {
  if constexpr (IsSame<Out, T>::value) {
    return Store<T>(v);
  } else {
    return static_cast<Out>(v);
  }
}

// pack(p) for each whole pack p < n / W, then tail(k) for each element k past the last one: one
// grid-stride loop over the packs, one over the tail.
template <int W, typename PackBody, typename TailBody>
__device__ __forceinline__ void PackedLoop(int64_t n, PackBody pack, TailBody tail) {
  const int64_t packs = n / W;
  OPF_GRID_STRIDE_LOOP(p, packs) { pack(p); }
  OPF_GRID_STRIDE_LOOP(t, n - packs * W) { tail(packs * W + t); }
}

// y = op(x)
template <typename T, typename Op>
__global__ void UnaryKernel(const T* x, T* y, int64_t n, Op op) {
  constexpr int W = kPackWidth<T>;
  if (W > 1 && AllAligned16(x, y)) {
    PackedLoop<W>(
        n,
        [&](int64_t p) {
          const Pack<T> in = reinterpret_cast<const Pack<T>*>(x)[p];
          Pack<T> out;
#pragma unroll
          for (int j = 0; j < W; ++j) out.v[j] = Store<T>(op(Load(in.v[j])));
          reinterpret_cast<Pack<T>*>(y)[p] = out;
        },
        [&](int64_t k) { y[k] = Store<T>(op(Load(x[k]))); });
    return;
  }
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = Store<T>(op(Load(x[i]))); }
}

// y = op(x) with an output type of its own (Abs of complex64 is float32).
template <typename In, typename Out, typename Op>
__global__ void UnaryToKernel(const In* x, Out* y, int64_t n, Op op) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = static_cast<Out>(op(Load(x[i]))); }
}

// out = op(a, b), a and b of out's shape (the grad kernels: dx = op(dy, y)).
template <typename T, typename Op>
__global__ void SameShapeBinaryKernel(const T* a, const T* b, T* out, int64_t n, Op op) {
  constexpr int W = kPackWidth<T>;
  if (W > 1 && AllAligned16(a, b, out)) {
    PackedLoop<W>(
        n,
        [&](int64_t p) {
          const Pack<T> pa = reinterpret_cast<const Pack<T>*>(a)[p];
          const Pack<T> pb = reinterpret_cast<const Pack<T>*>(b)[p];
          Pack<T> po;
#pragma unroll
          for (int j = 0; j < W; ++j) po.v[j] = Store<T>(op(Load(pa.v[j]), Load(pb.v[j])));
          reinterpret_cast<Pack<T>*>(out)[p] = po;
        },
        [&](int64_t k) { out[k] = Store<T>(op(Load(a[k]), Load(b[k]))); });
    return;
  }
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = Store<T>(op(Load(a[i]), Load(b[i]))); }
}

// out = op(a, b) with NumPy broadcasting; Out is T, or uint8_t for a comparison's bool.
// Same shapes (ndim == 0) go pack by pack when aligned. A broadcast whose innermost extent is a multiple
// of the pack width takes a pack of outputs per step: the offsets (their divisions are the cost) are
// computed once per pack and stepped along the innermost dim.
template <typename T, typename Out, typename Op>
__global__ void BroadcastBinaryKernel(const T* a, const T* b, Out* out, int64_t n, BroadcastIndex index, Op op) {
  constexpr int W = kPackWidth<T>;  // Out is T or a byte: its packs hold at least as many
  using OutPack = Pack<Out, W>;
  const bool narrow = FitsIn32Bits(n);
  if (W > 1 && index.ndim == 0 && AllAligned16(a, b, out)) {
    PackedLoop<W>(
        n,
        [&](int64_t p) {
          const Pack<T> pa = reinterpret_cast<const Pack<T>*>(a)[p];
          const Pack<T> pb = reinterpret_cast<const Pack<T>*>(b)[p];
          OutPack po;
#pragma unroll
          for (int j = 0; j < W; ++j) po.v[j] = StoreAs<Out, T>(op(Load(pa.v[j]), Load(pb.v[j])));
          reinterpret_cast<OutPack*>(out)[p] = po;
        },
        [&](int64_t k) { out[k] = StoreAs<Out, T>(op(Load(a[k]), Load(b[k]))); });
    return;
  }
  const int64_t last = index.ndim - 1;
  if (W > 1 && index.ndim > 0 && index.shape[last] % W == 0 && AllAligned16(out)) {
    const int64_t sa = index.a_stride[last], sb = index.b_stride[last];
    PackedLoop<W>(
        n,
        [&](int64_t p) {
          int64_t ia, ib;
          index.Offsets(p * W, narrow, &ia, &ib);
          OutPack po;
#pragma unroll
          for (int j = 0; j < W; ++j) po.v[j] = StoreAs<Out, T>(op(Load(a[ia + j * sa]), Load(b[ib + j * sb])));
          reinterpret_cast<OutPack*>(out)[p] = po;
        },
        [&](int64_t k) {
          int64_t ia, ib;
          index.Offsets(k, narrow, &ia, &ib);
          out[k] = StoreAs<Out, T>(op(Load(a[ia]), Load(b[ib])));
        });
    return;
  }
  OPF_GRID_STRIDE_LOOP(i, n) {
    int64_t ia, ib;
    index.Offsets(i, narrow, &ia, &ib);
    out[i] = StoreAs<Out, T>(op(Load(a[ia]), Load(b[ib])));
  }
}

}  // namespace cuda
}  // namespace opforge
