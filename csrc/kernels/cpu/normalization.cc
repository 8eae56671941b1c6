// BatchNorm, BatchNormGrad, LayerNorm, LayerNormGrad with the math of opforge/functors/normalization.h
// (shared with csrc/kernels/cuda/normalization.cu).
//   BatchNorm(x [N, C, ...], scale, bias, mean, variance [C]) -> (y, batch_mean, batch_variance,
//     reserve_space_1, reserve_space_2): training: the batch's mean and biased variance per channel
//     (reserve_space_1/2 the same); inference: the given mean and variance, passed through.
//     y = (x - mean) / sqrt(var + epsilon) * scale + bias.
//   BatchNormGrad(dy, x, scale, save_mean, save_variance) -> (dx, dscale, dbias).
//   LayerNorm(x, gamma, beta) -> (y, mean, variance) over the dims from begin_norm_axis.
//   LayerNormGrad(x, dy, variance, mean, gamma) -> (dx, dgamma, dbeta).
// Channels (BatchNorm) and rows (LayerNorm) run in parallel.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/lanes.h"
#include "opforge/functors/normalization.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

void CheckArity(const KernelContext& ctx, size_t n_in, size_t n_out) {
  OPF_CHECK(ctx.num_inputs() == n_in && ctx.num_outputs() == n_out,
            "For '" << ctx.op_name() << "', the kernel takes " << n_in << " inputs and " << n_out
                    << " outputs, but got " << ctx.num_inputs() << " and " << ctx.num_outputs() << ".");
}

void CheckShape(const KernelContext& ctx, const TensorMeta& t, const char* what, const std::vector<int64_t>& want) {
  OPF_CHECK(t.shape == want, "For '" << ctx.op_name() << "', the '" << what << "' must have shape "
                                     << ShapeToString(want) << ", but got " << ShapeToString(t.shape) << ".");
}

// x [N, C, ...] as (N, C, spatial size); checks the [C] inputs in `vectors` (positions, names).
BatchNormGeometry BatchNormGeometryOf(const KernelContext& ctx, int x_index, const std::vector<int>& vectors,
                                      const std::vector<const char*>& names) {
  const TensorMeta& x = ctx.input(x_index);
  OPF_CHECK(x.ndim() >= 2, "For '" << ctx.op_name() << "', the 'x' must have rank 2 or more, but got shape "
                                   << ShapeToString(x.shape) << ".");
  BatchNormGeometry g{x.shape[0], x.shape[1], 1};
  for (int64_t d = 2; d < x.ndim(); ++d) g.s *= x.shape[d];
  for (size_t k = 0; k < vectors.size(); ++k) CheckShape(ctx, ctx.input(vectors[k]), names[k], {g.c});
  return g;
}

template <typename T>
class BatchNormCpuKernel : public CpuKernel {
  using S = acc_t<T>;
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 5, 5);
    g_ = BatchNormGeometryOf(ctx, 0, {1, 2, 3, 4}, {"scale", "bias", "mean", "variance"});
    CheckShape(ctx, ctx.output(0), "y", ctx.input(0).shape);
    for (int o = 1; o < 5; ++o) CheckShape(ctx, ctx.output(o), "batch statistics", {g_.c});
    training_ = ctx.GetBool("is_training");
    eps_ = ctx.GetFloat("epsilon");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* scale = args.input<T>(1);
    const T* bias = args.input<T>(2);
    const T* mean_in = args.input<T>(3);
    const T* var_in = args.input<T>(4);
    T* y = args.output<T>(0);
    T* outs[4] = {args.output<T>(1), args.output<T>(2), args.output<T>(3), args.output<T>(4)};
    const BatchNormGeometry g = g_;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.count()));
    ParallelFor(g.c, grain, [&](int64_t begin, int64_t end) {
      for (int64_t ch = begin; ch < end; ++ch) {
        S mean, var;
        if (training_) {
          const Moments<T> st = BatchNormChannelMoments(x, g, ch);
          mean = st.mean;
          var = st.var;
        } else {
          mean = static_cast<S>(Load(mean_in[ch]));
          var = static_cast<S>(Load(var_in[ch]));
        }
        const auto affine = BatchNormAffine<T>::Of(static_cast<S>(Load(scale[ch])), static_cast<S>(Load(bias[ch])),
                                                   mean, var, eps_);
        for (int64_t b = 0; b < g.n; ++b) {
          const int64_t base = g.Index(b, ch, 0);
          for (int64_t k = 0; k < g.s; ++k) y[base + k] = affine(x[base + k]);
        }
        const T m = training_ ? Store<T>(static_cast<C>(mean)) : mean_in[ch];
        const T v = training_ ? Store<T>(static_cast<C>(var)) : var_in[ch];
        outs[0][ch] = outs[2][ch] = m;
        outs[1][ch] = outs[3][ch] = v;
      }
    });
  }

 private:
  BatchNormGeometry g_{0, 0, 0};
  bool training_ = false;
  double eps_ = 1e-5;
};

