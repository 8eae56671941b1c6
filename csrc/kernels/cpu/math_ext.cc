// Sinh, Cosh, Tan, Asin, Acos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv, Lgamma, Digamma, Erfinv; Invert, BitwiseAnd,
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
