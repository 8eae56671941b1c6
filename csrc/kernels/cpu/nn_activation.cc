// SeLU, CeLU, Softsign, HShrink, SoftShrink, Mish (math: opforge/functors/nn_activation.h); their
// gradients are composed of other primitives (opforge/bprop/grad_nn_activation_ops.py).
#include "kernels/cpu/elementwise.h"
#include "opforge/functors/nn_activation.h"

namespace opforge {

template <>
struct FunctorFrom<CeLUOp> {
  static CeLUOp Read(const KernelContext& ctx) { return CeLUOp{ctx.GetFloat("alpha")}; }
};

template <>
struct FunctorFrom<HShrinkOp> {
  static HShrinkOp Read(const KernelContext& ctx) { return HShrinkOp{ctx.GetFloat("lambd")}; }
};

template <>
struct FunctorFrom<SoftShrinkOp> {
  static SoftShrinkOp Read(const KernelContext& ctx) { return SoftShrinkOp{ctx.GetFloat("lambd")}; }
};

namespace {

#define REG_UNARY(OP, FUNCTOR, T, ID) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), UnaryCpuKernel<T, FUNCTOR>)
#define REG_FLOATS(OP, FUNCTOR)                          \
  REG_UNARY(OP, FUNCTOR, float16, kNumberTypeFloat16);   \
  REG_UNARY(OP, FUNCTOR, bfloat16, kNumberTypeBFloat16); \
  REG_UNARY(OP, FUNCTOR, float, kNumberTypeFloat32);     \
  REG_UNARY(OP, FUNCTOR, double, kNumberTypeFloat64)

REG_FLOATS(SeLU, SeLUOp);
REG_FLOATS(CeLU, CeLUOp);
REG_FLOATS(Softsign, SoftsignOp);
REG_FLOATS(HShrink, HShrinkOp);
REG_FLOATS(SoftShrink, SoftShrinkOp);
REG_FLOATS(Mish, MishOp);

}  // namespace
}  // namespace opforge
