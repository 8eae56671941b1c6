// Sort(axis, descending)(x) -> (values, indices) and TopK(sorted)(x, k) -> (values, indices) along the last
// dim; indices int32. The order is functors/sort.h (NaN greatest, ties by index), shared with the GPU.
#include <algorithm>
#include <numeric>
#include <vector>

#include "opforge/functors/sort.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename T>
class SortCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const auto& x = ctx.input(0).shape;
    const int64_t nd = static_cast<int64_t>(x.size());
    topk_ = op == "TopK";
    int64_t axis = topk_ ? nd - 1 : ctx.GetInt("axis");
    OPF_CHECK(nd >= 1, "For '" << op << "', the input must have at least 1 dim.");
    OPF_CHECK(axis >= -nd && axis < nd, "For '" << op << "', the 'axis' must be in [" << -nd << ", " << nd
                                                << "), but got " << axis << ".");
    if (axis < 0) axis += nd;
    descending_ = topk_ || ctx.GetBool("descending");
    n_ = x[axis];
    outer_ = 1;
    inner_ = 1;
    for (int64_t d = 0; d < axis; ++d) outer_ *= x[d];
    for (int64_t d = axis + 1; d < nd; ++d) inner_ *= x[d];
    k_ = topk_ ? ctx.GetInt("k") : n_;
    OPF_CHECK(k_ >= 0 && k_ <= n_, "For '" << op << "', the 'k' must be in [0, " << n_ << "], but got " << k_ << ".");
    OPF_CHECK(n_ <= INT32_MAX, "For '" << op << "', the sorted dim must fit int32 indices.");
    std::vector<int64_t> want = x;
    want[axis] = k_;
    OPF_CHECK(ctx.output(0).shape == want && ctx.output(1).shape == want,
              "For '" << op << "', the outputs must have shape " << ShapeToString(want) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* values = args.output<T>(0);
    int32_t* indices = args.output<int32_t>(1);
    const int64_t rows = outer_ * inner_, n = n_, k = k_, inner = inner_;
    const bool desc = descending_;
    if (rows == 0 || k == 0) return;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n));
    ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / inner, c = r % inner;
        const T* row = x + o * n * inner + c;
        std::iota(order.begin(), order.end(), int64_t{0});
        auto before = [&](int64_t a, int64_t b) { return SortsBefore(row[a * inner], a, row[b * inner], b, desc); };
        if (k < n) {
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        } else {
          std::sort(order.begin(), order.end(), before);
        }
        const int64_t base = o * k * inner + c;
        for (int64_t j = 0; j < k; ++j) {
          values[base + j * inner] = row[order[j] * inner];
          indices[base + j * inner] = static_cast<int32_t>(order[j]);
        }
      }
    });
  }

 private:
  bool topk_ = false, descending_ = false;
  int64_t n_ = 0, outer_ = 0, inner_ = 0, k_ = 0;
};

#define REG_SORT(T, ID)                                                                                  \
  MS_REG_CPU_KERNEL(Sort, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt32), \
                    SortCpuKernel<T>);                                                                   \
  MS_REG_CPU_KERNEL(TopK, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt32), \
                    SortCpuKernel<T>)

REG_SORT(float16, kNumberTypeFloat16);
REG_SORT(bfloat16, kNumberTypeBFloat16);
REG_SORT(float, kNumberTypeFloat32);
REG_SORT(double, kNumberTypeFloat64);
REG_SORT(int8_t, kNumberTypeInt8);
REG_SORT(int16_t, kNumberTypeInt16);
REG_SORT(int32_t, kNumberTypeInt32);
REG_SORT(int64_t, kNumberTypeInt64);
REG_SORT(uint8_t, kNumberTypeUInt8);

}  // namespace
}  // namespace opforge