template <typename T>
class BatchNormGradCpuKernel : public CpuKernel {
  using S = acc_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 5, 3);
    g_ = BatchNormGeometryOf(ctx, 1, {2, 3, 4}, {"scale", "reserve_space_1", "reserve_space_2"});
    CheckShape(ctx, ctx.input(0), "dy", ctx.input(1).shape);
    CheckShape(ctx, ctx.output(0), "dx", ctx.input(1).shape);
    CheckShape(ctx, ctx.output(1), "dscale", {g_.c});
    CheckShape(ctx, ctx.output(2), "dbias", {g_.c});
    training_ = ctx.GetBool("is_training");
    eps_ = ctx.GetFloat("epsilon");
  }

  void Launch(const KernelArgs& args) override {
    const T* dy = args.input<T>(0);
    const T* x = args.input<T>(1);
    const T* scale = args.input<T>(2);
    const T* mean_in = args.input<T>(3);
    const T* var_in = args.input<T>(4);
    T* dx = args.output<T>(0);
    T* dscale = args.output<T>(1);
    T* dbias = args.output<T>(2);
    const BatchNormGeometry g = g_;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.count()));
    ParallelFor(g.c, grain, [&](int64_t begin, int64_t end) {
      for (int64_t ch = begin; ch < end; ++ch) {
        const S mean = static_cast<S>(Load(mean_in[ch]));
        const S var = static_cast<S>(Load(var_in[ch]));
        const BatchNormGradSums<T> sums = BatchNormGradChannelSums(dy, x, g, ch, mean);
        dscale[ch] = Store<T>(static_cast<compute_t<T>>(sums.dy_xmu * InvStd(var, eps_)));
        dbias[ch] = Store<T>(static_cast<compute_t<T>>(sums.dy));
        const auto f = BatchNormGradDx<T>::Of(training_, static_cast<S>(Load(scale[ch])), mean, var, eps_, sums,
                                              g.count());
        for (int64_t b = 0; b < g.n; ++b) {
          const int64_t base = g.Index(b, ch, 0);
          for (int64_t k = 0; k < g.s; ++k) dx[base + k] = f(dy[base + k], x[base + k]);
        }
      }
    });
  }

 private:
  BatchNormGeometry g_{0, 0, 0};
  bool training_ = false;
  double eps_ = 1e-5;
};

// x as [rows, m] from begin_norm_axis; gamma / beta of p elements from begin_params_axis.
LayerNormGeometry LayerNormGeometryOf(const KernelContext& ctx, int x_index, int gamma_index) {
  const TensorMeta& x = ctx.input(x_index);
  const int64_t nd = x.ndim();
  auto axis = [&](const char* name) {
    int64_t a = ctx.GetInt(name);
    OPF_CHECK(a >= -nd && a < nd, "For '" << ctx.op_name() << "', the '" << name << "' must be in [" << -nd << ", "
                                          << nd << ") for 'input_x' of shape " << ShapeToString(x.shape)
                                          << ", but got " << a << ".");
    return a < 0 ? a + nd : a;
  };
  const int64_t norm_axis = axis("begin_norm_axis");
  const int64_t params_axis = axis("begin_params_axis");
  LayerNormGeometry g{1, 1, 1};
  for (int64_t d = 0; d < nd; ++d) {
    (d < norm_axis ? g.rows : g.m) *= x.shape[d];
    if (d >= params_axis) g.p *= x.shape[d];
  }
  CheckShape(ctx, ctx.input(gamma_index), "gamma",
             std::vector<int64_t>(x.shape.begin() + params_axis, x.shape.end()));
  return g;
}

std::vector<int64_t> StatShape(const std::vector<int64_t>& shape, int64_t rows_dims) {
  std::vector<int64_t> out(shape);
  for (size_t d = static_cast<size_t>(rows_dims); d < out.size(); ++d) out[d] = 1;
  return out;
}

int64_t NormAxis(const KernelContext& ctx, int x_index) {
  const int64_t nd = ctx.input(x_index).ndim();
  const int64_t a = ctx.GetInt("begin_norm_axis");
  return a < 0 ? a + nd : a;
}

