// Add, Sub, Mul, RealDiv with NumPy broadcasting: out = x + y, x - y, x * y, x / y (real and complex).
#include "kernels/cpu/broadcast.h"

namespace opforge {
namespace {

#define REG_BINARY(OP, FUNCTOR, T, ID)                                                      \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    BroadcastBinaryCpuKernel<T, FUNCTOR>)
#define REG_FLOATS(OP, FUNCTOR)                           \
  REG_BINARY(OP, FUNCTOR, float16, kNumberTypeFloat16);   \
  REG_BINARY(OP, FUNCTOR, bfloat16, kNumberTypeBFloat16); \
  REG_BINARY(OP, FUNCTOR, float, kNumberTypeFloat32);     \
  REG_BINARY(OP, FUNCTOR, double, kNumberTypeFloat64)
// Integer arithmetic wraps around like NumPy's (see WrapType). Wrapped + - * give the same bits for
// int8 and uint8, so int8 shares uint8's kernels. uint16..uint64 as MindSpore's CPU registers them.
#define REG_INTS(OP, FUNCTOR)                          \
  REG_BINARY(OP, FUNCTOR, uint8_t, kNumberTypeInt8);  \
  REG_BINARY(OP, FUNCTOR, int16_t, kNumberTypeInt16); \
  REG_BINARY(OP, FUNCTOR, int32_t, kNumberTypeInt32); \
  REG_BINARY(OP, FUNCTOR, int64_t, kNumberTypeInt64); \
  REG_BINARY(OP, FUNCTOR, uint8_t, kNumberTypeUInt8);  \
  REG_BINARY(OP, FUNCTOR, uint16_t, kNumberTypeUInt16); \
  REG_BINARY(OP, FUNCTOR, uint32_t, kNumberTypeUInt32); \
  REG_BINARY(OP, FUNCTOR, uint64_t, kNumberTypeUInt64)

REG_FLOATS(Add, AddOp);
REG_INTS(Add, AddOp);
REG_FLOATS(Sub, SubOp);
REG_INTS(Sub, SubOp);
REG_FLOATS(Mul, MulOp);
REG_INTS(Mul, MulOp);
REG_FLOATS(RealDiv, DivOp);
// complex64 / complex128 (opforge/complex.h: NumPy's product and Smith's division).
#define REG_COMPLEX(OP, FUNCTOR)                              \
  REG_BINARY(OP, FUNCTOR, complex64, kNumberTypeComplex64); \
  REG_BINARY(OP, FUNCTOR, complex128, kNumberTypeComplex128)
REG_COMPLEX(Add, AddOp);
REG_COMPLEX(Sub, SubOp);
REG_COMPLEX(Mul, MulOp);
REG_COMPLEX(RealDiv, DivOp);

}  // namespace
}  // namespace opforge
