// SeLU, CeLU, Softsign, HShrink, SoftShrink, Mish (math: opforge/functors/nn_activation.h); their
// gradients are composed of other primitives (opforge/bprop/grad_nn_activation_ops.py).
#include "kernels/cpu/elementwise_registration.h"
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


REG_FLOATS(REG_UNARY, SeLU, SeLUOp);
REG_FLOATS(REG_UNARY, CeLU, CeLUOp);
REG_FLOATS(REG_UNARY, Softsign, SoftsignOp);
REG_FLOATS(REG_UNARY, HShrink, HShrinkOp);
REG_FLOATS(REG_UNARY, SoftShrink, SoftShrinkOp);
REG_FLOATS(REG_UNARY, Mish, MishOp);

}  // namespace
}  // namespace opforge
