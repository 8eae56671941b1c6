// AddN(inputs): the element-wise sum of a tuple of tensors of one shape and dtype (functors/add_n.h).
#include <algorithm>
#include <vector>

#include "opforge/functors/add_n.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename T>
class AddNCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& out = ctx.output(0);
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      OPF_CHECK(ctx.input(i).shape == out.shape && ctx.input(i).dtype == out.dtype,
                "For '" << ctx.op_name() << "', every input must be " << TypeIdName(out.dtype)
                        << ShapeToString(out.shape) << ", but input " << i << " is " << TypeIdName(ctx.input(i).dtype)
                        << ShapeToString(ctx.input(i).shape) << ".");
    }
    n_ = out.numel();
    k_ = static_cast<int64_t>(ctx.num_inputs());
  }

  void Launch(const KernelArgs& args) override {
    std::vector<const T*> xs(static_cast<size_t>(k_));
    for (int64_t j = 0; j < k_; ++j) xs[j] = args.input<T>(static_cast<int32_t>(j));
    T* out = args.output<T>(0);
    const T* const* p = xs.data();
    const int64_t k = k_;
    ParallelForChunks(n_, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, k_)), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = AddNAt(p, k, i);
    });
  }

 private:
  int64_t n_ = 0, k_ = 0;
};

#define REG_ADDN(T, ID) \
  MS_REG_CPU_KERNEL(AddN, KernelAttr().AddAllSameAttr(true).AddInputAttr(ID).AddOutputAttr(ID), AddNCpuKernel<T>)

REG_ADDN(float16, kNumberTypeFloat16);
REG_ADDN(bfloat16, kNumberTypeBFloat16);
REG_ADDN(float, kNumberTypeFloat32);
REG_ADDN(double, kNumberTypeFloat64);
REG_ADDN(uint8_t, kNumberTypeInt8);  // int8 wraps as uint8 (Add's convention)
REG_ADDN(int16_t, kNumberTypeInt16);
REG_ADDN(int32_t, kNumberTypeInt32);
REG_ADDN(int64_t, kNumberTypeInt64);
REG_ADDN(uint8_t, kNumberTypeUInt8);

}  // namespace
}  // namespace opforge
