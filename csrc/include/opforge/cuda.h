// Helpers for CUDA kernels (built-in and users'), compiled by NVRTC through CuPy: no standard
// library here. Kernels are grid-stride loops with 64-bit indices, so any launch covers any size.
#pragma once

#include "opforge/half.h"
#include "opforge/portable.h"

// Untyped, 16-byte aligned storage for __shared__ arrays of any element type (a __shared__ variable may
// not have a constructor): `__shared__ SharedWords raw[n]; T* cells = reinterpret_cast<T*>(raw);`.
struct alignas(16) SharedWords {
  unsigned long long lo, hi;
};

// for (int64_t i = first index of this thread; i < n; i += threads in the grid)
#define OPF_GRID_STRIDE_LOOP(i, n)                                                              \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,                 \
               opf_stride_##i = static_cast<int64_t>(blockDim.x) * gridDim.x;                    \
       i < (n); i += opf_stride_##i)

namespace opforge {
namespace cuda {

// i / d and i % d for i >= 0, d > 0, in 32 bits when both fit: a 64-bit division takes several times the
// instructions of a 32-bit one on a GPU, and index math, not memory, bounds kernels that decompose a flat
// index into several coordinates per element (im2col).
struct QuotRem {
  int64_t quot, rem;
};

OPF_HD QuotRem DivMod(int64_t i, int64_t d) {
  if (((i | d) >> 32) == 0) {
    const uint32_t a = static_cast<uint32_t>(i), b = static_cast<uint32_t>(d);
    return {static_cast<int64_t>(a / b), static_cast<int64_t>(a % b)};
  }
  return {i / d, i % d};
}

}  // namespace cuda
}  // namespace opforge
