// Square (y = x * x), Sqrt (y = sqrt(x)) and SqrtGrad(y, dy) = dy / (2 y).
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

}  // namespace
}  // namespace opforge
