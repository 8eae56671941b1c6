// Elements moved 16 bytes at a time: one 128-bit load or store per Pack where every pointer of the
// kernel is aligned (memory-bound kernels reach ~0.7 of a device copy's bandwidth with scalar accesses on
// an H200, more with packs). Types of 16 bytes or more take packs of one. Used by elementwise.cuh,
// softmax.cu and normalization.cu.
#pragma once

#include "opforge/cuda.h"

namespace opforge {
namespace cuda {

template <typename T>
constexpr int kPackWidth = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));

template <typename T, int W = kPackWidth<T>>
struct alignas(sizeof(T) * W) Pack {
  T v[W];
};

template <typename... P>
OPF_HD bool AllAligned16(const P*... p) {
  return ((reinterpret_cast<uint64_t>(p) % 16 == 0) && ...);
}

// Whether rows of n elements of T starting at each pointer can be read as Pack<T, W>: every row start
// aligned to the pack.
template <typename T, int W, typename... P>
OPF_HD bool RowsPackable(int64_t n, const P*... p) {
  return n % W == 0 && ((reinterpret_cast<uint64_t>(p) % (sizeof(T) * W) == 0) && ...);
}

}  // namespace cuda
}  // namespace opforge
