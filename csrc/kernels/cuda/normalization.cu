// BatchNorm, BatchNormGrad, LayerNorm, LayerNormGrad with the math of opforge/functors/normalization.h
// (shared with csrc/kernels/cpu/normalization.cc): the BatchNorm statistics and gradient sums a block per
// channel when channels have many elements (block sums, block.cuh), else one thread per channel; one thread
// per element for y and dx; LayerNorm and LayerNormGrad's dx a block per row when rows are long
// (two block sums each: mean then variance, or sum(g) and sum(g * xhat); block.cuh), else one thread per
// row; one thread per gamma element for dgamma / dbeta. Instantiated by name
// (opforge/kernels/gpu/normalization.py).
#include "block.cuh"
#include "opforge/cuda.h"
#include "opforge/functors/normalization.h"
#include "register_row.cuh"

namespace opforge {
namespace cuda {

// Per channel: training: the batch's mean and biased variance; inference: the given ones. Writes the
// four statistics outputs and the affine coefficients (a, b) of y = x * a + b, in acc_t<T>.
// Writes channel ch's four statistics outputs and its affine coefficients (a, b) of y = x * a + b, in
// acc_t<T>, from its mean and variance (the batch's when training, else the given ones).
template <typename T>
__device__ void BatchNormStoreChannel(const T* scale, const T* bias, const T* mean_in, const T* var_in, T* mean_out,
                                      T* var_out, T* reserve1, T* reserve2, acc_t<T>* coef, int64_t ch, int training,
                                      acc_t<T> mean, acc_t<T> var, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  const BatchNormAffine<T> f =
      BatchNormAffine<T>::Of(static_cast<S>(Load(scale[ch])), static_cast<S>(Load(bias[ch])), mean, var, eps);
  coef[2 * ch] = f.a;
  coef[2 * ch + 1] = f.b;
  const T m = training ? Store<T>(static_cast<C>(mean)) : mean_in[ch];
  const T v = training ? Store<T>(static_cast<C>(var)) : var_in[ch];
  mean_out[ch] = m;
  reserve1[ch] = m;
  var_out[ch] = v;
  reserve2[ch] = v;
}

// Per channel, one thread each: training: the batch's mean and biased variance; inference: the given ones.
template <typename T>
__global__ void BatchNormStatsKernel(const T* x, const T* scale, const T* bias, const T* mean_in, const T* var_in,
                                     T* mean_out, T* var_out, T* reserve1, T* reserve2, acc_t<T>* coef, int64_t n,
                                     int64_t c, int64_t s, int training, double eps) {
  using S = acc_t<T>;
  const BatchNormGeometry g{n, c, s};
  OPF_GRID_STRIDE_LOOP(ch, c) {
    S mean, var;
    if (training) {
      const Moments<T> st = BatchNormChannelMoments(x, g, ch);
      mean = st.mean;
      var = st.var;
    } else {
      mean = static_cast<S>(Load(mean_in[ch]));
      var = static_cast<S>(Load(var_in[ch]));
    }
    BatchNormStoreChannel(scale, bias, mean_in, var_in, mean_out, var_out, reserve1, reserve2, coef, ch, training,
                          mean, var, eps);
  }
}

// Training's statistics with a block of kBlock threads per channel of n * s >= 1 elements: the mean, then
// the biased variance about it (two block sums, as the CPU's two passes).
template <typename T, int kBlock>
__global__ void BatchNormStatsRowsKernel(const T* x, const T* scale, const T* bias, const T* mean_in,
                                         const T* var_in, T* mean_out, T* var_out, T* reserve1, T* reserve2,
                                         acc_t<T>* coef, int64_t n, int64_t c, int64_t s, int training, double eps) {
  using S = acc_t<T>;
  __shared__ S cells[kBlock / 32 + 1];
  const BatchNormGeometry g{n, c, s};
  const int64_t m = g.count();
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    S sum = 0;
    for (int64_t k = threadIdx.x; k < m; k += kBlock) sum += static_cast<S>(Load(x[g.Index(k / s, ch, k % s)]));
    const S mean = BlockSum<S, kBlock>(sum, cells) / static_cast<S>(m);
    S sq = 0;
    for (int64_t k = threadIdx.x; k < m; k += kBlock) {
      const S d = static_cast<S>(Load(x[g.Index(k / s, ch, k % s)])) - mean;
      sq += d * d;
    }
    const S var = BlockSum<S, kBlock>(sq, cells) / static_cast<S>(m);
    if (threadIdx.x == 0)
      BatchNormStoreChannel(scale, bias, mean_in, var_in, mean_out, var_out, reserve1, reserve2, coef, ch, training,
                            mean, var, eps);
  }
}

template <typename T>
__global__ void BatchNormApplyKernel(const T* x, const acc_t<T>* coef, T* y, int64_t numel, int64_t c, int64_t s) {
  OPF_GRID_STRIDE_LOOP(i, numel) {
    const int64_t ch = (i / s) % c;
    const BatchNormAffine<T> f{coef[2 * ch], coef[2 * ch + 1]};
    y[i] = f(x[i]);
  }
}

// Per channel: dscale, dbias and the coefficients of dx = k_dy * dy + k_xmu * (x - mean) + k_const
// (4 values of acc_t<T> per channel).
// Writes channel ch's dscale, dbias and the coefficients of dx from its sums.
template <typename T>
__device__ void BatchNormGradStoreChannel(const T* scale, T* dscale, T* dbias, acc_t<T>* coef, int64_t ch,
                                          acc_t<T> mean, acc_t<T> var, const BatchNormGradSums<T>& sums,
                                          int64_t count, int training, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  dscale[ch] = Store<T>(static_cast<C>(sums.dy_xmu * InvStd(var, eps)));
  dbias[ch] = Store<T>(static_cast<C>(sums.dy));
  const BatchNormGradDx<T> f =
      BatchNormGradDx<T>::Of(training != 0, static_cast<S>(Load(scale[ch])), mean, var, eps, sums, count);
  coef[4 * ch] = f.k_dy;
  coef[4 * ch + 1] = f.k_xmu;
  coef[4 * ch + 2] = f.k_const;
  coef[4 * ch + 3] = f.mean;
}

// Per channel, one thread each: dscale, dbias and the coefficients of
// dx = k_dy * dy + k_xmu * (x - mean) + k_const (4 values of acc_t<T> per channel).
template <typename T>
__global__ void BatchNormGradSumsKernel(const T* dy, const T* x, const T* scale, const T* mean_in, const T* var_in,
                                        T* dscale, T* dbias, acc_t<T>* coef, int64_t n, int64_t c, int64_t s,
                                        int training, double eps) {
  using S = acc_t<T>;
  const BatchNormGeometry g{n, c, s};
  OPF_GRID_STRIDE_LOOP(ch, c) {
    const S mean = static_cast<S>(Load(mean_in[ch]));
    const S var = static_cast<S>(Load(var_in[ch]));
    const BatchNormGradSums<T> sums = BatchNormGradChannelSums(dy, x, g, ch, mean);
    BatchNormGradStoreChannel(scale, dscale, dbias, coef, ch, mean, var, sums, g.count(), training, eps);
  }
}

// BatchNormGradSumsKernel with a block of kBlock threads per channel: sum(dy) and sum(dy * (x - mean)).
template <typename T, int kBlock>
__global__ void BatchNormGradSumsRowsKernel(const T* dy, const T* x, const T* scale, const T* mean_in,
                                            const T* var_in, T* dscale, T* dbias, acc_t<T>* coef, int64_t n,
                                            int64_t c, int64_t s, int training, double eps) {
  using S = acc_t<T>;
  __shared__ S cells[kBlock / 32 + 1];
  const BatchNormGeometry g{n, c, s};
  const int64_t m = g.count();
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const S mean = static_cast<S>(Load(mean_in[ch]));
    S sdy = 0, sdx = 0;
    for (int64_t k = threadIdx.x; k < m; k += kBlock) {
      const int64_t i = g.Index(k / s, ch, k % s);
      const S d = static_cast<S>(Load(dy[i]));
      sdy += d;
      sdx += d * (static_cast<S>(Load(x[i])) - mean);
    }
    const BatchNormGradSums<T> sums{BlockSum<S, kBlock>(sdy, cells), BlockSum<S, kBlock>(sdx, cells)};
    if (threadIdx.x == 0)
      BatchNormGradStoreChannel(scale, dscale, dbias, coef, ch, mean, static_cast<S>(Load(var_in[ch])), sums, m,
                                training, eps);
  }
}

