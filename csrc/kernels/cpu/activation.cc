// ReLU, Elu, Sigmoid, Tanh and their grads; Neg, Exp, Log (math: opforge/functors/activation.h).
#include "kernels/cpu/elementwise.h"
#include "opforge/functors/activation.h"

namespace opforge {

template <>
struct FunctorFrom<EluOp> {
  static EluOp Read(const KernelContext& ctx) { return EluOp{ctx.GetFloat("alpha")}; }
};

template <>
struct FunctorFrom<EluGradOp> {
  static EluGradOp Read(const KernelContext& ctx) {
    return EluGradOp{ctx.HasAttr("alpha") ? ctx.GetFloat("alpha") : 1.0};
  }
};

namespace {

#define REG_UNARY(OP, FUNCTOR, T, ID) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), UnaryCpuKernel<T, FUNCTOR>)
#define REG_BINARY_SAME(OP, FUNCTOR, T, ID)                                                 \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    SameShapeBinaryCpuKernel<T, FUNCTOR>)
#define REG_FLOATS(REG, OP, FUNCTOR)                \
  REG(OP, FUNCTOR, float16, kNumberTypeFloat16);   \
  REG(OP, FUNCTOR, bfloat16, kNumberTypeBFloat16); \
  REG(OP, FUNCTOR, float, kNumberTypeFloat32);     \
  REG(OP, FUNCTOR, double, kNumberTypeFloat64)
#define REG_SIGNED_INTS(REG, OP, FUNCTOR)      \
  REG(OP, FUNCTOR, int32_t, kNumberTypeInt32); \
  REG(OP, FUNCTOR, int64_t, kNumberTypeInt64)

REG_FLOATS(REG_UNARY, ReLU, ReluOp);
REG_SIGNED_INTS(REG_UNARY, ReLU, ReluOp);
REG_FLOATS(REG_UNARY, Elu, EluOp);
REG_FLOATS(REG_UNARY, Sigmoid, SigmoidOp);
REG_FLOATS(REG_UNARY, Tanh, TanhOp);
REG_FLOATS(REG_UNARY, Neg, NegOp);
REG_SIGNED_INTS(REG_UNARY, Neg, NegOp);
REG_FLOATS(REG_UNARY, Exp, ExpOp);
REG_FLOATS(REG_UNARY, Log, LogOp);
// complex64 / complex128 (opforge/complex.h).
#define REG_COMPLEX(REG, OP, FUNCTOR)                    \
  REG(OP, FUNCTOR, complex64, kNumberTypeComplex64); \
  REG(OP, FUNCTOR, complex128, kNumberTypeComplex128)
REG_COMPLEX(REG_UNARY, Tanh, TanhOp);
REG_COMPLEX(REG_UNARY, Neg, NegOp);
REG_COMPLEX(REG_UNARY, Exp, ExpOp);
REG_COMPLEX(REG_UNARY, Log, LogOp);

REG_FLOATS(REG_BINARY_SAME, ReluGrad, ReluGradOp);
REG_FLOATS(REG_BINARY_SAME, EluGrad, EluGradOp);
REG_FLOATS(REG_BINARY_SAME, SigmoidGrad, SigmoidGradOp);
REG_FLOATS(REG_BINARY_SAME, TanhGrad, TanhGradOp);

}  // namespace
}  // namespace opforge
