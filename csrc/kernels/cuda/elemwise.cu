// Abs, Erf, Floor, Ceil, Round, Sign, IsNan, IsFinite, LogicalNot; GeLU, Softplus, HSigmoid, HSwish, ReLU6
// and their grads; Pow, Atan2, Div, FloorDiv, Mod, FloorMod, LogicalAnd, LogicalOr (broadcasting);
// NotEqual, Greater, GreaterEqual, Less, LessEqual (broadcasting, bool out): the math of
// opforge/functors/elemwise.h in the loops of elementwise.cuh (opforge/kernels/gpu/elemwise.py).
#include "elementwise.cuh"
#include "opforge/functors/elemwise.h"

namespace opforge {
namespace cuda {

// y = op(x) as a bool byte: IsNan, IsFinite.
template <typename T, typename Op>
__global__ void UnaryPredicateKernel(const T* x, uint8_t* y, int64_t n, Op op) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = op(Load(x[i])) ? 1 : 0; }
}

// out = op(a, b, c), all of out's shape: GeLUGrad(dy, x, y).
template <typename T, typename Op>
__global__ void SameShapeTernaryKernel(const T* a, const T* b, const T* c, T* out, int64_t n, Op op) {
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = Store<T>(op(Load(a[i]), Load(b[i]), Load(c[i]))); }
}

}  // namespace cuda
}  // namespace opforge
