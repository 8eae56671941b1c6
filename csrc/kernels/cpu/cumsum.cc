// CumSum(exclusive, reverse)(x, axis) and Dropout(keep_prob, Seed0, Seed1)(x) -> (output, mask),
// DropoutGrad(keep_prob)(dy, mask), with the math of opforge/functors/scan.h and random.h (shared with
// csrc/kernels/cuda/cumsum.cu and dropout.cu).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/functors/random.h"
#include "opforge/functors/scan.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename T>
class CumSumCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const TensorMeta& x = ctx.input(0);
    OPF_CHECK(ctx.output(0).shape == x.shape, "For '" << op << "', the output shape must be "
                                                      << ShapeToString(x.shape) << ", but got "
                                                      << ShapeToString(ctx.output(0).shape) << ".");
    const int64_t nd = x.ndim(), range = std::max<int64_t>(nd, 1);
    std::vector<int64_t> axes = ctx.GetInts("axis");
    OPF_CHECK(axes.size() == 1, "For '" << op << "', the 'axis' must be one int, but got " << ShapeToString(axes)
                                        << ".");
    int64_t axis = axes[0];
    OPF_CHECK(axis >= -range && axis < range, "For '" << op << "', the 'axis' must be in [" << -range << ", "
                                                      << range << ") for input shape " << ShapeToString(x.shape)
                                                      << ", but got " << axis << ".");
    if (axis < 0) axis += range;
    outer_ = n_ = inner_ = 1;
    for (int64_t d = 0; d < nd; ++d) (d < axis ? outer_ : d == axis ? n_ : inner_) *= x.shape[d];
    exclusive_ = ctx.HasAttr("exclusive") && ctx.GetBool("exclusive");
    reverse_ = ctx.HasAttr("reverse") && ctx.GetBool("reverse");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const int64_t lines = outer_ * inner_, n = n_, inner = inner_;
    if (lines == 0 || n == 0) return;
    const bool exclusive = exclusive_, reverse = reverse_;
    ParallelFor(lines, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
      for (int64_t l = begin; l < end; ++l) {
        const int64_t base = (l / inner) * n * inner + l % inner;
        CumSumLine(x + base, y + base, n, inner, exclusive, reverse);
      }
    });
  }

 private:
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
  bool exclusive_ = false, reverse_ = false;
};

template <typename T>
class DropoutCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    for (int o = 0; o < 2; ++o) {
      OPF_CHECK(ctx.output(o).shape == x.shape, "For '" << ctx.op_name() << "', output " << o << " must have shape "
                                                        << ShapeToString(x.shape) << ", but got "
                                                        << ShapeToString(ctx.output(o).shape) << ".");
    }
    n_ = x.numel();
    keep_prob_ = ctx.GetFloat("keep_prob");
    key_ = DropoutKey(ctx.GetInt("Seed0"), ctx.GetInt("Seed1"));
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* out = args.output<T>(0);
    T* mask = args.output<T>(1);
    const uint64_t key = key_;
    const double keep_prob = keep_prob_;
    const C scale = static_cast<C>(1.0 / keep_prob);
    ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const bool keep = DropoutKeep(key, i, keep_prob);
        mask[i] = Store<T>(keep ? C(1) : C(0));
        out[i] = Store<T>(keep ? Load(x[i]) * scale : C(0));
      }
    });
  }

 private:
  int64_t n_ = 0;
  double keep_prob_ = 0.5;
  uint64_t key_ = 0;
};

template <typename T>
class DropoutGradCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.input(1).shape == ctx.input(0).shape,
              "For '" << ctx.op_name() << "', the 'mask' must have the shape of 'dy' "
                      << ShapeToString(ctx.input(0).shape) << ", but got " << ShapeToString(ctx.input(1).shape)
                      << ".");
    n_ = ctx.input(0).numel();
    keep_prob_ = ctx.GetFloat("keep_prob");
  }

  void Launch(const KernelArgs& args) override {
    const T* dy = args.input<T>(0);
    const T* mask = args.input<T>(1);
    T* dx = args.output<T>(0);
    const C scale = static_cast<C>(1.0 / keep_prob_);
    ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dx[i] = Store<T>(Load(dy[i]) * Load(mask[i]) * scale);
    });
  }

 private:
  int64_t n_ = 0;
  double keep_prob_ = 0.5;
};

#define REG_CUMSUM(T, ID) \
  MS_REG_CPU_KERNEL(CumSum, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), CumSumCpuKernel<T>)
#define REG_DROPOUT(T, ID)                                                                                         \
  MS_REG_CPU_KERNEL(Dropout, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), DropoutCpuKernel<T>); \
  MS_REG_CPU_KERNEL(DropoutGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),                \
                    DropoutGradCpuKernel<T>)

REG_CUMSUM(float16, kNumberTypeFloat16);
REG_CUMSUM(bfloat16, kNumberTypeBFloat16);
REG_CUMSUM(float, kNumberTypeFloat32);
REG_CUMSUM(double, kNumberTypeFloat64);
REG_CUMSUM(int32_t, kNumberTypeInt32);
REG_CUMSUM(int64_t, kNumberTypeInt64);
REG_DROPOUT(float16, kNumberTypeFloat16);
REG_DROPOUT(bfloat16, kNumberTypeBFloat16);
REG_DROPOUT(float, kNumberTypeFloat32);
REG_DROPOUT(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
