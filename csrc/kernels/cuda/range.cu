// Range on the GPU (the CPU's csrc/kernels/cpu/range.cc): out[i] = op(i), functors/range.h.
#include "opforge/cuda.h"
#include "opforge/functors/range.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void RangeKernel(T* out, int64_t n, RangeOp<T> op) {
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = op(i); }
}

}  // namespace cuda
}  // namespace opforge