// Rows [begin, end) of LayerNorm whose params span the row (p == m, the usual case): LayerNormRow's formula
// with the row's sums in lanes (its single running sums do not vectorise).
template <typename T>
OPF_VECTOR_CLONES void LayerNormSpanningRows(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* var,
                                            int64_t begin, int64_t end, int64_t m, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  for (int64_t r = begin; r < end; ++r) {
    const T* xr = x + r * m;
    T* yr = y + r * m;
    const S mu = lanes::Sum<S>(m, [xr](int64_t j) { return static_cast<S>(Load(xr[j])); }) / static_cast<S>(m);
    const S v = lanes::Sum<S>(m, [xr, mu](int64_t j) {
                  const S d = static_cast<S>(Load(xr[j])) - mu;
                  return d * d;
                }) /
                static_cast<S>(m);
    const S rstd = InvStd(v, eps);
    for (int64_t j = 0; j < m; ++j) {
      yr[j] = Store<T>(static_cast<C>(LayerNormElement(static_cast<S>(Load(xr[j])), mu, rstd,
                                                       static_cast<S>(Load(gamma[j])), static_cast<S>(Load(beta[j])))));
    }
    mean[r] = Store<T>(static_cast<C>(mu));
    var[r] = Store<T>(static_cast<C>(v));
  }
}

// Rows [begin, end) of LayerNormGrad's dx whose params span the row: LayerNormGradRow's formula with the
// sums of g = dy * gamma and of g * xhat in lanes.
template <typename T>
OPF_VECTOR_CLONES void LayerNormGradSpanningRows(const T* x, const T* dy, const T* gamma, const T* mean,
                                                const T* var, T* dx, int64_t begin, int64_t end, int64_t m,
                                                double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  for (int64_t r = begin; r < end; ++r) {
    const T* xr = x + r * m;
    const T* dr = dy + r * m;
    T* out = dx + r * m;
    const S mu = static_cast<S>(Load(mean[r])), rstd = InvStd(static_cast<S>(Load(var[r])), eps);
    const auto g = [dr, gamma](int64_t j) { return static_cast<S>(Load(dr[j])) * static_cast<S>(Load(gamma[j])); };
    const auto xhat = [xr, mu, rstd](int64_t j) { return (static_cast<S>(Load(xr[j])) - mu) * rstd; };
    const S inv_m = S(1) / static_cast<S>(m);
    const S mg = lanes::Sum<S>(m, g) * inv_m;
    const S mgx = lanes::Sum<S>(m, [&](int64_t j) { return g(j) * xhat(j); }) * inv_m;
    for (int64_t j = 0; j < m; ++j) out[j] = Store<T>(static_cast<C>(LayerNormGradElement(g(j), xhat(j), rstd, mg, mgx)));
  }
}

template <typename T>
class LayerNormCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 3, 3);
    g_ = LayerNormGeometryOf(ctx, 0, 1);
    CheckShape(ctx, ctx.input(2), "beta", ctx.input(1).shape);
    CheckShape(ctx, ctx.output(0), "y", ctx.input(0).shape);
    const std::vector<int64_t> stat = StatShape(ctx.input(0).shape, NormAxis(ctx, 0));
    CheckShape(ctx, ctx.output(1), "mean", stat);
    CheckShape(ctx, ctx.output(2), "variance", stat);
    eps_ = ctx.GetFloat("epsilon");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* gamma = args.input<T>(1);
    const T* beta = args.input<T>(2);
    T* y = args.output<T>(0);
    T* mean = args.output<T>(1);
    T* var = args.output<T>(2);
    const LayerNormGeometry g = g_;
    if (g.m == 0) {  // rows without elements: NaN statistics, as np.mean
      const T nan = Store<T>(limits::QuietNaN<compute_t<T>>());
      std::fill(mean, mean + g.rows, nan);
      std::fill(var, var + g.rows, nan);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / g.m);
    ParallelFor(g.rows, grain, [&](int64_t begin, int64_t end) {
      if (g.p == g.m) {
        LayerNormSpanningRows(x, gamma, beta, y, mean, var, begin, end, g.m, eps_);
        return;
      }
      for (int64_t r = begin; r < end; ++r) {
        LayerNormRow(x + r * g.m, gamma, beta, y + r * g.m, mean + r, var + r, g.m, g.p, r * g.m, eps_);
      }
    });
  }

 private:
  LayerNormGeometry g_{0, 0, 0};
  double eps_ = 1e-7;
};

