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
