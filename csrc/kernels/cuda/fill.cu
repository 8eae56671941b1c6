// Fill: every element of out set to one value (Fill, OnesLike, ZerosLike and the GPU device's
// full()). Only the size of T matters, as in the CPU kernels (a complex128 is a Bytes16).
#include "copy.cuh"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void FillKernel(T* out, int64_t n, T value) {
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = value; }
}

}  // namespace cuda
}  // namespace opforge
