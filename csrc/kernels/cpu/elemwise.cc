// Abs, AbsGrad, Erf, Floor, Ceil, Round, Sign, IsNan, IsFinite, LogicalNot; GeLU, Softplus, HSigmoid, HSwish, ReLU6
// and their grads; Pow, Atan2, Div, FloorDiv, Mod, FloorMod, LogicalAnd, LogicalOr with NumPy
// broadcasting (math: opforge/functors/elemwise.h; the comparisons are in compare.cc).
#include <type_traits>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/elementwise_registration.h"
#include "opforge/functors/elemwise.h"

namespace opforge {
namespace {

// out = Op(x) as a bool tensor (bytes): IsNan, IsFinite.
template <typename T, typename Op>
class UnaryPredicateCpuKernel : public CpuKernel {
  using S = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    OPF_CHECK(y.shape == x.shape && y.dtype == kNumberTypeBool,
              "For '" << ctx.op_name() << "', the output must be Bool" << ShapeToString(x.shape) << ", but got "
                      << TypeIdName(y.dtype) << ShapeToString(y.shape) << ".");
    n_ = x.numel();
  }
  void Launch(const KernelArgs& args) override {
    const S* x = args.input<S>(0);
    uint8_t* y = args.output<uint8_t>(0);
    const Op op{};
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = op(Load(x[i])) ? 1 : 0;
    });
  }

 private:
  int64_t n_ = 0;
};

// x * x for a whole run, in the AVX2 and AVX-512 clones too.
template <typename T>
OPF_VECTOR_CLONES void SquareLoop(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
}

// Pow, with x ** 2 (one exponent of 2 for the whole tensor, the commonest power) as x * x, which is what
// pow(x, 2) is (NumPy takes the same shortcut): the general path's exp and log cost 5x PyTorch there.
template <typename T>
class PowCpuKernel : public BroadcastBinaryCpuKernel<T, PowOp> {
 public:
  void Launch(const KernelArgs& args) override {
    if constexpr (std::is_floating_point_v<T>) {
      if (this->plan_.kind == BroadcastPlan::kScalarB && args.input<T>(1)[0] == T(2)) {
        const T* x = args.input<T>(0);
        T* y = args.output<T>(0);
        ParallelForChunks(this->plan_.numel, kParallelGrain,
                          [&](int64_t begin, int64_t end) { SquareLoop(x + begin, y + begin, end - begin); });
        return;
      }
    }
    BroadcastBinaryCpuKernel<T, PowOp>::Launch(args);
  }
};

#define REG_POW(OP, FUNCTOR, T)                                                                           \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(OPF_ID(T)).AddInputAttr(OPF_ID(T)).AddOutputAttr(OPF_ID(T)), \
                    PowCpuKernel<T>)

// out = Op(a, b, c) for three same-shape inputs: GeLUGrad(dy, x, y).
template <typename T, typename Op>
class SameShapeTernaryCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    for (size_t i = 1; i < 3; ++i) {
      OPF_CHECK(ctx.input(i).shape == ctx.input(0).shape,
                "For '" << ctx.op_name() << "', the inputs must have the same shape, but got "
                        << ShapeToString(ctx.input(0).shape) << " and " << ShapeToString(ctx.input(i).shape) << ".");
    }
    CheckSameMeta(ctx, ctx.input(0), ctx.output(0), "output");
    n_ = ctx.input(0).numel();
  }
  void Launch(const KernelArgs& args) override {
    const T* a = args.input<T>(0);
    const T* b = args.input<T>(1);
    const T* c = args.input<T>(2);
    T* out = args.output<T>(0);
    const Op op{};
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = Store<T>(op(Load(a[i]), Load(b[i]), Load(c[i])));
    });
  }

 private:
  int64_t n_ = 0;
};

#define REG_PREDICATE(OP, FUNCTOR, T)                                                              \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(OPF_ID(T)).AddOutputAttr(kNumberTypeBool), \
                    UnaryPredicateCpuKernel<T, FUNCTOR>)
#define REG_SAME2(OP, FUNCTOR, T)                                                                         \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(OPF_ID(T)).AddInputAttr(OPF_ID(T)).AddOutputAttr(OPF_ID(T)), \
                    SameShapeBinaryCpuKernel<T, FUNCTOR>)
