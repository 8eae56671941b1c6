// MaxPool, AvgPool (NCHW) and their gradients MaxPoolGrad, AvgPoolGrad (x, out, dout) -> dx, with the
// window math of opforge/functors/conv.h; the (sample, channel) planes run in parallel.
#include <algorithm>

#include "kernels/cpu/conv_geometry.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename T, bool kMax>
class PoolCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    g_ = MakeWindow2D(ctx, ctx.input(0).shape, ctx.output(0).shape, false);
    OPF_CHECK(g_.oc == g_.c, "For '" << ctx.op_name() << "', the output must keep the " << g_.c
                                     << " channels, but got " << g_.oc << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const Window2D g = g_;
    const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
    if (planes == 0 || ohw == 0) return;
    ParallelFor(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, ohw * g.kh * g.kw)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t pl = begin; pl < end; ++pl) {
                    const T* xp = x + pl * hw;
                    T* yp = y + pl * ohw;
                    for (int64_t i = 0; i < g.oh; ++i) {
                      for (int64_t j = 0; j < g.ow; ++j) {
                        if constexpr (kMax) {
                          const int64_t a = MaxPoolArgmax(xp, g, i, j);
                          yp[i * g.ow + j] = a >= 0 ? xp[a] : Store<T>(-limits::Infinity<compute_t<T>>());
                        } else {
                          yp[i * g.ow + j] = Store<T>(AvgPoolWindow(xp, g, i, j));
                        }
                      }
                    }
                  }
                });
  }

 private:
  Window2D g_{};
};

template <typename T, bool kMax>
class PoolGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    OPF_CHECK(ctx.num_inputs() == 3 && ctx.num_outputs() == 1, "For '" << op << "', the kernel takes 3 inputs and 1 output.");
    g_ = MakeWindow2D(ctx, ctx.input(0).shape, ctx.input(2).shape, false);
    OPF_CHECK(ctx.input(1).shape == ctx.input(2).shape && ctx.output(0).shape == ctx.input(0).shape &&
                  g_.oc == g_.c,
              "For '" << op << "', 'out_origin' and 'grad' must have the pooled shape and the output the shape of "
                      << "'x_origin' " << ShapeToString(ctx.input(0).shape) << ".");
  }

  void Launch(const KernelArgs& args) override {
    using C = compute_t<T>;
    using A = acc_t<T>;
    const T* x = args.input<T>(0);
    const T* dy = args.input<T>(2);
    T* dx = args.output<T>(0);
    const Window2D g = g_;
    const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
    if (planes == 0 || hw == 0) return;
    ParallelFor(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, hw + ohw * g.kh * g.kw)),
                [&](int64_t begin, int64_t end) {
                  std::vector<A> acc(static_cast<size_t>(hw));
                  for (int64_t pl = begin; pl < end; ++pl) {
                    const T* xp = x + pl * hw;
                    const T* dp = dy + pl * ohw;
                    std::fill(acc.begin(), acc.end(), A(0));
                    for (int64_t i = 0; i < g.oh; ++i) {
                      for (int64_t j = 0; j < g.ow; ++j) {
                        const A d = static_cast<A>(Load(dp[i * g.ow + j]));
                        if constexpr (kMax) {
                          const int64_t a = MaxPoolArgmax(xp, g, i, j);
                          if (a >= 0) acc[a] += d;
                        } else {
                          const int64_t count = AvgPoolCount(g, i, j);
                          if (count == 0) continue;
                          const A share = d / static_cast<A>(count);
                          const int64_t y0 = std::max<int64_t>(0, i * g.sh - g.pt), y1 = std::min(g.h, i * g.sh - g.pt + g.kh);
                          const int64_t x0 = std::max<int64_t>(0, j * g.sw - g.pl), x1 = std::min(g.w, j * g.sw - g.pl + g.kw);
                          for (int64_t yy = y0; yy < y1; ++yy)
                            for (int64_t xx = x0; xx < x1; ++xx) acc[yy * g.w + xx] += share;
                        }
                      }
                    }
                    T* out = dx + pl * hw;
                    for (int64_t e = 0; e < hw; ++e) out[e] = Store<T>(static_cast<C>(acc[e]));
                  }
                });
  }

 private:
  Window2D g_{};
};

// MaxPoolGradGrad(x, out, grad) -> [n, c, oh, ow]: grad at each window's maximum.
template <typename T>
class MaxPoolGradGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    OPF_CHECK(ctx.num_inputs() == 3 && ctx.num_outputs() == 1, "For '" << op << "', the kernel takes 3 inputs and 1 output.");
    g_ = MakeWindow2D(ctx, ctx.input(0).shape, ctx.output(0).shape, false);
    OPF_CHECK(ctx.input(1).shape == ctx.output(0).shape && ctx.input(2).shape == ctx.input(0).shape && g_.oc == g_.c,
              "For '" << op << "', 'out_origin' must have the pooled shape and 'grad' the shape of 'x_origin' "
                      << ShapeToString(ctx.input(0).shape) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* grad = args.input<T>(2);
    T* y = args.output<T>(0);
    const Window2D g = g_;
    const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
    if (planes == 0 || ohw == 0) return;
    ParallelFor(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, ohw * g.kh * g.kw)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t pl = begin; pl < end; ++pl) {
                    const T* xp = x + pl * hw;
                    const T* gp = grad + pl * hw;
                    T* yp = y + pl * ohw;
                    for (int64_t i = 0; i < g.oh; ++i) {
                      for (int64_t j = 0; j < g.ow; ++j) {
                        const int64_t a = MaxPoolArgmax(xp, g, i, j);
                        yp[i * g.ow + j] = a >= 0 ? gp[a] : Store<T>(compute_t<T>(0));
                      }
                    }
                  }
                });
  }

 private:
  Window2D g_{};
};

#define REG_POOL(T, ID)                                                                                           \
  MS_REG_CPU_KERNEL(MaxPool, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), PoolCpuKernel<T, true>);            \
  MS_REG_CPU_KERNEL(AvgPool, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), PoolCpuKernel<T, false>);           \
  MS_REG_CPU_KERNEL(MaxPoolGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    PoolGradCpuKernel<T, true>);                                                                  \
  MS_REG_CPU_KERNEL(AvgPoolGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    PoolGradCpuKernel<T, false>);                                                                 \
  MS_REG_CPU_KERNEL(MaxPoolGradGrad,                                                                              \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),           \
                    MaxPoolGradGradCpuKernel<T>)

REG_POOL(float16, kNumberTypeFloat16);
REG_POOL(bfloat16, kNumberTypeBFloat16);
REG_POOL(float, kNumberTypeFloat32);
REG_POOL(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