template <typename T>
__global__ void BatchNormGradDxKernel(const T* dy, const T* x, const acc_t<T>* coef, T* dx, int64_t numel, int64_t c,
                                      int64_t s) {
  OPF_GRID_STRIDE_LOOP(i, numel) {
    const int64_t ch = (i / s) % c;
    const BatchNormGradDx<T> f{coef[4 * ch], coef[4 * ch + 1], coef[4 * ch + 2], coef[4 * ch + 3]};
    dx[i] = f(dy[i], x[i]);
  }
}

template <typename T>
__global__ void LayerNormKernel(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* var, int64_t rows,
                                int64_t m, int64_t p, double eps) {
  OPF_GRID_STRIDE_LOOP(r, rows) {
    if (m == 0) {
      mean[r] = var[r] = Store<T>(limits::QuietNaN<compute_t<T>>());
      continue;
    }
    LayerNormRow(x + r * m, gamma, beta, y + r * m, mean + r, var + r, m, p, r * m, eps);
  }
}

template <typename T>
__global__ void LayerNormGradDxKernel(const T* x, const T* dy, const T* var, const T* mean, const T* gamma, T* dx,
                                      int64_t rows, int64_t m, int64_t p, double eps) {
  OPF_GRID_STRIDE_LOOP(r, rows) {
    if (m == 0) continue;
    LayerNormGradRow(x + r * m, dy + r * m, gamma, mean[r], var[r], dx + r * m, m, p, r * m, eps);
  }
}

