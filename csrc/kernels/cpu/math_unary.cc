// Square (y = x * x), Sqrt (y = sqrt(x)), SqrtGrad(y, dy) = dy / (2 y); Sin, Cos, Log1p, Expm1,
// Reciprocal, Rsqrt (math: opforge/functors/arithmetic.h).
#include "kernels/cpu/elementwise.h"
#include "opforge/functors/arithmetic.h"

namespace opforge {
namespace {

#define REG_UNARY(OP, FUNCTOR, T)                                                                         \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(TypeIdOf<T>::value).AddOutputAttr(TypeIdOf<T>::value), \
                    UnaryCpuKernel<T, FUNCTOR>)
#define REG_BINARY_SAME(OP, FUNCTOR, T)                  \
  MS_REG_CPU_KERNEL(OP,                                  \
                    KernelAttr()                         \
                        .AddInputAttr(TypeIdOf<T>::value)  \
                        .AddInputAttr(TypeIdOf<T>::value)  \
                        .AddOutputAttr(TypeIdOf<T>::value), \
                    SameShapeBinaryCpuKernel<T, FUNCTOR>)
#define REG_FLOATS(REG, OP, FUNCTOR) \
  REG(OP, FUNCTOR, float16);         \
  REG(OP, FUNCTOR, bfloat16);        \
  REG(OP, FUNCTOR, float);           \
  REG(OP, FUNCTOR, double)

REG_FLOATS(REG_UNARY, Square, SquareOp);
REG_UNARY(Square, SquareOp, int32_t);
REG_UNARY(Square, SquareOp, int64_t);
REG_FLOATS(REG_UNARY, Sqrt, SqrtOp);
REG_FLOATS(REG_BINARY_SAME, SqrtGrad, SqrtGradOp);
REG_FLOATS(REG_UNARY, Sin, SinOp);
REG_FLOATS(REG_UNARY, Cos, CosOp);
REG_FLOATS(REG_UNARY, Log1p, Log1pOp);
REG_FLOATS(REG_UNARY, Expm1, Expm1Op);
REG_FLOATS(REG_UNARY, Reciprocal, ReciprocalOp);
REG_FLOATS(REG_UNARY, Rsqrt, RsqrtOp);

}  // namespace
}  // namespace opforge
