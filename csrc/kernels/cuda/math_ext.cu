// Sinh, Cosh, Tan, Asin, ACos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv, Lgamma, Digamma, Erfinv,
// Polygamma (PolygammaKernel: the order read on the device); Invert, BitwiseAnd,
// BitwiseOr, BitwiseXor; SquaredDifference, Xdivy, Xlogy, DivNoNan, LogicalXor (broadcasting): the math
// of opforge/functors/math_ext.h in the loops of elementwise.cuh (opforge/kernels/gpu/math_ext.py).
#include "elementwise.cuh"
#include "opforge/functors/math_ext.h"

namespace opforge {
namespace cuda {

// Polygamma(a, x): psi^(a)(x), the order a from its one-element tensor (the host checked it is >= 0).
template <typename T, typename I>
__global__ void PolygammaKernel(const I* order, const T* x, T* y, int64_t n) {
  const int64_t a = static_cast<int64_t>(order[0]);
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = Store<T>(PolygammaAt(a, static_cast<double>(Load(x[i])))); }
}

}  // namespace cuda
}  // namespace opforge
