// Equal, NotEqual, Greater, GreaterEqual, Less, LessEqual with NumPy broadcasting: out = (x op y), a bool
// tensor. NaN equals nothing (NotEqual: true) and orders with nothing, -0.0 == 0.0.
#include <algorithm>
#include <type_traits>

#include "kernels/cpu/broadcast.h"
#include "opforge/functors/arithmetic.h"
#include "opforge/functors/elemwise.h"

namespace opforge {
namespace {

// bool tensors are read and written as bytes: a byte other than 0/1 in a C++ bool is UB.
template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// The value a comparison sees: bool as true/false, half types as float, the rest unchanged.
template <typename T>
auto Value(Storage<T> v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return Load(v);
  }
}

// out = Op(a, b) as a bool tensor, with NumPy broadcasting; the output shape is the inferred one.
template <typename T, typename Op>
class BroadcastCompareCpuKernel : public CpuKernel {
  using S = Storage<T>;

 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.input(1);
    const TensorMeta& out = ctx.output(0);
    OPF_CHECK(x.dtype == y.dtype, "For '" << ctx.op_name() << "', the inputs must have the same dtype, but got "
                                          << TypeIdName(x.dtype) << " and " << TypeIdName(y.dtype) << ".");
    OPF_CHECK(out.dtype == kNumberTypeBool,
              "For '" << ctx.op_name() << "', the output must be Bool, but got " << TypeIdName(out.dtype) << ".");
    plan_.Init(ctx.op_name(), x.shape, y.shape, out.shape);
  }

  void Launch(const KernelArgs& args) override {
    const S* a = args.input<S>(0);
    const S* b = args.input<S>(1);
    uint8_t* out = args.output<uint8_t>(0);
    const BroadcastPlan& p = plan_;
    switch (p.kind) {
      case BroadcastPlan::kSame:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          Run(a + begin, true, b + begin, true, out + begin, end - begin);
        });
        break;
      case BroadcastPlan::kScalarA:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          Run(a, false, b + begin, true, out + begin, end - begin);
        });
        break;
      case BroadcastPlan::kScalarB:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          Run(a + begin, true, b, false, out + begin, end - begin);
        });
        break;
      case BroadcastPlan::kGeneral:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          p.ForEachRun(begin, end, [&](int64_t o, int64_t ia, int64_t ib, int64_t n) {
            Run(a + ia, p.a_strides.back() != 0, b + ib, p.b_strides.back() != 0, out + o, n);
          });
        });
        break;
    }
  }

 private:
  // One contiguous output run; an input that does not move is a scalar for the whole run.
  static void Run(const S* a, bool a_moves, const S* b, bool b_moves, uint8_t* out, int64_t n) {
    const Op op{};
    if (a_moves && b_moves) {
      for (int64_t i = 0; i < n; ++i) out[i] = op(Value<T>(a[i]), Value<T>(b[i])) ? 1 : 0;
    } else if (a_moves) {
      const auto bv = Value<T>(b[0]);
      for (int64_t i = 0; i < n; ++i) out[i] = op(Value<T>(a[i]), bv) ? 1 : 0;
    } else if (b_moves) {
      const auto av = Value<T>(a[0]);
      for (int64_t i = 0; i < n; ++i) out[i] = op(av, Value<T>(b[i])) ? 1 : 0;
    } else {
      std::fill(out, out + n, static_cast<uint8_t>(op(Value<T>(a[0]), Value<T>(b[0])) ? 1 : 0));
    }
  }

  BroadcastPlan plan_;
};

#define REG_COMPARE(OP, FUNCTOR, T)                                                                       \
  MS_REG_CPU_KERNEL(OP,                                                                                   \
                    KernelAttr()                                                                          \
                        .AddInputAttr(TypeIdOf<T>::value)                                                 \
                        .AddInputAttr(TypeIdOf<T>::value)                                                 \
                        .AddOutputAttr(kNumberTypeBool),                                                  \
                    BroadcastCompareCpuKernel<T, FUNCTOR>)

REG_COMPARE(Equal, EqualOp, bool);
// int8 values are equal exactly when their bits are: int8 shares uint8's kernel.
MS_REG_CPU_KERNEL(Equal,
                  KernelAttr().AddInputAttr(kNumberTypeInt8).AddInputAttr(kNumberTypeInt8).AddOutputAttr(kNumberTypeBool),
                  BroadcastCompareCpuKernel<uint8_t, EqualOp>);
REG_COMPARE(Equal, EqualOp, int16_t);
REG_COMPARE(Equal, EqualOp, int32_t);
REG_COMPARE(Equal, EqualOp, int64_t);
REG_COMPARE(Equal, EqualOp, uint8_t);
REG_COMPARE(Equal, EqualOp, uint16_t);
REG_COMPARE(Equal, EqualOp, uint32_t);
REG_COMPARE(Equal, EqualOp, uint64_t);
REG_COMPARE(Equal, EqualOp, float16);
REG_COMPARE(Equal, EqualOp, bfloat16);
REG_COMPARE(Equal, EqualOp, float);
REG_COMPARE(Equal, EqualOp, double);
REG_COMPARE(Equal, EqualOp, complex64);
REG_COMPARE(Equal, EqualOp, complex128);

// bool, int8..int64, uint8..uint64 and the floats (functors: opforge/functors/elemwise.h).
#define REG_COMPARE_ALL(OP, FUNCTOR) \
  REG_COMPARE(OP, FUNCTOR, bool);     \
  REG_COMPARE(OP, FUNCTOR, int8_t);   \
  REG_COMPARE(OP, FUNCTOR, int16_t);  \
  REG_COMPARE(OP, FUNCTOR, int32_t);  \
  REG_COMPARE(OP, FUNCTOR, int64_t);  \
  REG_COMPARE(OP, FUNCTOR, uint8_t);  \
  REG_COMPARE(OP, FUNCTOR, uint16_t); \
  REG_COMPARE(OP, FUNCTOR, uint32_t); \
  REG_COMPARE(OP, FUNCTOR, uint64_t); \
  REG_COMPARE(OP, FUNCTOR, float16);  \
  REG_COMPARE(OP, FUNCTOR, bfloat16); \
  REG_COMPARE(OP, FUNCTOR, float);    \
  REG_COMPARE(OP, FUNCTOR, double)

REG_COMPARE_ALL(NotEqual, NotEqualOp);
REG_COMPARE(NotEqual, NotEqualOp, complex64);
REG_COMPARE(NotEqual, NotEqualOp, complex128);
REG_COMPARE_ALL(Greater, GreaterOp);
REG_COMPARE_ALL(GreaterEqual, GreaterEqualOp);
REG_COMPARE_ALL(Less, LessOp);
REG_COMPARE_ALL(LessEqual, LessEqualOp);

}  // namespace
}  // namespace opforge
