// Range(start, limit, delta): out[i] = start + i * delta for i < ceil((limit - start) / delta) (the
// primitive worked out the length; functors/range.h).
#include "opforge/functors/range.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename T>
class RangeCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    using A = typename RangeOp<T>::A;
    if constexpr (IsIntegral<T>::value) {
      op_.start = static_cast<A>(ctx.GetInt("start"));
      op_.delta = static_cast<A>(ctx.GetInt("delta"));
    } else {
      op_.start = static_cast<A>(ctx.GetFloat("start"));
      op_.delta = static_cast<A>(ctx.GetFloat("delta"));
    }
    OPF_CHECK(ctx.output(0).ndim() == 1, "For '" << ctx.op_name() << "', the output must be 1-D.");
    n_ = ctx.output(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    T* out = args.output<T>(0);
    const RangeOp<T> op = op_;
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = op(i);
    });
  }

 private:
  RangeOp<T> op_{};
  int64_t n_ = 0;
};

MS_REG_CPU_KERNEL(Range, KernelAttr().AddOutputAttr(kNumberTypeInt64), RangeCpuKernel<int64_t>);
MS_REG_CPU_KERNEL(Range, KernelAttr().AddOutputAttr(kNumberTypeFloat32), RangeCpuKernel<float>);

}  // namespace
}  // namespace opforge
