// The math of BatchNorm, BatchNormGrad, LayerNorm and LayerNormGrad, shared by the CPU kernels
// (csrc/kernels/cpu/normalization.cc) and the CUDA kernels (csrc/kernels/cuda/normalization.cu).
// Host and device; no standard library (NVRTC has none).
//
// BatchNorm over x [N, C, S...] (S: the product of the spatial dims, 1 for a 2-D input): channel ch
// holds the M = N * S elements x[(b * C + ch) * S + s]. LayerNorm over x seen as [R, M]: row r holds
// x[r * M + j]; gamma and beta hold P elements and element i of x uses gamma[i % P].
// Statistics are two-pass (the mean, then the mean of squared deviations: the biased variance) in
// acc_t<T> (double for float32 and float64, float for float16 / bfloat16).
#pragma once

#include "opforge/functors/reduce.h"
#include "opforge/half.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

template <typename T>
struct Moments {
  acc_t<T> mean;
  acc_t<T> var;  // biased: the mean of squared deviations
};

// 1 / sqrt(var + eps) in S.
template <typename S>
OPF_HD S InvStd(S var, double eps) {
  return S(1) / math::sqrt(var + static_cast<S>(eps));
}

// --------------------------------------------------------------------------------------------
// BatchNorm

struct BatchNormGeometry {
  int64_t n, c, s;  // batch, channels, spatial size
  OPF_HD int64_t count() const { return n * s; }
  OPF_HD int64_t Index(int64_t b, int64_t ch, int64_t k) const { return (b * c + ch) * s + k; }
};

// The mean and biased variance of channel ch (NaN for a channel without elements, as np.mean).
template <typename T>
OPF_HD Moments<T> BatchNormChannelMoments(const T* x, const BatchNormGeometry& g, int64_t ch) {
  using S = acc_t<T>;
  const int64_t m = g.count();
  if (m == 0) return {limits::QuietNaN<S>(), limits::QuietNaN<S>()};
  S sum = 0;
  for (int64_t b = 0; b < g.n; ++b) {
    const T* row = x + g.Index(b, ch, 0);
    for (int64_t k = 0; k < g.s; ++k) sum += static_cast<S>(Load(row[k]));
  }
  const S mean = sum / static_cast<S>(m);
  S sq = 0;
  for (int64_t b = 0; b < g.n; ++b) {
    const T* row = x + g.Index(b, ch, 0);
    for (int64_t k = 0; k < g.s; ++k) {
      const S d = static_cast<S>(Load(row[k])) - mean;
      sq += d * d;
    }
  }
  return {mean, sq / static_cast<S>(m)};
}

// y = x * a + b per channel, with a = scale / sqrt(var + eps) and b = bias - mean * a.
template <typename T>
struct BatchNormAffine {
  acc_t<T> a, b;
  static OPF_HD BatchNormAffine Of(acc_t<T> scale, acc_t<T> bias, acc_t<T> mean, acc_t<T> var, double eps) {
    const acc_t<T> a = scale * InvStd(var, eps);
    return {a, bias - mean * a};
  }
  OPF_HD T operator()(T x) const { return Store<T>(static_cast<compute_t<T>>(static_cast<acc_t<T>>(Load(x)) * a + b)); }
};

// The sums BatchNormGrad needs per channel: sum(dy) and sum(dy * (x - mean)).
template <typename T>
struct BatchNormGradSums {
  acc_t<T> dy, dy_xmu;
};

template <typename T>
OPF_HD BatchNormGradSums<T> BatchNormGradChannelSums(const T* dy, const T* x, const BatchNormGeometry& g, int64_t ch,
                                                     acc_t<T> mean) {
  using S = acc_t<T>;
  S sdy = 0, sdx = 0;
  for (int64_t b = 0; b < g.n; ++b) {
    const int64_t base = g.Index(b, ch, 0);
    for (int64_t k = 0; k < g.s; ++k) {
      const S d = static_cast<S>(Load(dy[base + k]));
      sdy += d;
      sdx += d * (static_cast<S>(Load(x[base + k])) - mean);
    }
  }
  return {sdy, sdx};
}

// dx of one element: inference (statistics constant): dy * scale * rstd; training (statistics of
// the batch): scale * rstd * (dy - sum(dy) / M - (x - mean) * rstd^2 * sum(dy * (x - mean)) / M).
template <typename T>
struct BatchNormGradDx {
  acc_t<T> k_dy, k_xmu, k_const, mean;  // dx = k_dy * dy + k_xmu * (x - mean) + k_const
  static OPF_HD BatchNormGradDx Of(bool training, acc_t<T> scale, acc_t<T> mean, acc_t<T> var, double eps,
                                   const BatchNormGradSums<T>& sums, int64_t m) {
    using S = acc_t<T>;
    const S rstd = InvStd(var, eps);
    const S k = scale * rstd;
    if (!training || m == 0) return {k, S(0), S(0), mean};
    const S inv_m = S(1) / static_cast<S>(m);
    return {k, -k * rstd * rstd * sums.dy_xmu * inv_m, -k * sums.dy * inv_m, mean};
  }
  OPF_HD T operator()(T dy, T x) const {
    using S = acc_t<T>;
    // Inference has no (x - mean) term: skipped, so an infinite x does not turn 0 * inf into NaN.
    const S xmu = k_xmu == S(0) ? S(0) : k_xmu * (static_cast<S>(Load(x)) - mean);
    const S v = k_dy * static_cast<S>(Load(dy)) + xmu + k_const;
    return Store<T>(static_cast<compute_t<T>>(v));
  }
};