template <typename T>
__global__ void LayerNormGradParamKernel(const T* x, const T* dy, const T* var, const T* mean, T* dgamma, T* dbeta,
                                         int64_t total, int64_t m, int64_t p, double eps) {
  OPF_GRID_STRIDE_LOOP(q, p) { LayerNormGradParam(x, dy, mean, var, dgamma, dbeta, q, total, m, p, eps); }
}

// Where gamma and beta (p elements) meet row r's element k: they repeat every p elements of the flat input,
// and p == m, or p divides m (then every row starts at gamma[0]), or m divides p. One 64-bit remainder a
// row, none an element where p >= m (64-bit division is slow on a GPU).
struct LayerParamIndex {
  int64_t first, m, p;  // first: the index of the row's element 0

  __device__ static LayerParamIndex ForRow(int64_t r, int64_t m, int64_t p) {
    return {p > m ? (r * m) % p : 0, m, p};
  }
  __device__ int64_t operator()(int64_t k) const { return p == m ? k : p > m ? first + k : k % p; }
};

// LayerNorm with a block of kBlock threads per row of m >= 1 elements (rows taken block by block): the
// mean, then the biased variance about it (two passes, as the CPU), then y; coalesced and deterministic.
template <typename T, int kBlock>
__global__ void LayerNormRowsKernel(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* var, int64_t rows,
                                    int64_t m, int64_t p, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  __shared__ S cells[kBlock / 32 + 1];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * m;
    T* yr = y + r * m;
    S sum = 0;
    for (int64_t j = threadIdx.x; j < m; j += kBlock) sum += static_cast<S>(Load(xr[j]));
    const S mu = BlockSum<S, kBlock>(sum, cells) / static_cast<S>(m);
    S sq = 0;
    for (int64_t j = threadIdx.x; j < m; j += kBlock) {
      const S d = static_cast<S>(Load(xr[j])) - mu;
      sq += d * d;
    }
    const S v = BlockSum<S, kBlock>(sq, cells) / static_cast<S>(m);
    const S rstd = InvStd(v, eps);
    const LayerParamIndex param = LayerParamIndex::ForRow(r, m, p);
    for (int64_t j = threadIdx.x; j < m; j += kBlock) {
      const int64_t q = param(j);
      const S out = LayerNormElement(static_cast<S>(Load(xr[j])), mu, rstd, static_cast<S>(Load(gamma[q])),
                                     static_cast<S>(Load(beta[q])));
      yr[j] = Store<T>(static_cast<C>(out));
    }
    if (threadIdx.x == 0) {
      mean[r] = Store<T>(static_cast<C>(mu));
      var[r] = Store<T>(static_cast<C>(v));
    }
  }
}

