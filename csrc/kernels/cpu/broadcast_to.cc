// BroadcastTo(shape)(x): x repeated along its size-1 (and missing leading) dims to the output's shape,
// as np.broadcast_to. The attr "shape" (with -1 for "keep the input's dim") is resolved by the
// primitive; the kernel works from the output meta. Elements are copied as raw bytes of their size.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/broadcast.h"

namespace opforge {
namespace {

struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

template <typename E>
class BroadcastToCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    OPF_CHECK(x.dtype == y.dtype, "For '" << ctx.op_name() << "', the output must have the input's dtype "
                                          << TypeIdName(x.dtype) << ", but got " << TypeIdName(y.dtype) << ".");
    OPF_CHECK(TypeIdSize(x.dtype) == static_cast<int64_t>(sizeof(E)),
              "For '" << ctx.op_name() << "', the kernel copies " << sizeof(E) << "-byte elements, but got "
                      << TypeIdName(x.dtype) << ".");
    // The output plays both operands: its own strides are contiguous, x's are 0 on broadcast dims.
    plan_.Init(ctx.op_name(), x.shape, y.shape, y.shape);
  }

  void Launch(const KernelArgs& args) override {
    const E* x = args.input<E>(0);
    E* y = args.output<E>(0);
    const BroadcastPlan& p = plan_;
    switch (p.kind) {
      case BroadcastPlan::kSame:  // as many elements as the output: the same data
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          std::memcpy(y + begin, x + begin, static_cast<size_t>(end - begin) * sizeof(E));
        });
        break;
      case BroadcastPlan::kScalarA:  // one element everywhere
        ParallelForChunks(p.numel, kParallelGrain,
                    [&](int64_t begin, int64_t end) { std::fill(y + begin, y + end, x[0]); });
        break;
      case BroadcastPlan::kScalarB:  // cannot happen: the second operand is the output itself
      case BroadcastPlan::kGeneral:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          const bool moves = p.a_strides.back() != 0;
          p.ForEachRun(begin, end, [&](int64_t o, int64_t ix, int64_t, int64_t n) {
            if (moves) {
              std::memcpy(y + o, x + ix, static_cast<size_t>(n) * sizeof(E));
            } else {
              std::fill(y + o, y + o + n, x[ix]);
            }
          });
        });
        break;
    }
  }

 private:
  BroadcastPlan plan_;
};

#define REG_BROADCAST_TO(ID, E) \
  MS_REG_CPU_KERNEL(BroadcastTo, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), BroadcastToCpuKernel<E>)

REG_BROADCAST_TO(kNumberTypeBool, uint8_t);
REG_BROADCAST_TO(kNumberTypeInt8, uint8_t);
REG_BROADCAST_TO(kNumberTypeInt16, uint16_t);
REG_BROADCAST_TO(kNumberTypeInt32, uint32_t);
REG_BROADCAST_TO(kNumberTypeInt64, uint64_t);
REG_BROADCAST_TO(kNumberTypeUInt8, uint8_t);
REG_BROADCAST_TO(kNumberTypeUInt16, uint16_t);
REG_BROADCAST_TO(kNumberTypeUInt32, uint32_t);
REG_BROADCAST_TO(kNumberTypeUInt64, uint64_t);
REG_BROADCAST_TO(kNumberTypeFloat16, uint16_t);
REG_BROADCAST_TO(kNumberTypeBFloat16, uint16_t);
REG_BROADCAST_TO(kNumberTypeFloat32, uint32_t);
REG_BROADCAST_TO(kNumberTypeFloat64, uint64_t);
REG_BROADCAST_TO(kNumberTypeComplex64, uint64_t);
REG_BROADCAST_TO(kNumberTypeComplex128, Bytes16);

}  // namespace
}  // namespace opforge
