// L2Loss, SmoothL1Loss, SmoothL1LossGrad on the GPU with the math of opforge/functors/loss.h (shared
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
