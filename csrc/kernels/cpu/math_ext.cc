// Sinh, Cosh, Tan, Asin, Acos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv, Lgamma, Digamma, Erfinv,
// Polygamma(a, x) (the order a a 0-d int tensor); Invert, BitwiseAnd,
// BitwiseOr, BitwiseXor; SquaredDifference, Xdivy, Xlogy, DivNoNan, LogicalXor with NumPy broadcasting
// (math: opforge/functors/math_ext.h).
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/elementwise_registration.h"
#include "opforge/functors/math_ext.h"

namespace opforge {
namespace {

// Every integer type, signed and unsigned (the bitwise operators).
#define REG_ALL_INTS(REG, OP, FUNCTOR) \
  REG(OP, FUNCTOR, int8_t);            \
  REG(OP, FUNCTOR, int16_t);           \
  REG(OP, FUNCTOR, int32_t);           \
  REG(OP, FUNCTOR, int64_t);           \
  REG(OP, FUNCTOR, uint8_t);           \
  REG(OP, FUNCTOR, uint16_t);          \
  REG(OP, FUNCTOR, uint32_t);          \
  REG(OP, FUNCTOR, uint64_t)

// Polygamma(a, x): psi^(a)(x) elementwise, the order a read from its 0-d tensor (a >= 0, checked), in double.
template <typename T, typename I>
class PolygammaCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    OPF_CHECK(ctx.input(0).numel() == 1, "For '" << op_ << "', the 'a' must hold one order, but got shape "
                                                 << ShapeToString(ctx.input(0).shape) << ".");
    n_ = ctx.input(1).numel();
  }

  void Launch(const KernelArgs& args) override {
    const int64_t order = static_cast<int64_t>(args.input<I>(0)[0]);
    OPF_CHECK(order >= 0, "For '" << op_ << "', the order 'a' must be >= 0, but got " << order << ".");
    const T* x = args.input<T>(1);
    T* y = args.output<T>(0);
    ParallelFor(n_, kParallelGrain / 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = Store<T>(PolygammaAt(order, static_cast<double>(Load(x[i]))));
    });
  }

 private:
  std::string op_;
  int64_t n_ = 0;
};

#define REG_POLYGAMMA(T, ID)                                                                                    \
  MS_REG_CPU_KERNEL(Polygamma, KernelAttr().AddInputAttr(kNumberTypeInt32).AddInputAttr(ID).AddOutputAttr(ID), \
                    PolygammaCpuKernel<T, int32_t>);                                                           \
  MS_REG_CPU_KERNEL(Polygamma, KernelAttr().AddInputAttr(kNumberTypeInt64).AddInputAttr(ID).AddOutputAttr(ID), \
                    PolygammaCpuKernel<T, int64_t>)

REG_POLYGAMMA(float16, kNumberTypeFloat16);
REG_POLYGAMMA(float, kNumberTypeFloat32);
REG_POLYGAMMA(double, kNumberTypeFloat64);

// Unary math
REG_FLOATS(REG_UNARY, Sinh, SinhOp);
REG_FLOATS(REG_UNARY, Cosh, CoshOp);
REG_FLOATS(REG_UNARY, Tan, TanOp);
REG_FLOATS(REG_UNARY, Asin, AsinOp);
REG_FLOATS(REG_UNARY, ACos, AcosOp);
REG_FLOATS(REG_UNARY, Atan, AtanOp);
REG_FLOATS(REG_UNARY, Asinh, AsinhOp);
REG_FLOATS(REG_UNARY, Acosh, AcoshOp);
REG_FLOATS(REG_UNARY, Atanh, AtanhOp);
REG_FLOATS(REG_UNARY, Erfc, ErfcOp);
REG_FLOATS(REG_UNARY, Rint, RintOp);
REG_FLOATS(REG_UNARY, Trunc, TruncOp);
REG_UNARY(Trunc, TruncOp, int8_t);
REG_UNARY(Trunc, TruncOp, int32_t);
REG_UNARY(Trunc, TruncOp, uint8_t);
REG_FLOATS(REG_UNARY, Inv, InvOp);
REG_FLOATS(REG_UNARY, Lgamma, LgammaOp);
REG_FLOATS(REG_UNARY, Digamma, DigammaOp);
REG_FLOATS(REG_UNARY, Erfinv, ErfinvOp);

// Bitwise
REG_ALL_INTS(REG_UNARY, Invert, InvertOp);
REG_ALL_INTS(REG_BROADCAST, BitwiseAnd, BitwiseAndOp);
REG_ALL_INTS(REG_BROADCAST, BitwiseOr, BitwiseOrOp);
REG_ALL_INTS(REG_BROADCAST, BitwiseXor, BitwiseXorOp);

// Binary arithmetic with broadcasting
REG_FLOATS(REG_BROADCAST, SquaredDifference, SquaredDifferenceOp);
REG_BROADCAST(SquaredDifference, SquaredDifferenceOp, int32_t);
REG_BROADCAST(SquaredDifference, SquaredDifferenceOp, int64_t);
REG_FLOATS(REG_BROADCAST, Xdivy, XdivyOp);
REG_FLOATS(REG_BROADCAST, Xlogy, XlogyOp);
REG_FLOATS(REG_BROADCAST, DivNoNan, DivNoNanOp);
MS_REG_CPU_KERNEL(LogicalXor,
                  KernelAttr().AddInputAttr(kNumberTypeBool).AddInputAttr(kNumberTypeBool).AddOutputAttr(kNumberTypeBool),
                  BroadcastBinaryCpuKernel<uint8_t, LogicalXorOp>);

}  // namespace
}  // namespace opforge
