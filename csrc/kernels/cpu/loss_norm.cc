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

// BCEWithLogitsLoss(reduction)(logits, label, weight, pos_weight): the primitive broadcast weight and
// pos_weight to the logits' shape, so the four inputs have one shape.
namespace opforge {
namespace {

template <typename T>
class BceWithLogitsCpuKernel : public CpuKernel {
  using S = acc_t<T>;
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    static const char* const kNames[] = {"logits", "label", "weight", "pos_weight"};
    for (int i = 1; i < 4; ++i) {
      OPF_CHECK(ctx.input(i).shape == ctx.input(0).shape,
                "For '" << ctx.op_name() << "', the '" << kNames[i] << "' must have the shape of 'logits' "
                        << ShapeToString(ctx.input(0).shape) << " (after broadcasting), but got "
                        << ShapeToString(ctx.input(i).shape) << ".");
    }
    n_ = ctx.input(0).numel();
    reduction_ = Reduction(ctx);
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* y = args.input<T>(1);
    const T* w = args.input<T>(2);
    const T* pw = args.input<T>(3);
    T* out = args.output<T>(0);
    auto term = [&](int64_t i) {
      return BceWithLogits(static_cast<S>(Load(x[i])), static_cast<S>(Load(y[i])), static_cast<S>(Load(w[i])),
                           static_cast<S>(Load(pw[i])));
    };
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
  int reduction_ = 0;
};

// NLLLoss(reduction, ignore_index)(logits [N, C] or [C], labels [N] or [], weight [C]) -> (loss,
// total_weight): loss_i = -weight[t_i] * logits[i, t_i] (0 where t_i == ignore_index), total_weight =
// the sum of weight[t_i] over the rows not ignored; "mean" divides the summed loss by total_weight.
// NLLLossGrad(reduction, ignore_index)(logits, loss_grad, labels, weight, total_weight) -> dlogits.
struct NllGeometry {
  int64_t n = 1, c = 1;
};

NllGeometry NllGeometryOf(const KernelContext& ctx, int labels_index) {
  const TensorMeta& x = ctx.input(0);
  OPF_CHECK(x.ndim() == 1 || x.ndim() == 2, "For '" << ctx.op_name() << "', the 'logits' must be 1-D or 2-D, but got "
                                                    << ShapeToString(x.shape) << ".");
  NllGeometry g;
  g.n = x.ndim() == 2 ? x.shape[0] : 1;
  g.c = x.shape.back();
  OPF_CHECK(ctx.input(labels_index).numel() == g.n,
            "For '" << ctx.op_name() << "', the 'labels' must have " << g.n << " elements, but got shape "
                    << ShapeToString(ctx.input(labels_index).shape) << ".");
  OPF_CHECK(ctx.input(labels_index + 1).numel() == g.c,
            "For '" << ctx.op_name() << "', the 'weight' must have " << g.c << " elements (one per class), but got shape "
                    << ShapeToString(ctx.input(labels_index + 1).shape) << ".");
  return g;
}

template <typename L>
void CheckLabels(const std::string& op, const L* labels, int64_t n, int64_t c, int64_t ignore) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = static_cast<int64_t>(labels[i]);
    OPF_CHECK(t == ignore || (t >= 0 && t < c), "For '" << op << "', every 'labels' value must be in [0, " << c
                                                          << ") or the ignore_index " << ignore << ", but got labels["
                                                          << i << "] = " << t << ".");
  }
}