// --------------------------------------------------------------------------------------------
// LayerNorm

struct LayerNormGeometry {
  int64_t rows, m, p;  // rows, elements per row, gamma / beta elements
};

// The mean and biased variance of row r (m >= 1).
template <typename T>
OPF_HD Moments<T> LayerNormRowMoments(const T* x, int64_t m) {
  using S = acc_t<T>;
  S sum = 0;
  for (int64_t j = 0; j < m; ++j) sum += static_cast<S>(Load(x[j]));
  const S mean = sum / static_cast<S>(m);
  S sq = 0;
  for (int64_t j = 0; j < m; ++j) {
    const S d = static_cast<S>(Load(x[j])) - mean;
    sq += d * d;
  }
  return {mean, sq / static_cast<S>(m)};
}

// One element of LayerNorm (the CPU's rows and the GPU's blocks): y = (x - mean) * rstd * gamma + beta.
template <typename S>
OPF_HD S LayerNormElement(S x, S mean, S rstd, S gamma, S beta) {
  return (x - mean) * rstd * gamma + beta;
}

// One element of LayerNormGrad's dx from g = dy * gamma, xhat = (x - mean) * rstd and the row's means
// mg = mean(g), mgx = mean(g * xhat).
template <typename S>
OPF_HD S LayerNormGradElement(S g, S xhat, S rstd, S mg, S mgx) {
  return rstd * (g - mg - xhat * mgx);
}

// One row of LayerNorm: y = (x - mean) * rstd * gamma + beta; `first` is the row's first element
// index in x (so gamma[(first + j) % p]). Writes the row's mean and variance.
template <typename T>
OPF_HD void LayerNormRow(const T* x, const T* gamma, const T* beta, T* y, T* mean_out, T* var_out, int64_t m,
                         int64_t p, int64_t first, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  const Moments<T> st = LayerNormRowMoments(x, m);
  const S rstd = InvStd(st.var, eps);
  for (int64_t j = 0; j < m; ++j) {
    const int64_t q = p == m ? j : (first + j) % p;  // (the common case without a division: the loop vectorises)
    const S v = LayerNormElement(static_cast<S>(Load(x[j])), st.mean, rstd, static_cast<S>(Load(gamma[q])),
                                 static_cast<S>(Load(beta[q])));
    y[j] = Store<T>(static_cast<C>(v));
  }
  *mean_out = Store<T>(static_cast<C>(st.mean));
  *var_out = Store<T>(static_cast<C>(st.var));
}

// One row of LayerNormGrad's dx: with xhat = (x - mean) * rstd and g = dy * gamma,
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
template <typename T>
OPF_HD void LayerNormGradRow(const T* x, const T* dy, const T* gamma, T mean_in, T var_in, T* dx, int64_t m, int64_t p,
                             int64_t first, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  const S mean = static_cast<S>(Load(mean_in));
  const S rstd = InvStd(static_cast<S>(Load(var_in)), eps);
  S sg = 0, sgx = 0;
  for (int64_t j = 0; j < m; ++j) {
    const S g = static_cast<S>(Load(dy[j])) * static_cast<S>(Load(gamma[p == m ? j : (first + j) % p]));
    sg += g;
    sgx += g * (static_cast<S>(Load(x[j])) - mean) * rstd;
  }
  const S inv_m = S(1) / static_cast<S>(m);
  const S mg = sg * inv_m, mgx = sgx * inv_m;
  for (int64_t j = 0; j < m; ++j) {
    const S g = static_cast<S>(Load(dy[j])) * static_cast<S>(Load(gamma[p == m ? j : (first + j) % p]));
    const S xhat = (static_cast<S>(Load(x[j])) - mean) * rstd;
    dx[j] = Store<T>(static_cast<C>(LayerNormGradElement(g, xhat, rstd, mg, mgx)));
  }
}

// dgamma[q] and dbeta[q]: the sums over the elements i = q, q + p, ... < total of dy * xhat and dy.
template <typename T>
OPF_HD void LayerNormGradParam(const T* x, const T* dy, const T* mean, const T* var, T* dgamma, T* dbeta, int64_t q,
                               int64_t total, int64_t m, int64_t p, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  S sg = 0, sb = 0;
  for (int64_t i = q; i < total; i += p) {
    const int64_t r = i / m;
    const S xhat = (static_cast<S>(Load(x[i])) - static_cast<S>(Load(mean[r]))) *
                   InvStd(static_cast<S>(Load(var[r])), eps);
    const S d = static_cast<S>(Load(dy[i]));
    sg += d * xhat;
    sb += d;
  }
  dgamma[q] = Store<T>(static_cast<C>(sg));
  dbeta[q] = Store<T>(static_cast<C>(sb));
}

}  // namespace opforge
