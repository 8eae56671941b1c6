// OneHot(axis)(indices, depth, on_value, off_value): a new dim of size depth at `axis` (-1: last);
// out[..., d, ...] = on_value where indices[...] == d, else off_value. An index outside [0, depth) gives
// an all-off row, as in MindSpore. on_value and off_value are 0-d tensors of the output dtype.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename I, typename T>
class OneHotCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const TensorMeta& indices = ctx.input(0);
    for (size_t i = 1; i < 3; ++i) {
      const TensorMeta& v = ctx.input(i);
      OPF_CHECK(v.numel() == 1 && v.dtype == ctx.output(0).dtype,
                "For '" << op << "', the '" << (i == 1 ? "on_value" : "off_value") << "' must be a 0-d tensor of "
                        << TypeIdName(ctx.output(0).dtype) << ", but got " << TypeIdName(v.dtype)
                        << ShapeToString(v.shape) << ".");
    }
    depth_ = ctx.GetInt("depth");
    OPF_CHECK(depth_ >= 0, "For '" << op << "', the 'depth' must be >= 0, but got " << depth_ << ".");
    const int64_t nd = indices.ndim();
    int64_t axis = ctx.HasAttr("axis") ? ctx.GetInt("axis") : -1;
    OPF_CHECK(axis >= -1 && axis <= nd, "For '" << op << "', the 'axis' must be in [-1, " << nd << "] for indices "
                                                << ShapeToString(indices.shape) << ", but got " << axis << ".");
    if (axis == -1) axis = nd;
    std::vector<int64_t> want(indices.shape.begin(), indices.shape.begin() + axis);
    want.push_back(depth_);
    want.insert(want.end(), indices.shape.begin() + axis, indices.shape.end());
    OPF_CHECK(ctx.output(0).shape == want, "For '" << op << "', the output shape must be " << ShapeToString(want)
                                                   << ", but got " << ShapeToString(ctx.output(0).shape) << ".");
    outer_ = 1;
    inner_ = 1;
    for (int64_t d = 0; d < nd; ++d) (d < axis ? outer_ : inner_) *= indices.shape[d];
  }

  void Launch(const KernelArgs& args) override {
    const I* ind = args.input<I>(0);
    const T on = args.input<T>(1)[0];
    const T off = args.input<T>(2)[0];
    T* out = args.output<T>(0);
    const int64_t depth = depth_, inner = inner_;
    // One row of `inner` outputs per (outer position, depth value).
    const int64_t rows = outer_ * depth;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, inner));
    if (inner == 0) return;
    ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / depth, d = r % depth;
        const I* src = ind + o * inner;
        T* dst = out + r * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = static_cast<int64_t>(src[i]) == d ? on : off;
      }
    });
  }

 private:
  int64_t depth_ = 0, outer_ = 1, inner_ = 1;
};

// The values are only copied, so dtypes of one size share a kernel that moves them as unsigned integers.
template <typename T>
using ValueBits = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

#define REG_ONE_HOT(I, T, IID, TID)                                                                               \
  MS_REG_CPU_KERNEL(OneHot, KernelAttr().AddInputAttr(IID).AddInputAttr(TID).AddInputAttr(TID).AddOutputAttr(TID), \
                    OneHotCpuKernel<I, ValueBits<T>>)
#define REG_ONE_HOT_VALUES(I, IID)                                 \
  REG_ONE_HOT(I, float16, IID, kNumberTypeFloat16);                \
  REG_ONE_HOT(I, float, IID, kNumberTypeFloat32);                  \
  REG_ONE_HOT(I, double, IID, kNumberTypeFloat64);                 \
  REG_ONE_HOT(I, int32_t, IID, kNumberTypeInt32);                  \
  REG_ONE_HOT(I, int64_t, IID, kNumberTypeInt64)

REG_ONE_HOT_VALUES(int32_t, kNumberTypeInt32);
REG_ONE_HOT_VALUES(int64_t, kNumberTypeInt64);

}  // namespace
}  // namespace opforge