template <typename T, typename L>
class NllLossCpuKernel : public CpuKernel {
  using S = acc_t<T>;
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    g_ = NllGeometryOf(ctx, 1);
    reduction_ = Reduction(ctx);
    ignore_ = ctx.GetInt("ignore_index");
    op_ = ctx.op_name();
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const L* t = args.input<L>(1);
    const T* w = args.input<T>(2);
    T* loss = args.output<T>(0);
    T* total = args.output<T>(1);
    CheckLabels(op_, t, g_.n, g_.c, ignore_);
    S sum = 0, tw = 0;
    for (int64_t i = 0; i < g_.n; ++i) {
      const int64_t k = static_cast<int64_t>(t[i]);
      S l = 0;
      if (k != ignore_) {
        const S wk = static_cast<S>(Load(w[k]));
        l = -wk * static_cast<S>(Load(x[i * g_.c + k]));
        tw += wk;
      }
      if (reduction_ == 0) loss[i] = Store<T>(static_cast<C>(l));
      sum += l;
    }
    if (reduction_ != 0) loss[0] = Store<T>(static_cast<C>(reduction_ == 2 ? sum / tw : sum));
    total[0] = Store<T>(static_cast<C>(tw));
  }

 private:
  NllGeometry g_;
  int reduction_ = 2;
  int64_t ignore_ = -100;
  std::string op_;
};

template <typename T, typename L>
class NllLossGradCpuKernel : public CpuKernel {
  using S = acc_t<T>;
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    g_ = NllGeometryOf(ctx, 2);
    reduction_ = Reduction(ctx);
    ignore_ = ctx.GetInt("ignore_index");
    op_ = ctx.op_name();
    const int64_t want = reduction_ == 0 ? g_.n : 1;  // one loss per sample, or the reduced one
    OPF_CHECK(ctx.input(1).numel() == want, "For '" << op_ << "', the 'loss_grad' must have " << want
                                                    << " elements, but got shape " << ShapeToString(ctx.input(1).shape)
                                                    << ".");
    OPF_CHECK(ctx.input(4).numel() == 1, "For '" << op_ << "', the 'total_weight' must have 1 element, but got shape "
                                                 << ShapeToString(ctx.input(4).shape) << ".");
  }
  void Launch(const KernelArgs& args) override {
    const T* dout = args.input<T>(1);
    const L* t = args.input<L>(2);
    const T* w = args.input<T>(3);
    const T* total = args.input<T>(4);
    T* dx = args.output<T>(0);
    CheckLabels(op_, t, g_.n, g_.c, ignore_);
    std::fill(dx, dx + g_.n * g_.c, Store<T>(C(0)));
    for (int64_t i = 0; i < g_.n; ++i) {
      const int64_t k = static_cast<int64_t>(t[i]);
      if (k == ignore_) continue;
      S d = static_cast<S>(Load(dout[reduction_ == 0 ? i : 0]));
      if (reduction_ == 2) d /= static_cast<S>(Load(total[0]));
      dx[i * g_.c + k] = Store<T>(static_cast<C>(-static_cast<S>(Load(w[k])) * d));
    }
  }

 private:
  NllGeometry g_;
  int reduction_ = 2;
  int64_t ignore_ = -100;
  std::string op_;
};

#define REG_BCE_NLL(T, ID)                                                                                     \
  MS_REG_CPU_KERNEL(BCEWithLogitsLoss,                                                                         \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    BceWithLogitsCpuKernel<T>);                                                                \
  MS_REG_CPU_KERNEL(NLLLoss,                                                                                   \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(kNumberTypeInt32).AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), \
                    NllLossCpuKernel<T, int32_t>);                                                             \
  MS_REG_CPU_KERNEL(NLLLoss,                                                                                   \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(kNumberTypeInt64).AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), \
                    NllLossCpuKernel<T, int64_t>);                                                             \
  MS_REG_CPU_KERNEL(NLLLossGrad,                                                                               \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(kNumberTypeInt32).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    NllLossGradCpuKernel<T, int32_t>);                                                         \
  MS_REG_CPU_KERNEL(NLLLossGrad,                                                                               \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(kNumberTypeInt64).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    NllLossGradCpuKernel<T, int64_t>)

REG_BCE_NLL(float16, kNumberTypeFloat16);
REG_BCE_NLL(bfloat16, kNumberTypeBFloat16);
REG_BCE_NLL(float, kNumberTypeFloat32);
REG_BCE_NLL(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
