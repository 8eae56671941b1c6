// The geometry and window math of Conv2D, MaxPool, AvgPool and AdaptiveAvgPool2D (NCHW) and their gradients, shared by the
// CPU kernels (csrc/kernels/cpu/conv.cc, pool.cc) and the CUDA kernels (csrc/kernels/cuda/conv.cu,
// pool.cu). Host and device; no standard library (NVRTC has none).
#pragma once

#include "opforge/functors/reduce.h"
#include "opforge/half.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// One 2-D window problem: input [n, c, h, w] -> output [n, oc, oh, ow], window kh x kw with strides,
// dilations and the padding before each dim (top, left). For pooling oc == c and the dilation is 1.
struct Window2D {
  int64_t n, c, h, w;
  int64_t oc, oh, ow;
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;
  int64_t group;
};

// The padding of one dim, by MindSpore's rules: "valid" none, "same" the total needed for
// out = ceil(size / stride) split with the smaller half before, "pad" the explicit one.
OPF_HD int64_t SamePadBefore(int64_t size, int64_t out, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  int64_t total = (out - 1) * stride + span - size;
  if (total < 0) total = 0;
  return total / 2;
}

// The range [first, last) of outputs along one dim whose windows hold input position i (stride s,
// dilation 1, padding before p, kernel k, out outputs).
OPF_HD void CoveringOutputs(int64_t i, int64_t k, int64_t s, int64_t p, int64_t out, int64_t* first, int64_t* last) {
  const int64_t hi = i + p;  // o * s <= i + p  and  o * s + k - 1 >= i + p
  int64_t lo = hi - k + 1;
  int64_t f = lo <= 0 ? 0 : (lo + s - 1) / s;
  int64_t l = hi / s + 1;
  if (l > out) l = out;
  *first = f;
  *last = l;
}

// The offsets [first, last) into a window of k elements starting at `start` (negative in the padding) that
// fall inside [0, size): a pooling loop runs over these only, so a window far larger than its input (the
// kernel size is an attr, not a tensor) costs only the input it covers. Empty where none does.
OPF_HD void ClippedWindow(int64_t start, int64_t k, int64_t size, int64_t* first, int64_t* last) {
  *first = start < 0 ? -start : 0;
  *last = size - start < k ? size - start : k;
}

// The index (into the [h, w] plane) of the maximum of the window of output (i, j): the first one on
// ties, a NaN wins (and the first NaN stays). -1 when the window holds no input element.
template <typename T>
OPF_HD int64_t MaxPoolArgmax(const T* plane, const Window2D& g, int64_t i, int64_t j) {
  using C = compute_t<T>;
  int64_t best = -1;
  C m = C(0);
  int64_t p0, p1, q0, q1;
  ClippedWindow(i * g.sh - g.pt, g.kh, g.h, &p0, &p1);
  ClippedWindow(j * g.sw - g.pl, g.kw, g.w, &q0, &q1);
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t y = i * g.sh - g.pt + p;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t x = j * g.sw - g.pl + q;
      const C v = Load(plane[y * g.w + x]);
      if (best < 0 || (!math::IsNan(m) && (v > m || math::IsNan(v)))) {
        best = y * g.w + x;
        m = v;
      }
    }
  }
  return best;
}

// The number of input elements in the window of output (i, j) (AvgPool's divisor).
OPF_HD int64_t AvgPoolCount(const Window2D& g, int64_t i, int64_t j) {
  int64_t y0 = i * g.sh - g.pt, x0 = j * g.sw - g.pl;
  int64_t y1 = y0 + g.kh, x1 = x0 + g.kw;
  if (y0 < 0) y0 = 0;
  if (x0 < 0) x0 = 0;
  if (y1 > g.h) y1 = g.h;
  if (x1 > g.w) x1 = g.w;
  return (y1 > y0 && x1 > x0) ? (y1 - y0) * (x1 - x0) : 0;
}

// The mean of the window of output (i, j) over its input elements, accumulated in acc_t<T>.
template <typename T>
OPF_HD compute_t<T> AvgPoolWindow(const T* plane, const Window2D& g, int64_t i, int64_t j) {
  using A = acc_t<T>;
  A s = A(0);
  int64_t p0, p1, q0, q1;
  ClippedWindow(i * g.sh - g.pt, g.kh, g.h, &p0, &p1);
  ClippedWindow(j * g.sw - g.pl, g.kw, g.w, &q0, &q1);
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t y = i * g.sh - g.pt + p;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t x = j * g.sw - g.pl + q;
      s += static_cast<A>(Load(plane[y * g.w + x]));
    }
  }
  const int64_t count = AvgPoolCount(g, i, j);
  return static_cast<compute_t<T>>(count > 0 ? s / static_cast<A>(count) : A(0));
}

