// L2Loss, SmoothL1Loss, SmoothL1LossGrad, BCEWithLogitsLoss, NLLLoss, NLLLossGrad on the GPU with the math of opforge/functors/loss.h (shared
// with csrc/kernels/cpu/loss_norm.cc): the terms of a sum go to a double workspace, one thread per
// element, and the passes of reduce.cuh add them up (TermSum: the sum; TermMean: the sum / count).
// Instantiated by name (opforge/kernels/gpu/loss_norm.py).
#include "opforge/cuda.h"
#include "opforge/functors/loss.h"
#include "reduce.cuh"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void L2LossTermsKernel(const T* x, double* terms, int64_t n) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    const double v = static_cast<double>(Load(x[i]));
    terms[i] = 0.5 * v * v;
  }
}

template <typename T>
__global__ void SmoothL1TermsKernel(const T* x, const T* y, double* terms, int64_t n, double beta) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    terms[i] = SmoothL1(static_cast<double>(Load(x[i])) - static_cast<double>(Load(y[i])), beta);
  }
}

template <typename T>
__global__ void SmoothL1NoneKernel(const T* x, const T* y, T* out, int64_t n, double beta) {
  using S = acc_t<T>;
  OPF_GRID_STRIDE_LOOP(i, n) {
    const S v = SmoothL1(static_cast<S>(Load(x[i])) - static_cast<S>(Load(y[i])), static_cast<S>(beta));
    out[i] = Store<T>(static_cast<compute_t<T>>(v));
  }
}

// reduction 0: dx = g * dout[i]; else dx = g * dout[0] * scale (scale 1 / n for "mean").
template <typename T>
__global__ void SmoothL1LossGradKernel(const T* x, const T* y, const T* dout, T* dx, int64_t n, double beta,
                                       int reduction, double scale) {
  using S = acc_t<T>;
  OPF_GRID_STRIDE_LOOP(i, n) {
    const S g = SmoothL1Grad(static_cast<S>(Load(x[i])) - static_cast<S>(Load(y[i])), static_cast<S>(beta));
    const S d = reduction == 0 ? static_cast<S>(Load(dout[i])) : static_cast<S>(Load(dout[0])) * static_cast<S>(scale);
    dx[i] = Store<T>(static_cast<compute_t<T>>(g * d));
  }
}

template <typename T>
__global__ void BceTermsKernel(const T* x, const T* y, const T* w, const T* pw, double* terms, int64_t n) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    terms[i] = BceWithLogits(static_cast<double>(Load(x[i])), static_cast<double>(Load(y[i])),
                             static_cast<double>(Load(w[i])), static_cast<double>(Load(pw[i])));
  }
}

template <typename T>
__global__ void BceNoneKernel(const T* x, const T* y, const T* w, const T* pw, T* out, int64_t n) {
  using S = acc_t<T>;
  OPF_GRID_STRIDE_LOOP(i, n) {
    const S v = BceWithLogits(static_cast<S>(Load(x[i])), static_cast<S>(Load(y[i])), static_cast<S>(Load(w[i])),
                              static_cast<S>(Load(pw[i])));
    out[i] = Store<T>(static_cast<compute_t<T>>(v));
  }
}

// NLLLoss: one thread walks the rows in order (the labels are range_check.cu's checked copy), so the sums
// are the CPU's.
template <typename T, typename L>
__global__ void NllLossKernel(const T* x, const L* t, const T* w, T* loss, T* total, int64_t n, int64_t c,
                              int64_t ignore, int reduction) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  OPF_GRID_STRIDE_LOOP(unused, 1) {
    S sum = 0, tw = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = static_cast<int64_t>(t[i]);
      S l = 0;
      if (k != ignore) {
        const S wk = static_cast<S>(Load(w[k]));
        l = -wk * static_cast<S>(Load(x[i * c + k]));
        tw += wk;
      }
      if (reduction == 0) loss[i] = Store<T>(static_cast<C>(l));
      sum += l;
    }
    if (reduction != 0) loss[0] = Store<T>(static_cast<C>(reduction == 2 ? sum / tw : sum));
    total[0] = Store<T>(static_cast<C>(tw));
  }
}

// NLLLossGrad: one thread per row writes that row of dlogits.
template <typename T, typename L>
__global__ void NllLossGradKernel(const T* dout, const L* t, const T* w, const T* total, T* dx, int64_t n,
                                  int64_t c, int64_t ignore, int reduction) {
  using S = acc_t<T>;
  using C = compute_t<T>;
  OPF_GRID_STRIDE_LOOP(i, n) {
    for (int64_t j = 0; j < c; ++j) dx[i * c + j] = Store<T>(C(0));
    const int64_t k = static_cast<int64_t>(t[i]);
    if (k == ignore) continue;
    S d = static_cast<S>(Load(dout[reduction == 0 ? i : 0]));
    if (reduction == 2) d /= static_cast<S>(Load(total[0]));
    dx[i * c + k] = Store<T>(static_cast<C>(-static_cast<S>(Load(w[k])) * d));
  }
}

template <typename T>
struct TermSum {
  using A = double;
  static OPF_HD A Identity() { return 0.0; }
  static OPF_HD A Widen(double v) { return v; }
  static OPF_HD A Combine(A a, A b) { return a + b; }
  static OPF_HD T Finish(A total, int64_t) { return Store<T>(static_cast<compute_t<T>>(total)); }
  static OPF_HD bool EmptyOk() { return true; }
  static OPF_HD T Empty() { return Store<T>(compute_t<T>(0)); }
};

template <typename T>
struct TermMean : TermSum<T> {
  using A = double;
  static OPF_HD T Finish(A total, int64_t n) {
    return Store<T>(static_cast<compute_t<T>>(total / static_cast<double>(n)));
  }
  static OPF_HD T Empty() { return Store<T>(limits::QuietNaN<compute_t<T>>()); }
};

}  // namespace cuda
}  // namespace opforge
