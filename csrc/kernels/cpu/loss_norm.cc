// L2Loss(x) = sum(x^2) / 2 (a 0-d output), SmoothL1Loss(beta, reduction)(logits, labels) and
// SmoothL1LossGrad(beta, reduction)(prediction, target, dout), with the math of opforge/functors/loss.h
// (shared with csrc/kernels/cuda/loss_norm.cu). Sums accumulate in acc_t<T> in fixed chunks combined
// in order, so results do not depend on the thread count. reduction: "none" (elementwise), "sum",
// "mean" (a 0-d output; the mean of no elements is NaN).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "opforge/functors/loss.h"
#include "opforge/functors/reduce.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// sum over i < n of f(i), in acc_t chunks combined in order.
template <typename S, typename F>
S ChunkedSum(int64_t n, F&& f) {
  const int64_t chunks = std::clamp<int64_t>(n / kParallelGrain, 1, 256);
  const int64_t chunk = (n + chunks - 1) / chunks;
  std::vector<S> partial(static_cast<size_t>(chunks), S(0));
  ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      S s = 0;
      for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) s += f(i);
      partial[c] = s;
    }
  });
  S total = 0;
  for (S p : partial) total += p;
  return total;
}

int Reduction(const KernelContext& ctx) {
  const std::string r = ctx.HasAttr("reduction") ? ctx.GetStr("reduction") : "none";
  OPF_CHECK(r == "none" || r == "sum" || r == "mean",
            "For '" << ctx.op_name() << "', the 'reduction' must be one of ['none', 'mean', 'sum'], but got '" << r
                    << "'.");
  return r == "none" ? 0 : (r == "sum" ? 1 : 2);
}

template <typename T>
class L2LossCpuKernel : public CpuKernel {
  using S = acc_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.output(0).ndim() == 0, "For '" << ctx.op_name() << "', the output must be 0-d, but got shape "
                                                 << ShapeToString(ctx.output(0).shape) << ".");
    n_ = ctx.input(0).numel();
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const S s = ChunkedSum<S>(n_, [&](int64_t i) {
      const S v = static_cast<S>(Load(x[i]));
      return v * v;
    });
    args.output<T>(0)[0] = Store<T>(static_cast<compute_t<T>>(s / S(2)));
  }

 private:
  int64_t n_ = 0;
};

template <typename T>
class SmoothL1LossCpuKernel : public CpuKernel {
  using S = acc_t<T>;
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.input(1).shape == ctx.input(0).shape,
              "For '" << ctx.op_name() << "', the 'labels' must have the shape of 'logits' "
                      << ShapeToString(ctx.input(0).shape) << ", but got " << ShapeToString(ctx.input(1).shape) << ".");
    n_ = ctx.input(0).numel();
    beta_ = ctx.GetFloat("beta");
    reduction_ = Reduction(ctx);
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* y = args.input<T>(1);
    T* out = args.output<T>(0);
    const S beta = static_cast<S>(beta_);
    auto term = [&](int64_t i) { return SmoothL1(static_cast<S>(Load(x[i])) - static_cast<S>(Load(y[i])), beta); };
    if (reduction_ == 0) {
      ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = Store<T>(static_cast<C>(term(i)));
      });
      return;
    }
    S s = ChunkedSum<S>(n_, term);
    if (reduction_ == 2) s = n_ > 0 ? s / static_cast<S>(n_) : std::numeric_limits<S>::quiet_NaN();
    out[0] = Store<T>(static_cast<C>(s));
  }

 private:
  int64_t n_ = 0;
  double beta_ = 1.0;
  int reduction_ = 0;
};

template <typename T>
class SmoothL1LossGradCpuKernel : public CpuKernel {
  using S = acc_t<T>;
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.input(1).shape == ctx.input(0).shape,
              "For '" << ctx.op_name() << "', the 'target' must have the shape of 'prediction' "
                      << ShapeToString(ctx.input(0).shape) << ", but got " << ShapeToString(ctx.input(1).shape) << ".");
    n_ = ctx.input(0).numel();
    beta_ = ctx.GetFloat("beta");
    reduction_ = Reduction(ctx);
    const std::vector<int64_t> want = reduction_ == 0 ? ctx.input(0).shape : std::vector<int64_t>{};
    OPF_CHECK(ctx.input(2).shape == want, "For '" << ctx.op_name() << "', the 'dout' must have shape "
                                                  << ShapeToString(want) << ", but got "
                                                  << ShapeToString(ctx.input(2).shape) << ".");
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* y = args.input<T>(1);
    const T* dout = args.input<T>(2);
    T* dx = args.output<T>(0);
    const S beta = static_cast<S>(beta_);
    const int reduction = reduction_;
    S scale = reduction == 0 ? S(1) : static_cast<S>(Load(dout[0]));
    if (reduction == 2) scale /= static_cast<S>(std::max<int64_t>(n_, 1));
    ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const S g = SmoothL1Grad(static_cast<S>(Load(x[i])) - static_cast<S>(Load(y[i])), beta);
        const S d = reduction == 0 ? static_cast<S>(Load(dout[i])) : scale;
        dx[i] = Store<T>(static_cast<C>(g * d));
      }
    });
  }

 private:
  int64_t n_ = 0;
  double beta_ = 1.0;
  int reduction_ = 0;
};

#define REG_LOSS(T, ID)                                                                                          \
  MS_REG_CPU_KERNEL(L2Loss, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), L2LossCpuKernel<T>);                \
  MS_REG_CPU_KERNEL(SmoothL1Loss, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),              \
                    SmoothL1LossCpuKernel<T>);                                                                   \
  MS_REG_CPU_KERNEL(SmoothL1LossGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    SmoothL1LossGradCpuKernel<T>)

REG_LOSS(float16, kNumberTypeFloat16);
REG_LOSS(bfloat16, kNumberTypeBFloat16);
REG_LOSS(float, kNumberTypeFloat32);
REG_LOSS(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