// LayerNorm with a group of kGroup threads per row (a warp, several rows to a block, or the block), the row
// in their registers (RegisterRow): rows of m <= kGroup * kPer elements, read once and written once. The
// mean, then the biased variance about it (two passes over the registers, as the CPU's two over memory),
// then y. The per-element math in compute_t<T>, a thread's partial sums widened to acc_t<T> for the
// group's sums. gamma and beta (p elements) repeat every p elements of the flat input: p == m, or p
// divides m, or m divides p. The launch bounds count 32 bytes of registers besides the row's (gamma, beta,
// indices).
template <typename T, int kGroup, int kPer>
__global__ void __launch_bounds__(kRegisterBlockThreads<kGroup>,
                                  kRegisterBlocksPerSm<kGroup, kPer * sizeof(compute_t<T>) + 32>)
    LayerNormRegisterKernel(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* var, int64_t rows,
                            int64_t m, int64_t p, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  static_assert(kRegisterRowFits<kGroup, kPer * sizeof(compute_t<T>) + 32>, "a block too large for its registers");
  __shared__ S cells[kGroup == 32 ? 1 : kGroup / 32 + 1];
  RegisterRow<T, kGroup, kPer> row(RowsPackable<T, RegisterRow<T, kGroup, kPer>::kW>(m, x, y));
  ForEachGroupRow<kGroup>(rows, [&](int64_t r) {
    row.Read(x + r * m, m, C(0));
    C part = C(0);
#pragma unroll
    for (int j = 0; j < kPer; ++j) part += row.v[j];  // the padding reads 0
    const S mu = GroupReduce<kGroup, false>(static_cast<S>(part), cells) / static_cast<S>(m);
    const C mu_c = static_cast<C>(mu);
    part = C(0);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const C d = row.v[j] - mu_c;
      if (row.Index(j) < m) part += d * d;
    }
    const S v = GroupReduce<kGroup, false>(static_cast<S>(part), cells) / static_cast<S>(m);
    const C rstd = static_cast<C>(InvStd(v, eps));
    const LayerParamIndex param = LayerParamIndex::ForRow(r, m, p);
    row.Write(y + r * m, m, [&](C value, int64_t k) {
      const int64_t q = param(k);
      return LayerNormElement(value, mu_c, rstd, static_cast<C>(Load(gamma[q])), static_cast<C>(Load(beta[q])));
    });
    if (row.lane == 0) {
      mean[r] = Store<T>(static_cast<C>(mu));
      var[r] = Store<T>(static_cast<C>(v));
    }
  });
}

// LayerNormGrad's dx with a block per row of m >= 1 elements: sum(g) and sum(g * xhat), then dx.
template <typename T, int kBlock>
__global__ void LayerNormGradDxRowsKernel(const T* x, const T* dy, const T* var, const T* mean, const T* gamma, T* dx,
                                          int64_t rows, int64_t m, int64_t p, double eps) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  __shared__ S cells[kBlock / 32 + 1];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * m;
    const T* dyr = dy + r * m;
    const S mu = static_cast<S>(Load(mean[r]));
    const S rstd = InvStd(static_cast<S>(Load(var[r])), eps);
    const LayerParamIndex param = LayerParamIndex::ForRow(r, m, p);
    S sg = 0, sgx = 0;
    for (int64_t j = threadIdx.x; j < m; j += kBlock) {
      const S g = static_cast<S>(Load(dyr[j])) * static_cast<S>(Load(gamma[param(j)]));
      sg += g;
      sgx += g * (static_cast<S>(Load(xr[j])) - mu) * rstd;
    }
    const S inv_m = S(1) / static_cast<S>(m);
    const S mg = BlockSum<S, kBlock>(sg, cells) * inv_m;
    const S mgx = BlockSum<S, kBlock>(sgx, cells) * inv_m;
    for (int64_t j = threadIdx.x; j < m; j += kBlock) {
      const S g = static_cast<S>(Load(dyr[j])) * static_cast<S>(Load(gamma[param(j)]));
      const S xhat = (static_cast<S>(Load(xr[j])) - mu) * rstd;
      dx[r * m + j] = Store<T>(static_cast<C>(LayerNormGradElement(g, xhat, rstd, mg, mgx)));
    }
  }
}

}  // namespace cuda
}  // namespace opforge