#define REG_SAME3(OP, FUNCTOR, T)                                                                        \
  MS_REG_CPU_KERNEL(                                                                                     \
      OP,                                                                                                \
      KernelAttr().AddInputAttr(OPF_ID(T)).AddInputAttr(OPF_ID(T)).AddInputAttr(OPF_ID(T)).AddOutputAttr( \
          OPF_ID(T)),                                                                                    \
      SameShapeTernaryCpuKernel<T, FUNCTOR>)
#define REG_INTS(REG, OP, FUNCTOR) \
  REG(OP, FUNCTOR, int8_t);        \
  REG(OP, FUNCTOR, int16_t);       \
  REG(OP, FUNCTOR, int32_t);       \
  REG(OP, FUNCTOR, int64_t);       \
  REG(OP, FUNCTOR, uint8_t)

// Unary math
REG_FLOATS(REG_UNARY, Abs, AbsOp);
REG_INTS(REG_UNARY, Abs, AbsOp);
REG_FLOATS(REG_SAME2, AbsGrad, AbsGradOp);
REG_FLOATS(REG_UNARY, Erf, ErfOp);
REG_FLOATS(REG_UNARY, Floor, FloorOp);
REG_FLOATS(REG_UNARY, Ceil, CeilOp);
REG_FLOATS(REG_UNARY, Round, RoundOp);
REG_UNARY(Round, RoundOp, int32_t);
REG_UNARY(Round, RoundOp, int64_t);
REG_FLOATS(REG_UNARY, Sign, SignOp);
REG_UNARY(Sign, SignOp, int32_t);
REG_UNARY(Sign, SignOp, int64_t);
REG_FLOATS(REG_PREDICATE, IsNan, IsNanOp);
REG_FLOATS(REG_PREDICATE, IsFinite, IsFiniteOp);
REG_INTS(REG_PREDICATE, IsFinite, IsFiniteOp);
REG_PREDICATE(IsFinite, IsFiniteOp, bool);
MS_REG_CPU_KERNEL(LogicalNot, KernelAttr().AddInputAttr(kNumberTypeBool).AddOutputAttr(kNumberTypeBool),
                  UnaryCpuKernel<uint8_t, LogicalNotOp>);

// Activations and their grads
REG_FLOATS(REG_UNARY, GeLU, GeLUOp);
REG_FLOATS(REG_SAME3, GeLUGrad, GeLUGradOp);
REG_FLOATS(REG_UNARY, Softplus, SoftplusOp);
REG_FLOATS(REG_SAME2, SoftplusGrad, SoftplusGradOp);
REG_FLOATS(REG_UNARY, HSigmoid, HSigmoidOp);
REG_FLOATS(REG_SAME2, HSigmoidGrad, HSigmoidGradOp);
REG_FLOATS(REG_UNARY, HSwish, HSwishOp);
REG_FLOATS(REG_SAME2, HSwishGrad, HSwishGradOp);
REG_FLOATS(REG_UNARY, ReLU6, ReLU6Op);
REG_FLOATS(REG_SAME2, ReLU6Grad, ReLU6GradOp);

// Binary arithmetic with broadcasting
REG_FLOATS(REG_POW, Pow, PowOp);
REG_INTS(REG_BROADCAST, Pow, PowOp);
REG_FLOATS(REG_BROADCAST, Atan2, Atan2Op);
REG_FLOATS(REG_BROADCAST, Div, DivideOp);
REG_INTS(REG_BROADCAST, Div, DivideOp);
REG_BROADCAST(Div, DivideOp, complex64);
REG_BROADCAST(Div, DivideOp, complex128);
REG_FLOATS(REG_BROADCAST, FloorDiv, FloorDivOp);
REG_INTS(REG_BROADCAST, FloorDiv, FloorDivOp);
REG_FLOATS(REG_BROADCAST, Mod, ModOp);
REG_INTS(REG_BROADCAST, Mod, ModOp);
REG_FLOATS(REG_BROADCAST, FloorMod, FloorModOp);
REG_INTS(REG_BROADCAST, FloorMod, FloorModOp);
MS_REG_CPU_KERNEL(LogicalAnd,
                  KernelAttr().AddInputAttr(kNumberTypeBool).AddInputAttr(kNumberTypeBool).AddOutputAttr(kNumberTypeBool),
                  BroadcastBinaryCpuKernel<uint8_t, LogicalAndOp>);
MS_REG_CPU_KERNEL(LogicalOr,
                  KernelAttr().AddInputAttr(kNumberTypeBool).AddInputAttr(kNumberTypeBool).AddOutputAttr(kNumberTypeBool),
                  BroadcastBinaryCpuKernel<uint8_t, LogicalOrOp>);

}  // namespace
}  // namespace opforge
