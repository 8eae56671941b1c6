// Cast: y = x.astype(D), the math of opforge/functors/cast.h (the CPU's). S and D are the dtypes'
// C++ types, bool itself included (stored as a byte). A cast that keeps the bits (an integer to one
// of its width) is CopyKernel.
#include "copy.cuh"
#include "opforge/functors/cast.h"

namespace opforge {
namespace cuda {

template <typename S, typename D>
__global__ void CastKernel(const cast::Storage<S>* x, cast::Storage<D>* y, int64_t n) {
  const CastOp<S, D> op;
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = op(x[i]); }
}

}  // namespace cuda
}  // namespace opforge
