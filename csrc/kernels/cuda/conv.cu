// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (NCHW): one thread per output element, the direct
// sums of opforge/functors/conv.h (ConvOutputAt, ConvInputGradAt, ConvFilterGradAt), accumulated in
// acc_t<T>. No shared memory, so the tests' host emulation runs them. The geometry travels as int64
// scalars (opforge/kernels/gpu/conv.py packs them).
#include "opforge/cuda.h"
#include "opforge/functors/conv.h"

namespace opforge {
namespace cuda {

#define OPF_WINDOW_PARAMS                                                                                      \
  int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow, int64_t kh, int64_t kw,      \
      int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl, int64_t group
#define OPF_WINDOW_MAKE(g) const Window2D g = {n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group}

template <typename T>
__global__ void Conv2DKernel(const T* x, const T* wt, T* y, OPF_WINDOW_PARAMS) {
  OPF_WINDOW_MAKE(g);
  OPF_GRID_STRIDE_LOOP(i, g.n * g.oc * g.oh * g.ow) {
    const int64_t j = i % g.ow, r = i / g.ow;
    const int64_t ii = r % g.oh, r2 = r / g.oh;
    const int64_t o = r2 % g.oc, b = r2 / g.oc;
    y[i] = Store<T>(ConvOutputAt(x, wt, g, b, o, ii, j));
  }
}

template <typename T>
__global__ void Conv2DBackpropInputKernel(const T* dy, const T* wt, T* dx, OPF_WINDOW_PARAMS) {
  OPF_WINDOW_MAKE(g);
  OPF_GRID_STRIDE_LOOP(i, g.n * g.c * g.h * g.w) {
    const int64_t xx = i % g.w, r = i / g.w;
    const int64_t y = r % g.h, r2 = r / g.h;
    const int64_t ch = r2 % g.c, b = r2 / g.c;
    dx[i] = Store<T>(ConvInputGradAt(dy, wt, g, b, ch, y, xx));
  }
}

template <typename T>
__global__ void Conv2DBackpropFilterKernel(const T* dy, const T* x, T* dw_out, OPF_WINDOW_PARAMS) {
  OPF_WINDOW_MAKE(g);
  const int64_t cg = g.c / g.group;
  OPF_GRID_STRIDE_LOOP(i, g.oc * cg * g.kh * g.kw) {
    const int64_t q = i % g.kw, r = i / g.kw;
    const int64_t p = r % g.kh, r2 = r / g.kh;
    const int64_t ci = r2 % cg, o = r2 / cg;
    dw_out[i] = Store<T>(ConvFilterGradAt(dy, x, g, o, ci, p, q));
  }
}

}  // namespace cuda
}  // namespace opforge