// AdaptiveAvgPool2D's windows along one dim of `in` elements pooled to `out`: output i averages
// [floor(i * in / out), ceil((i + 1) * in / out)), MindSpore's (and PyTorch's) rule.
OPF_HD int64_t AdaptiveStart(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
OPF_HD int64_t AdaptiveEnd(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

// The mean of the window of output (i, j) of one [h, w] plane pooled to [oh, ow], accumulated in acc_t<T>.
template <typename T>
OPF_HD compute_t<T> AdaptiveAvgPoolAt(const T* plane, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t i,
                                      int64_t j) {
  using A = acc_t<T>;
  const int64_t y0 = AdaptiveStart(i, h, oh), y1 = AdaptiveEnd(i, h, oh);
  const int64_t x0 = AdaptiveStart(j, w, ow), x1 = AdaptiveEnd(j, w, ow);
  A s = A(0);
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) s += static_cast<A>(Load(plane[y * w + x]));
  return static_cast<compute_t<T>>(s / static_cast<A>((y1 - y0) * (x1 - x0)));
}

// The gradient of AdaptiveAvgPool2D at input (y, x) of one plane: the sum over the outputs whose windows
// hold it of dout / window size. Output i's window holds y exactly for i in
// [floor(y * out / in), ceil((y + 1) * out / in)), clamped to the outputs.
template <typename T>
OPF_HD compute_t<T> AdaptiveAvgPoolGradAt(const T* dplane, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t y,
                                          int64_t x) {
  using A = acc_t<T>;
  const int64_t i0 = (y * oh) / h, j0 = (x * ow) / w;
  int64_t i1 = ((y + 1) * oh + h - 1) / h, j1 = ((x + 1) * ow + w - 1) / w;
  if (i1 > oh) i1 = oh;
  if (j1 > ow) j1 = ow;
  A s = A(0);
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t rows = AdaptiveEnd(i, h, oh) - AdaptiveStart(i, h, oh);
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t count = rows * (AdaptiveEnd(j, w, ow) - AdaptiveStart(j, w, ow));
      s += static_cast<A>(Load(dplane[i * ow + j])) / static_cast<A>(count);
    }
  }
  return static_cast<compute_t<T>>(s);
}

// One Conv2D output element out[b, o, i, j] by the direct sum (the GPU's kernel where a group has one output
// channel, depthwise among them: there a GEMM would reuse nothing; else both backends use GEMM).
template <typename T>
OPF_HD compute_t<T> ConvOutputAt(const T* x, const T* w, const Window2D& g, int64_t b, int64_t o, int64_t i,
                                 int64_t j) {
  using A = acc_t<T>;
  const int64_t cg = g.c / g.group, og = g.oc / g.group;
  const int64_t c0 = (o / og) * cg;
  A s = A(0);
  for (int64_t c = 0; c < cg; ++c) {
    const T* xp = x + ((b * g.c) + c0 + c) * g.h * g.w;
    const T* wp = w + ((o * cg) + c) * g.kh * g.kw;
    for (int64_t p = 0; p < g.kh; ++p) {
      const int64_t y = i * g.sh - g.pt + p * g.dh;
      if (y < 0 || y >= g.h) continue;
      for (int64_t q = 0; q < g.kw; ++q) {
        const int64_t xx = j * g.sw - g.pl + q * g.dw;
        if (xx < 0 || xx >= g.w) continue;
        s += static_cast<A>(Load(xp[y * g.w + xx])) * static_cast<A>(Load(wp[p * g.kw + q]));
      }
    }
  }
  return static_cast<compute_t<T>>(s);
}

// dx[b, c, y, xx] of Conv2D: the sum over the outputs whose windows read it.
template <typename T>
OPF_HD compute_t<T> ConvInputGradAt(const T* dout, const T* w, const Window2D& g, int64_t b, int64_t c, int64_t y,
                                    int64_t xx) {
  using A = acc_t<T>;
  const int64_t cg = g.c / g.group, og = g.oc / g.group;
  const int64_t grp = c / cg, ci = c % cg;
  A s = A(0);
  for (int64_t p = 0; p < g.kh; ++p) {
    const int64_t ty = y + g.pt - p * g.dh;
    if (ty < 0 || ty % g.sh != 0) continue;
    const int64_t i = ty / g.sh;
    if (i >= g.oh) continue;
    for (int64_t q = 0; q < g.kw; ++q) {
      const int64_t tx = xx + g.pl - q * g.dw;
      if (tx < 0 || tx % g.sw != 0) continue;
      const int64_t j = tx / g.sw;
      if (j >= g.ow) continue;
      for (int64_t oo = 0; oo < og; ++oo) {
        const int64_t o = grp * og + oo;
        s += static_cast<A>(Load(dout[((b * g.oc + o) * g.oh + i) * g.ow + j])) *
             static_cast<A>(Load(w[((o * cg + ci) * g.kh + p) * g.kw + q]));
      }
    }
  }
  return static_cast<compute_t<T>>(s);
}

}  // namespace opforge