template <typename T>
class LayerNormGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 5, 3);
    g_ = LayerNormGeometryOf(ctx, 0, 4);
    CheckShape(ctx, ctx.input(1), "dy", ctx.input(0).shape);
    const std::vector<int64_t> stat = StatShape(ctx.input(0).shape, NormAxis(ctx, 0));
    CheckShape(ctx, ctx.input(2), "variance", stat);
    CheckShape(ctx, ctx.input(3), "mean", stat);
    CheckShape(ctx, ctx.output(0), "dx", ctx.input(0).shape);
    CheckShape(ctx, ctx.output(1), "dgamma", ctx.input(4).shape);
    CheckShape(ctx, ctx.output(2), "dbeta", ctx.input(4).shape);
    eps_ = ctx.GetFloat("epsilon");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* dy = args.input<T>(1);
    const T* var = args.input<T>(2);
    const T* mean = args.input<T>(3);
    const T* gamma = args.input<T>(4);
    T* dx = args.output<T>(0);
    T* dgamma = args.output<T>(1);
    T* dbeta = args.output<T>(2);
    const LayerNormGeometry g = g_;
    const int64_t total = g.rows * g.m;
    if (g.m > 0) {
      const int64_t grain = std::max<int64_t>(1, kParallelGrain / g.m);
      ParallelFor(g.rows, grain, [&](int64_t begin, int64_t end) {
        if (g.p == g.m) {
          LayerNormGradSpanningRows(x, dy, gamma, mean, var, dx, begin, end, g.m, eps_);
          return;
        }
        for (int64_t r = begin; r < end; ++r) {
          LayerNormGradRow(x + r * g.m, dy + r * g.m, gamma, mean[r], var[r], dx + r * g.m, g.m, g.p, r * g.m, eps_);
        }
      });
    }
    if (g.m > 0 && g.p == g.m) {
      ParamGradsByRows(x, dy, mean, var, dgamma, dbeta, g);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, total / std::max<int64_t>(1, g.p)));
    ParallelFor(g.p, grain, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) {
        LayerNormGradParam(x, dy, mean, var, dgamma, dbeta, q, total, std::max<int64_t>(g.m, 1), g.p, eps_);
      }
    });
  }

 private:
  // dgamma and dbeta when the params span a row (the usual LayerNorm): rows in fixed chunks, each chunk's
  // sums over its rows in a vector of p (contiguous, so the loops vectorise; rstd once per row), then the
  // chunks' vectors added in chunk order. The order depends on the shape only, not on the threads.
  void ParamGradsByRows(const T* x, const T* dy, const T* mean, const T* var, T* dgamma, T* dbeta,
                        const LayerNormGeometry& g) const {
    using S = acc_t<T>;
    using C = compute_t<T>;
    constexpr int64_t kChunkRows = 64;
    const int64_t p = g.p, chunks = (g.rows + kChunkRows - 1) / kChunkRows;
    std::vector<S> sums(static_cast<size_t>(chunks * 2 * p), S(0));
    const double eps = eps_;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, kChunkRows * p));
    ParallelFor(chunks, grain, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        S* sg = sums.data() + c * 2 * p;
        S* sb = sg + p;
        for (int64_t r = c * kChunkRows; r < std::min(g.rows, (c + 1) * kChunkRows); ++r) {
          const S mu = static_cast<S>(Load(mean[r])), rstd = InvStd(static_cast<S>(Load(var[r])), eps);
          const T* xr = x + r * p;
          const T* dr = dy + r * p;
          for (int64_t q = 0; q < p; ++q) {
            const S d = static_cast<S>(Load(dr[q]));
            sg[q] += d * (static_cast<S>(Load(xr[q])) - mu) * rstd;
            sb[q] += d;
          }
        }
      }
    });
    for (int64_t q = 0; q < p; ++q) {
      S tg = 0, tb = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        tg += sums[c * 2 * p + q];
        tb += sums[c * 2 * p + p + q];
      }
      dgamma[q] = Store<T>(static_cast<C>(tg));
      dbeta[q] = Store<T>(static_cast<C>(tb));
    }
  }

  LayerNormGeometry g_{0, 0, 0};
  double eps_ = 1e-7;
};

#define REG_NORM(T, ID)                                                                                           \
  MS_REG_CPU_KERNEL(BatchNorm,                                                                                    \
                    KernelAttr()                                                                                  \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID),                                                                       \
                    BatchNormCpuKernel<T>);                                                                       \
  MS_REG_CPU_KERNEL(BatchNormGrad,                                                                                \
                    KernelAttr()                                                                                  \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID),                                                                       \
                    BatchNormGradCpuKernel<T>);                                                                   \
  MS_REG_CPU_KERNEL(LayerNorm,                                                                                    \
                    KernelAttr()                                                                                  \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID),                                                                       \
                    LayerNormCpuKernel<T>);                                                                       \
  MS_REG_CPU_KERNEL(LayerNormGrad,                                                                                \
                    KernelAttr()                                                                                  \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddInputAttr(ID)                                                                         \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID)                                                                        \
                        .AddOutputAttr(ID),                                                                       \
                    LayerNormGradCpuKernel<T>)

REG_NORM(float16, kNumberTypeFloat16);
REG_NORM(bfloat16, kNumberTypeBFloat16);
REG_NORM(float, kNumberTypeFloat32);
REG_NORM(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
