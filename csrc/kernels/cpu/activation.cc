// ReLU, Elu, Sigmoid, Tanh and their grads; Neg, Exp, Log.
#include <cmath>
#include <type_traits>

#include "kernels/cpu/elementwise.h"

namespace opforge {
namespace {

// max(x, 0), written so NaN propagates (NaN < 0 is false) as in NumPy.
struct ReluOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : x;
  }
};

struct EluOp {
  double alpha = 1.0;
  void Init(const KernelContext& ctx) { alpha = ctx.GetFloat("alpha"); }
  template <typename C>
  C operator()(C x) const {
    return x > C(0) ? x : static_cast<C>(alpha) * std::expm1(x);
  }
};

struct SigmoidOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    return C(1) / (C(1) + std::exp(-x));
  }
};

struct TanhOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    return std::tanh(x);
  }
};

// -x; for integers in unsigned arithmetic, so the minimum wraps to itself as in NumPy.
struct NegOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(WrapType<C>(0) - static_cast<WrapType<C>>(x));
    } else {
      return -x;
    }
  }
};

struct ExpOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    return std::exp(x);
  }
};

struct LogOp : NoAttrs {
  template <typename C>
  C operator()(C x) const {
    return std::log(x);
  }
};

// Grad functors take (dy, y): the forward output, as MindSpore's grad primitives do.
struct ReluGradOp : NoAttrs {
  template <typename C>
  C operator()(C dy, C y) const {
    return y > C(0) ? dy : C(0);
  }
};

// EluGrad(dy, y): dx = dy where y > 0, else dy * (y + alpha), since y = alpha * (exp(x) - 1).
struct EluGradOp {
  double alpha = 1.0;
  void Init(const KernelContext& ctx) { alpha = ctx.HasAttr("alpha") ? ctx.GetFloat("alpha") : 1.0; }
  template <typename C>
  C operator()(C dy, C y) const {
    return y > C(0) ? dy : dy * (y + static_cast<C>(alpha));
  }
};

struct SigmoidGradOp : NoAttrs {
  template <typename C>
  C operator()(C y, C dy) const {
    return dy * y * (C(1) - y);
  }
};

struct TanhGradOp : NoAttrs {
  template <typename C>
  C operator()(C y, C dy) const {
    return dy * (C(1) - y * y);
  }
};

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

REG_FLOATS(REG_BINARY_SAME, ReluGrad, ReluGradOp);
REG_FLOATS(REG_BINARY_SAME, EluGrad, EluGradOp);
REG_FLOATS(REG_BINARY_SAME, SigmoidGrad, SigmoidGradOp);
REG_FLOATS(REG_BINARY_SAME, TanhGrad, TanhGradOp);

}  // namespace
}  // namespace opforge
