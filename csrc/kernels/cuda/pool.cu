// MaxPool, AvgPool (NCHW) and MaxPoolGrad, AvgPoolGrad, AdaptiveAvgPool2D and its gradient: one thread per output (forward) or per input
// element (gradients, which gather from the outputs whose windows cover it, so no atomics), with the
// window math of opforge/functors/conv.h that the CPU kernels use.
#include "opforge/cuda.h"
#include "opforge/functors/conv.h"

namespace opforge {
namespace cuda {

#define OPF_POOL_PARAMS                                                                                     \
  int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh,  \
      int64_t sw, int64_t pt, int64_t pl
#define OPF_POOL_MAKE(g) const Window2D g = {n, c, h, w, c, oh, ow, kh, kw, sh, sw, 1, 1, pt, pl, 1}

template <typename T, bool kMax>
__global__ void PoolKernel(const T* x, T* y, OPF_POOL_PARAMS) {
  OPF_POOL_MAKE(g);
  OPF_GRID_STRIDE_LOOP(i, g.n * g.c * g.oh * g.ow) {
    const int64_t j = i % g.ow, r = i / g.ow;
    const int64_t ii = r % g.oh, plane = r / g.oh;
    const T* xp = x + plane * g.h * g.w;
    if (kMax) {
      const int64_t a = MaxPoolArgmax(xp, g, ii, j);
      y[i] = a >= 0 ? xp[a] : Store<T>(-limits::Infinity<compute_t<T>>());
    } else {
      y[i] = Store<T>(AvgPoolWindow(xp, g, ii, j));
    }
  }
}

template <typename T, bool kMax>
__global__ void PoolGradKernel(const T* x, const T* out, const T* dy, T* dx, OPF_POOL_PARAMS) {
  OPF_POOL_MAKE(g);
  using A = acc_t<T>;
  (void)out;
  OPF_GRID_STRIDE_LOOP(i, g.n * g.c * g.h * g.w) {
    const int64_t xx = i % g.w, r = i / g.w;
    const int64_t y = r % g.h, plane = r / g.h;
    const T* xp = x + plane * g.h * g.w;
    const T* dp = dy + plane * g.oh * g.ow;
    int64_t i0, i1, j0, j1;
    CoveringOutputs(y, g.kh, g.sh, g.pt, g.oh, &i0, &i1);
    CoveringOutputs(xx, g.kw, g.sw, g.pl, g.ow, &j0, &j1);
    A s = A(0);
    for (int64_t oi = i0; oi < i1; ++oi) {
      for (int64_t oj = j0; oj < j1; ++oj) {
        const A d = static_cast<A>(Load(dp[oi * g.ow + oj]));
        if (kMax) {
          if (MaxPoolArgmax(xp, g, oi, oj) == y * g.w + xx) s += d;
        } else {
          s += d / static_cast<A>(AvgPoolCount(g, oi, oj));
        }
      }
    }
    dx[i] = Store<T>(static_cast<compute_t<T>>(s));
  }
}

// MaxPoolGradGrad: one thread per output, grad at its window's maximum.
template <typename T>
__global__ void MaxPoolGradGradKernel(const T* x, const T* out, const T* grad, T* y, OPF_POOL_PARAMS) {
  OPF_POOL_MAKE(g);
  (void)out;
  OPF_GRID_STRIDE_LOOP(i, g.n * g.c * g.oh * g.ow) {
    const int64_t j = i % g.ow, r = i / g.ow;
    const int64_t ii = r % g.oh, plane = r / g.oh;
    const int64_t a = MaxPoolArgmax(x + plane * g.h * g.w, g, ii, j);
    y[i] = a >= 0 ? grad[plane * g.h * g.w + a] : Store<T>(compute_t<T>(0));
  }
}

// AdaptiveAvgPool2D (kGrad false: src x, one thread per output) and AdaptiveAvgPool2DGrad (kGrad true: src dy,
// one thread per input element gathering from the outputs whose windows hold it: no atomics), over
// `planes` planes of [h, w] input and [oh, ow] output, by the functors the CPU kernels use.
template <typename T, bool kGrad>
__global__ void AdaptiveAvgPoolKernel(const T* src, T* dst, int64_t planes, int64_t h, int64_t w, int64_t oh,
                                      int64_t ow) {
  const int64_t rows = kGrad ? h : oh, cols = kGrad ? w : ow;
  const int64_t src_plane = kGrad ? oh * ow : h * w;
  OPF_GRID_STRIDE_LOOP(e, planes * rows * cols) {
    const int64_t j = e % cols, r = e / cols;
    const int64_t i = r % rows, plane = r / rows;
    const T* sp = src + plane * src_plane;
    dst[e] = Store<T>(kGrad ? AdaptiveAvgPoolGradAt(sp, h, w, oh, ow, i, j) : AdaptiveAvgPoolAt(sp, h, w, oh, ow, i, j));
  }
}

}  // namespace cuda
}  // namespace opforge
