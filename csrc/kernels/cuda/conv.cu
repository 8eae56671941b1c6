// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (NCHW) by im2col + the runtime's GEMM (cuBLAS), as the
// CPU does with BLAS (csrc/kernels/cpu/conv.cc). opforge/kernels/gpu/conv.py runs the batch in chunks of
// samples [b0, b0 + nb) and calls the GEMMs between these kernels.
//
// The columns of a chunk are laid out [nb, c, kh, kw, oh, ow] == [nb, group, K, P] (K = c / group * kh * kw,
// P = oh * ow), so the weights viewed as [group, oc / group, K] times the columns give [nb, oc, oh, ow]: the
// NCHW output, with no copy. Col2Im takes a thread per input element summing the column entries that read
// it (no atomics: the same inputs give the same bits). Where a group has one output channel (depthwise), the
// forward and the input gradient are the direct sums instead (below). Window math of opforge/functors/conv.h;
// no shared memory, so the tests' host emulation runs them. The geometry travels as int64 scalars.
#include "opforge/cuda.h"
#include "opforge/functors/conv.h"

namespace opforge {
namespace cuda {

#define OPF_WINDOW_PARAMS                                                                                      \
  int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow, int64_t kh, int64_t kw,      \
      int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl, int64_t group
#define OPF_WINDOW_MAKE(g) const Window2D g = {n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group}

// col[s, ch, p, q, i, j] = x[b0 + s, ch, i * sh - pt + p * dh, j * sw - pl + q * dw] (0 outside the input),
// s < nb: a thread per (s, ch, i, j), writing its kh * kw entries (P apart, so a warp's writes are adjacent).
template <typename T>
__global__ void Im2ColKernel(const T* x, T* col, int64_t b0, int64_t nb, OPF_WINDOW_PARAMS) {
  OPF_WINDOW_MAKE(g);
  const int64_t p_size = g.oh * g.ow;
  const T zero = Store<T>(compute_t<T>(0));
  OPF_GRID_STRIDE_LOOP(i, nb * g.c * p_size) {
    const QuotRem jr = DivMod(i, g.ow), rp = DivMod(jr.quot, g.oh);
    const int64_t j = jr.rem, row = rp.rem, plane = rp.quot;  // plane: s * c + ch
    const T* src = x + (b0 * g.c + plane) * g.h * g.w;
    T* dst = col + plane * g.kh * g.kw * p_size + row * g.ow + j;
    const int64_t y0 = row * g.sh - g.pt, x0 = j * g.sw - g.pl;
    for (int64_t p = 0; p < g.kh; ++p) {
      const int64_t y = y0 + p * g.dh;
      const bool inside = y >= 0 && y < g.h;
      for (int64_t q = 0; q < g.kw; ++q) {
        const int64_t xx = x0 + q * g.dw;
        dst[(p * g.kw + q) * p_size] = inside && xx >= 0 && xx < g.w ? src[y * g.w + xx] : zero;
      }
    }
  }
}

// dx[b0 + s, ch, y, xx] = the sum of the column entries Im2ColKernel would read it into, accumulated in
// acc_t<T>: a thread per input element of the chunk.
template <typename T>
__global__ void Col2ImKernel(const T* col, T* dx, int64_t b0, int64_t nb, OPF_WINDOW_PARAMS) {
  using A = acc_t<T>;
  OPF_WINDOW_MAKE(g);
  const int64_t p_size = g.oh * g.ow, hw = g.h * g.w;
  OPF_GRID_STRIDE_LOOP(i, nb * g.c * hw) {
    const QuotRem xr = DivMod(i, g.w), yp = DivMod(xr.quot, g.h);
    const int64_t xx = xr.rem, y = yp.rem, plane = yp.quot;
    const T* src = col + plane * g.kh * g.kw * p_size;
    A s = A(0);
    for (int64_t p = 0; p < g.kh; ++p) {
      const int64_t ty = y + g.pt - p * g.dh;  // row * sh
      if (ty < 0) break;                      // and for every later p
      const QuotRem row = g.sh == 1 ? QuotRem{ty, 0} : DivMod(ty, g.sh);
      if (row.rem != 0 || row.quot >= g.oh) continue;
      for (int64_t q = 0; q < g.kw; ++q) {
        const int64_t tx = xx + g.pl - q * g.dw;
        if (tx < 0) break;
        const QuotRem col_j = g.sw == 1 ? QuotRem{tx, 0} : DivMod(tx, g.sw);
        if (col_j.rem != 0 || col_j.quot >= g.ow) continue;
        s += static_cast<A>(Load(src[(p * g.kw + q) * p_size + row.quot * g.ow + col_j.quot]));
      }
    }
    dx[b0 * g.c * hw + i] = Store<T>(static_cast<compute_t<T>>(s));
  }
}

// dst[dst_offset + e] = src[src_offset + e], e < count: a chunk's rows in and out of a whole tensor.
template <typename T>
__global__ void CopySpanKernel(const T* src, int64_t src_offset, T* dst, int64_t dst_offset, int64_t count) {
  OPF_GRID_STRIDE_LOOP(e, count) { dst[dst_offset + e] = src[src_offset + e]; }
}

// dw[grp, o, kk] (+)= sum over s < nb of part[s, grp, kk, o]: the filter gradient of a chunk, from its
// per-sample GEMMs [nb, group, K, og], summed in sample order (acc_t<T>); `accumulate` adds to dw.
template <typename T>
__global__ void SampleSumKernel(const T* part, T* dw, int64_t nb, int64_t group, int64_t og, int64_t k,
                                int64_t accumulate) {
  using A = acc_t<T>;
  const int64_t per_sample = group * k * og;
  OPF_GRID_STRIDE_LOOP(i, per_sample) {
    const QuotRem kr = DivMod(i, k), og_r = DivMod(kr.quot, og);
    const T* src = part + (og_r.quot * k + kr.rem) * og + og_r.rem;
    A s = accumulate ? static_cast<A>(Load(dw[i])) : A(0);
    for (int64_t b = 0; b < nb; ++b) s += static_cast<A>(Load(src[b * per_sample]));
    dw[i] = Store<T>(static_cast<compute_t<T>>(s));
  }
}

// The direct sums of opforge/functors/conv.h, a thread per output element: Conv2D and Conv2DBackpropInput
// where a group has one output channel (depthwise among them), whose GEMM would be a matrix-vector product.
template <typename T>
__global__ void Conv2DKernel(const T* x, const T* wt, T* y, OPF_WINDOW_PARAMS) {
  OPF_WINDOW_MAKE(g);
  OPF_GRID_STRIDE_LOOP(i, g.n * g.oc * g.oh * g.ow) {
    const QuotRem j = DivMod(i, g.ow), ii = DivMod(j.quot, g.oh), o = DivMod(ii.quot, g.oc);
    y[i] = Store<T>(ConvOutputAt(x, wt, g, o.quot, o.rem, ii.rem, j.rem));
  }
}

template <typename T>
__global__ void Conv2DBackpropInputKernel(const T* dy, const T* wt, T* dx, OPF_WINDOW_PARAMS) {
  OPF_WINDOW_MAKE(g);
  OPF_GRID_STRIDE_LOOP(i, g.n * g.c * g.h * g.w) {
    const QuotRem xx = DivMod(i, g.w), y = DivMod(xx.quot, g.h), ch = DivMod(y.quot, g.c);
    dx[i] = Store<T>(ConvInputGradAt(dy, wt, g, ch.quot, ch.rem, y.rem, xx.rem));
  }
}

}  // namespace cuda
}  // namespace opforge
