// BiasAdd: out = x + bias along the channel axis; x viewed as [outer, channels, inner] (AddOp, the CPU's).
#include "opforge/cuda.h"
#include "opforge/functors/arithmetic.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void BiasAddKernel(const T* x, const T* bias, T* out, int64_t n, int64_t channels, int64_t inner) {
  const AddOp add;
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = Store<T>(add(Load(x[i]), Load(bias[(i / inner) % channels]))); }
}

}  // namespace cuda
}  // namespace opforge
