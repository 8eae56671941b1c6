// Square (y = x * x), Sqrt (y = sqrt(x)) and SqrtGrad(y, dy) = dy / (2 y).
#include <cmath>
#include <type_traits>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/elementwise.h"

namespace opforge {
namespace {

// Integers wrap modulo 2^bits as in NumPy (through WrapType: signed overflow is UB in C++).
struct SquareOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      const WrapType<C> u = static_cast<WrapType<C>>(x);
      return static_cast<C>(u * u);
    } else {
      return x * x;
    }
  }
};

// NaN for x < 0, as in NumPy.
struct SqrtOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    return std::sqrt(x);
  }
};

// y is Sqrt's output: d sqrt(x) / dx = 1 / (2 sqrt(x)).
struct SqrtGradOp : NoAttrs {
  template <typename C>
  C operator()(C y, C dy) const {
    return dy / (C(2) * y);
  }
};

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
