// Moving elements as raw bytes of their size (Reshape, Assign, BroadcastTo, Transpose): every dtype
// of one size shares a kernel, complex types included.
#pragma once

#include "opforge/cuda.h"

namespace opforge {
namespace cuda {

// A complex128 element (8-byte aligned, as the CPU kernels move it).
struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

// y = x, n elements.
template <typename E>
__global__ void CopyKernel(const E* x, E* y, int64_t n) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = x[i]; }
}

}  // namespace cuda
}  // namespace opforge
