// Square (y = x * x), Sqrt (y = sqrt(x)), SqrtGrad(y, dy) = dy / (2 y); Sin, Cos, Log1p, Expm1,
// Reciprocal, Rsqrt; complex64/complex128 Square, Sqrt, Sin, Cos, Conj, Abs (math:
// opforge/functors/arithmetic.h, opforge/complex.h).
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

// complex64 / complex128 (opforge/complex.h).
#define REG_COMPLEX(REG, OP, FUNCTOR) \
  REG(OP, FUNCTOR, complex64);        \
  REG(OP, FUNCTOR, complex128)
REG_COMPLEX(REG_UNARY, Square, SquareOp);
REG_COMPLEX(REG_UNARY, Sqrt, SqrtOp);
REG_COMPLEX(REG_UNARY, Sin, SinOp);
REG_COMPLEX(REG_UNARY, Cos, CosOp);
// Conj: y = conj(x); a real tensor is its own conjugate.
REG_COMPLEX(REG_UNARY, Conj, ConjOp);
REG_FLOATS(REG_UNARY, Conj, ConjOp);
REG_UNARY(Conj, ConjOp, int32_t);
REG_UNARY(Conj, ConjOp, int64_t);
// Abs of a complex tensor is its real dtype: |z| = hypot(re, im) (the real Abs is in elemwise.cc).
MS_REG_CPU_KERNEL(Abs, KernelAttr().AddInputAttr(kNumberTypeComplex64).AddOutputAttr(kNumberTypeFloat32),
                  UnaryToCpuKernel<complex64, float, ComplexAbsOp>);
MS_REG_CPU_KERNEL(Abs, KernelAttr().AddInputAttr(kNumberTypeComplex128).AddOutputAttr(kNumberTypeFloat64),
                  UnaryToCpuKernel<complex128, double, ComplexAbsOp>);

}  // namespace
}  // namespace opforge
