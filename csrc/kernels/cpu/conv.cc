// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (NCHW) by im2col + BLAS GEMM.
//
// The batch is cut into chunks of `nb` samples whose im2col columns ([K = C/group * kh * kw rows,
// nb * oh * ow columns] per group) fit a budget; each chunk is one GEMM per group, so small images
// (LeNet) still make one large GEMM and large ones (ResNet) one GEMM per sample written straight into
// the output. im2col, col2im and the layout copies run in parallel over samples and channels with
// ParallelFor; a GEMM is split across opforge's threads by blas::Sgemm (OpenBLAS itself on one thread).
// float16 / bfloat16 are computed in float32 (converted into the workspace). Small planes at unit stride
// whose output is the input's size (LeNet's) take flat columns instead (FlatPlan, RunFlat).
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kernels/cpu/conv_geometry.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// The sizes of one problem and how the batch is cut.
//
// "Wide" columns: with unit strides and no horizontal padding, an output row is computed over the
// whole input width (pw = w columns, the last w - ow of them unused), so the im2col row of one
// (channel, kernel offset) is a single contiguous run of the input plane instead of oh runs of ow
// elements: small images (LeNet) spend their time in the GEMM instead of in short copies. The
// unused columns are dropped when the GEMM result is copied out, and zeroed where an output
// gradient is copied in (so they add nothing to dx or dw).
struct ConvPlan {
  Window2D g{};
  int64_t cg = 0, og = 0, k = 0;  // channels and out channels per group, GEMM depth
  int64_t pw = 0, p = 0;          // columns per output row (ow, or w when wide), per sample (oh * pw)
  int64_t nb = 1;                 // samples per chunk
  bool wide = false, empty = false;

  void Init(const Window2D& win) {
    g = win;
    cg = g.c / g.group;
    og = g.oc / g.group;
    k = cg * g.kh * g.kw;
    wide = g.sh == 1 && g.sw == 1 && g.pl == 0 && g.ow == g.w - g.dw * (g.kw - 1) && g.ow < g.w &&
           g.ow * 2 >= g.w;  // at most twice the GEMM work
    pw = wide ? g.w : g.ow;
    p = g.oh * pw;
    empty = g.n == 0 || g.oc == 0 || g.oh * g.ow == 0 || k == 0;
    // Enough columns per GEMM to keep BLAS busy, within a budget for the columns (about L2).
    constexpr int64_t kMinColumns = 512, kMaxColElements = int64_t{1} << 17;
    nb = std::max<int64_t>(1, (kMinColumns + p - 1) / std::max<int64_t>(p, 1));
    nb = std::min<int64_t>(nb, std::max<int64_t>(1, kMaxColElements / std::max<int64_t>(1, k * p)));
    nb = std::max<int64_t>(1, std::min(nb, g.n));
  }
  // The GEMM reads and writes the tensor itself (one sample, no unused columns).
  bool direct(int64_t chunk) const { return chunk == 1 && !wide; }
  int64_t col_elements() const { return k * nb * p; }
  int64_t tmp_elements() const { return (nb > 1 || wide) ? og * nb * p : 0; }
};

// The input range [lo, hi) of output columns j whose x = j * s - pad + q * d lies in [0, w).
inline void ValidRange(int64_t w, int64_t ow, int64_t s, int64_t pad, int64_t off, int64_t* lo, int64_t* hi) {
  // j * s + (off - pad) >= 0  and  < w
  const int64_t base = off - pad;
  int64_t a = base >= 0 ? 0 : (-base + s - 1) / s;
  int64_t b = w - base <= 0 ? 0 : (w - base + s - 1) / s;
  *lo = std::min(a, ow);
  *hi = std::min(std::max(b, *lo), ow);
}

// im2col of samples [b0, b0 + nb), group grp: col[(c, p, q), s * P + i * ow + j].
// The valid output rows [i0, i1) of kernel row kp (unit vertical stride), for the wide layout.
inline void WideRows(const Window2D& g, int64_t kp, int64_t* i0, int64_t* i1) {
  const int64_t off = kp * g.dh - g.pt;  // y = i + off
  *i0 = std::min(g.oh, std::max<int64_t>(0, -off));
  *i1 = std::max(*i0, std::min(g.oh, g.h - off));
}

template <typename S>
void Im2ColWide(const ConvPlan& pl, const S* x, int64_t b0, int64_t nb, int64_t grp, S* col) {
  const Window2D& g = pl.g;
  const int64_t cols = nb * pl.p, khw = g.kh * g.kw, hw = g.h * g.w;
  ParallelFor(nb * pl.k, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, pl.p)),
              [&](int64_t begin, int64_t end) {
                for (int64_t t = begin; t < end; ++t) {
                  const int64_t s = t / pl.k, r = t % pl.k;
                  const int64_t c = r / khw, pq = r % khw, kp = pq / g.kw, kq = pq % g.kw;
                  const S* plane = x + ((b0 + s) * g.c + grp * pl.cg + c) * hw;
                  S* __restrict dst = col + r * cols + s * pl.p;
                  int64_t i0, i1;
                  WideRows(g, kp, &i0, &i1);
                  const int64_t start = (i0 + kp * g.dh - g.pt) * g.w + kq * g.dw;  // plane index of (i0, 0)
                  const int64_t n = (i1 - i0) * g.w;
                  const int64_t avail = std::max<int64_t>(0, std::min(n, hw - start));
                  for (int64_t e = 0; e < i0 * g.w; ++e) dst[e] = S(0);
                  const S* __restrict src = plane + start;
                  S* __restrict d = dst + i0 * g.w;
                  for (int64_t e = 0; e < avail; ++e) d[e] = src[e];
                  for (int64_t e = i0 * g.w + avail; e < pl.p; ++e) dst[e] = S(0);
                }
              });
}

template <typename S>
void Im2Col(const ConvPlan& pl, const S* x, int64_t b0, int64_t nb, int64_t grp, S* col) {
  if (pl.wide) return Im2ColWide(pl, x, b0, nb, grp, col);
  const Window2D& g = pl.g;
  const int64_t cols = nb * pl.p, khw = g.kh * g.kw;
  ParallelFor(nb * pl.k, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, pl.p)),
              [&](int64_t begin, int64_t end) {
                for (int64_t t = begin; t < end; ++t) {
                  const int64_t s = t / pl.k, r = t % pl.k;
                  const int64_t c = r / khw, pq = r % khw, kp = pq / g.kw, kq = pq % g.kw;
                  const S* plane = x + ((b0 + s) * g.c + grp * pl.cg + c) * g.h * g.w;
                  S* dst = col + r * cols + s * pl.p;
                  int64_t lo, hi;
                  ValidRange(g.w, g.ow, g.sw, g.pl, kq * g.dw, &lo, &hi);
                  const int64_t ow = g.ow, sw = g.sw;
                  for (int64_t i = 0; i < g.oh; ++i) {
                    S* __restrict row = dst + i * ow;
                    const int64_t y = i * g.sh - g.pt + kp * g.dh;
                    if (y < 0 || y >= g.h) {
                      for (int64_t j = 0; j < ow; ++j) row[j] = S(0);
                      continue;
                    }
                    const S* __restrict src = plane + y * g.w - g.pl + kq * g.dw;
                    for (int64_t j = 0; j < lo; ++j) row[j] = S(0);
                    if (sw == 1) {
                      for (int64_t j = lo; j < hi; ++j) row[j] = src[j];
                    } else {
                      for (int64_t j = lo; j < hi; ++j) row[j] = src[j * sw];
                    }
                    for (int64_t j = hi; j < ow; ++j) row[j] = S(0);
                  }
                }
              });
}

// col2im: dx[b0 + s, grp * cg + c] += the columns of its rows; one (sample, channel) plane per task. Only
// the channels [c_begin, c_begin + c_count) of the group when c_count >= 0.
template <typename S>
void Col2Im(const ConvPlan& pl, const S* col, int64_t b0, int64_t nb, int64_t grp, S* dx, int64_t c_begin = 0,
            int64_t c_count = -1) {
  const Window2D& g = pl.g;
  const int64_t cols = nb * pl.p, cn = c_count >= 0 ? c_count : pl.cg;
  if (pl.wide) {  // the unused columns hold zeros: whole runs are added
    const int64_t hw = g.h * g.w;
    ParallelFor(nb * cn, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, pl.p * g.kh * g.kw)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t t = begin; t < end; ++t) {
                    const int64_t s = t / cn, c = c_begin + t % cn;
                    S* __restrict plane = dx + ((b0 + s) * g.c + grp * pl.cg + c) * hw;
                    for (int64_t kp = 0; kp < g.kh; ++kp) {
                      int64_t i0, i1;
                      WideRows(g, kp, &i0, &i1);
                      for (int64_t kq = 0; kq < g.kw; ++kq) {
                        const S* __restrict src = col + ((c * g.kh + kp) * g.kw + kq) * cols + s * pl.p + i0 * g.w;
                        const int64_t start = (i0 + kp * g.dh - g.pt) * g.w + kq * g.dw;
                        const int64_t n = std::max<int64_t>(0, std::min((i1 - i0) * g.w, hw - start));
                        S* __restrict d = plane + start;
                        for (int64_t e = 0; e < n; ++e) d[e] += src[e];
                      }
                    }
                  }
                });
    return;
  }
  ParallelFor(nb * cn, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, pl.p * g.kh * g.kw)),
              [&](int64_t begin, int64_t end) {
                for (int64_t t = begin; t < end; ++t) {
                  const int64_t s = t / cn, c = c_begin + t % cn;
                  S* plane = dx + ((b0 + s) * g.c + grp * pl.cg + c) * g.h * g.w;
                  for (int64_t kp = 0; kp < g.kh; ++kp) {
                    for (int64_t kq = 0; kq < g.kw; ++kq) {
                      const S* src = col + ((c * g.kh + kp) * g.kw + kq) * cols + s * pl.p;
                      int64_t lo, hi;
                      ValidRange(g.w, g.ow, g.sw, g.pl, kq * g.dw, &lo, &hi);
                      for (int64_t i = 0; i < g.oh; ++i) {
                        const int64_t y = i * g.sh - g.pt + kp * g.dh;
                        if (y < 0 || y >= g.h) continue;
                        S* dst = plane + y * g.w - g.pl + kq * g.dw;
                        const S* row = src + i * g.ow;
                        if (g.sw == 1) {
                          for (int64_t j = lo; j < hi; ++j) dst[j] += row[j];
                        } else {
                          for (int64_t j = lo; j < hi; ++j) dst[j * g.sw] += row[j];
                        }
                      }
                    }
                  }
                }
              });
}

// [rows, nb * P] (chunk-major columns, output rows pw apart) <-> the NCHW tensor's samples
// [b0, b0 + nb), channels [c0, c0 + rows) (output rows ow apart). Gathering zeroes the unused columns.
template <typename S>
void GatherRows(const ConvPlan& pl, const S* t, int64_t channels, int64_t c0, int64_t rows, int64_t b0, int64_t nb,
                S* out) {
  const int64_t oh = pl.g.oh, ow = pl.g.ow, pw = pl.pw, p = pl.p;
  ParallelFor(rows * nb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, p)),
              [&](int64_t begin, int64_t end) {
                for (int64_t u = begin; u < end; ++u) {
                  const int64_t r = u / nb, s = u % nb;
                  S* __restrict dst = out + r * nb * p + s * p;
                  const S* __restrict src = t + ((b0 + s) * channels + c0 + r) * oh * ow;
                  if (pw == ow) {
                    std::memcpy(dst, src, static_cast<size_t>(p) * sizeof(S));
                    continue;
                  }
                  for (int64_t i = 0; i < oh; ++i) {
                    for (int64_t j = 0; j < ow; ++j) dst[i * pw + j] = src[i * ow + j];
                    for (int64_t j = ow; j < pw; ++j) dst[i * pw + j] = S(0);
                  }
                }
              });
}

template <typename S>
void ScatterRows(const ConvPlan& pl, const S* in, int64_t channels, int64_t c0, int64_t rows, int64_t b0, int64_t nb,
                 S* t) {
  const int64_t oh = pl.g.oh, ow = pl.g.ow, pw = pl.pw, p = pl.p;
  ParallelFor(rows * nb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, p)),
              [&](int64_t begin, int64_t end) {
                for (int64_t u = begin; u < end; ++u) {
                  const int64_t r = u / nb, s = u % nb;
                  const S* __restrict src = in + r * nb * p + s * p;
                  S* __restrict dst = t + ((b0 + s) * channels + c0 + r) * oh * ow;
                  if (pw == ow) {
                    std::memcpy(dst, src, static_cast<size_t>(p) * sizeof(S));
                    continue;
                  }
                  for (int64_t i = 0; i < oh; ++i)
                    for (int64_t j = 0; j < ow; ++j) dst[i * ow + j] = src[i * pw + j];
                }
              });
}

// One chunk of samples [b0, b0 + nb) of each problem, on S = float or double arrays, with the scratch
// `col` (col_elements()) and `tmp` (tmp_elements()) of a plan whose chunks hold at least nb samples.
template <typename S>
void ForwardChunk(const ConvPlan& pl, const S* x, const S* w, S* y, int64_t b0, int64_t nb, S* col, S* tmp) {
  const Window2D& g = pl.g;
  const int64_t cols = nb * pl.p;
  for (int64_t grp = 0; grp < g.group; ++grp) {
    Im2Col(pl, x, b0, nb, grp, col);
    const S* wg = w + grp * pl.og * pl.k;
    if (pl.direct(nb)) {
      Gemm<S>(false, false, pl.og, cols, pl.k, wg, pl.k, col, cols, S(0), y + (b0 * g.oc + grp * pl.og) * pl.p, pl.p);
    } else {
      Gemm<S>(false, false, pl.og, cols, pl.k, wg, pl.k, col, cols, S(0), tmp, cols);
      ScatterRows(pl, tmp, g.oc, grp * pl.og, pl.og, b0, nb, y);
    }
  }
}

// dx of the chunk's samples (overwritten).
template <typename S>
void InputChunk(const ConvPlan& pl, const S* dy, const S* w, S* dx, int64_t b0, int64_t nb, S* col, S* tmp) {
  const Window2D& g = pl.g;
  const int64_t cols = nb * pl.p, per_sample = g.c * g.h * g.w;
  std::fill(dx + b0 * per_sample, dx + (b0 + nb) * per_sample, S(0));
  for (int64_t grp = 0; grp < g.group; ++grp) {
    const S* wg = w + grp * pl.og * pl.k;
    const S* d;
    if (pl.direct(nb)) {
      d = dy + (b0 * g.oc + grp * pl.og) * pl.p;
    } else {
      GatherRows(pl, dy, g.oc, grp * pl.og, pl.og, b0, nb, tmp);
      d = tmp;
    }
    Gemm<S>(true, false, pl.k, cols, pl.og, wg, pl.k, d, cols, S(0), col, cols);  // W^T [K, og] @ dy [og, cols]
    Col2Im(pl, col, b0, nb, grp, dx);
  }
}

// dw (+)= the chunk's contribution; beta 0 overwrites.
template <typename S>
void FilterChunk(const ConvPlan& pl, const S* dy, const S* x, S* dw, S beta, int64_t b0, int64_t nb, S* col, S* tmp) {
  const Window2D& g = pl.g;
  const int64_t cols = nb * pl.p;
  for (int64_t grp = 0; grp < g.group; ++grp) {
    Im2Col(pl, x, b0, nb, grp, col);
    const S* d;
    if (pl.direct(nb)) {
      d = dy + (b0 * g.oc + grp * pl.og) * pl.p;
    } else {
      GatherRows(pl, dy, g.oc, grp * pl.og, pl.og, b0, nb, tmp);
      d = tmp;
    }
    // dW_g [og, K] (+)= dy [og, cols] @ col^T [cols, K]
    Gemm<S>(false, true, pl.og, pl.k, cols, d, cols, col, cols, beta, dw + grp * pl.og * pl.k, pl.k);
  }
}

enum class ConvKind { kForward, kInput, kFilter };

// Several threads, few columns per thread (small images, large filters: ResNet-50's late stages at 64x64),
// one group: each thread runs every chunk for its own slice of the channels (output channels for the
// forward and the filter gradient, input channels for the input gradient), computing the chunk's im2col
// (or gathering its dy) itself: a small cost next to its GEMM there. One synchronisation per call, each
// thread reads its slice of the weights only, and no partial sums. a, b, out as in RunConv.
template <typename S, ConvKind kKind>
void RunConvByChannels(const ConvPlan& pl, const S* a, const S* b, S* out) {
  const Window2D& g = pl.g;
  const int64_t khw = g.kh * g.kw, hw = g.h * g.w;
  BlasOneThread one_thread;
  ParallelFor(kKind == ConvKind::kInput ? g.c : g.oc, 1, [&](int64_t u0, int64_t u1) {
    const int64_t rows = u1 - u0;
    std::unique_ptr<S[]> scratch(new S[static_cast<size_t>(pl.col_elements() + pl.og * pl.nb * pl.p)]);
    S* col = scratch.get();
    S* tmp = col + pl.col_elements();
    for (int64_t b0 = 0; b0 < g.n; b0 += pl.nb) {
      const int64_t nb = std::min(pl.nb, g.n - b0), cols = nb * pl.p;
      if constexpr (kKind == ConvKind::kForward) {  // y[:, u0:u1] = W[u0:u1] col
        Im2Col(pl, a, b0, nb, 0, col);
        if (pl.direct(nb)) {
          Gemm<S>(false, false, rows, cols, pl.k, b + u0 * pl.k, pl.k, col, cols, S(0), out + (b0 * g.oc + u0) * pl.p,
                  pl.p);
        } else {
          Gemm<S>(false, false, rows, cols, pl.k, b + u0 * pl.k, pl.k, col, cols, S(0), tmp, cols);
          ScatterRows(pl, tmp, g.oc, u0, rows, b0, nb, out);
        }
      } else if constexpr (kKind == ConvKind::kFilter) {  // dW[u0:u1] (+)= dy[:, u0:u1] col^T
        Im2Col(pl, b, b0, nb, 0, col);
        const S* d = tmp;
        if (pl.direct(nb)) {
          d = a + (b0 * g.oc + u0) * pl.p;
        } else {
          GatherRows(pl, a, g.oc, u0, rows, b0, nb, tmp);
        }
        Gemm<S>(false, true, rows, pl.k, cols, d, cols, col, cols, b0 == 0 ? S(0) : S(1), out + u0 * pl.k, pl.k);
      } else {  // dx[:, u0:u1]: the col rows of those channels, W[:, rows]^T dy, then col2im
        const S* d = tmp;
        if (pl.direct(nb)) {
          d = a + b0 * g.oc * pl.p;
        } else {
          GatherRows(pl, a, g.oc, 0, pl.og, b0, nb, tmp);
        }
        const int64_t r0 = u0 * khw;
        Gemm<S>(true, false, rows * khw, cols, pl.og, b + r0, pl.k, d, cols, S(0), col + r0 * cols, cols);
        for (int64_t s = b0; s < b0 + nb; ++s) std::fill(out + (s * g.c + u0) * hw, out + (s * g.c + u1) * hw, S(0));
        Col2Im(pl, col, b0, nb, 0, out, u0, rows);
      }
    }
  });
}

// Runs problem kKind over the whole batch. On one thread: chunk after chunk, with the workspace `ws`,
// im2col in parallel regions and the GEMMs split by blas::Sgemm. On several: the chunks split
// across the threads, each with its own scratch and single-threaded GEMMs, so a call synchronises
// once instead of at every GEMM (which on busy cores costs more than it gains); the filter
// gradient sums the threads' partial dw. The split needs enough columns per thread: each thread
// streams all the weights (and the filter gradient writes and sums a partial dw of them all), so
// with small images and large filters (ResNet-50's last stages at 64x64: 16 columns per thread for
// 2.4M weights) the split spent more on the weights than on the products: there the threads split
// the channels instead (RunConvByChannels: one synchronisation per call, where each chunk's im2col and
// GEMM regions would make several).
template <typename S, ConvKind kKind>
void RunConv(const ConvPlan& pl, const S* a, const S* b, S* out, S* ws) {
  const Window2D& g = pl.g;
  const int64_t n = g.n, threads = ParallelThreads();
  const int64_t per_thread = (n + std::max<int64_t>(threads, 1) - 1) / std::max<int64_t>(threads, 1);
  const int64_t nb_par = std::max<int64_t>(1, std::min(pl.nb, per_thread));
  const int64_t chunks_par = (n + nb_par - 1) / nb_par;
  const int64_t w_elements = g.oc * pl.k;
  // Below about a million multiply-adds a call takes tens of microseconds on one thread: waking a
  // second one would cost as much.
  const int64_t macs = g.n * g.oc * pl.k * g.oh * g.ow;
  constexpr int64_t kMinColumnsPerThread = 256;
  const bool small = macs < (int64_t{1} << 20);
  if (threads > 1 && !small && per_thread * pl.p < kMinColumnsPerThread && g.group == 1) {
    RunConvByChannels<S, kKind>(pl, a, b, out);
    return;
  }
  if (threads <= 1 || chunks_par < 2 || small) {
    S* col = ws;
    S* tmp = ws + pl.col_elements();
    for (int64_t b0 = 0; b0 < n; b0 += pl.nb) {
      const int64_t nb = std::min(pl.nb, n - b0);
      if constexpr (kKind == ConvKind::kForward) {
        ForwardChunk(pl, a, b, out, b0, nb, col, tmp);
      } else if constexpr (kKind == ConvKind::kInput) {
        InputChunk(pl, a, b, out, b0, nb, col, tmp);
      } else {
        FilterChunk(pl, a, b, out, b0 == 0 ? S(0) : S(1), b0, nb, col, tmp);
      }
    }
    return;
  }
  BlasOneThread one_thread;
  std::mutex mu;
  if constexpr (kKind == ConvKind::kFilter) std::fill(out, out + w_elements, S(0));
  ParallelFor(chunks_par, 1, [&](int64_t begin, int64_t end) {
    // Uninitialised (every element is written before it is read): zeroing it cost as much as small GEMMs.
    std::unique_ptr<S[]> scratch(new S[static_cast<size_t>((pl.k + pl.og) * nb_par * pl.p +
                                                           (kKind == ConvKind::kFilter ? w_elements : 0))]);
    S* col = scratch.get();
    S* tmp = col + pl.k * nb_par * pl.p;
    S* part = tmp + pl.og * nb_par * pl.p;
    for (int64_t ch = begin; ch < end; ++ch) {
      const int64_t b0 = ch * nb_par, nb = std::min(nb_par, n - b0);
      if constexpr (kKind == ConvKind::kForward) {
        ForwardChunk(pl, a, b, out, b0, nb, col, tmp);
      } else if constexpr (kKind == ConvKind::kInput) {
        InputChunk(pl, a, b, out, b0, nb, col, tmp);
      } else {
        FilterChunk(pl, a, b, part, ch == begin ? S(0) : S(1), b0, nb, col, tmp);
      }
    }
    if constexpr (kKind == ConvKind::kFilter) {
      std::lock_guard<std::mutex> lock(mu);
      for (int64_t e = 0; e < w_elements; ++e) out[e] += part[e];
    }
  });
}

// Small planes ("flat" columns: LeNet's 8x8 and 4x4). With unit strides and an output plane the size of the
// input's (pad_mode same), output element e = (i, j) of kernel offset (kp, kq) reads input element e + off,
// off = (kp * dh - pt) * w + kq * dw - pl, or the padding (a zero) where `valid` says so. With the chunk laid
// channel-major, xc[c][s * hw + e], the im2col row of (c, kp, kq) is one masked copy of channel c's run
// shifted by off, instead of oh runs of ow elements per sample (4x4 planes made the generic im2col 37,000
// copies of 4 per LeNet step), and col2im the same masked, shifted add. A chunk's GEMM covers all its
// samples. The runs are read up to `margin` elements past their ends (masked), so the channel-major
// buffers have zeroed margins before and after.
struct FlatPlan {
  bool use = false;
  int64_t hw = 0, khw = 0, margin = 0, nb = 1;  // nb: samples per chunk on one thread
  std::vector<int64_t> off;                     // [khw]
  // [khw][hw]: all ones where the input element is inside, zeros in the padding, as masks for the bits of a
  // float and of a double (the copies go branch-free: a branch on the mask mispredicted at every plane edge)
  std::vector<uint32_t> valid32;
  std::vector<uint64_t> valid64;

  template <typename S>
  const auto* valid() const {
    if constexpr (sizeof(S) == 4) {
      return valid32.data();
    } else {
      return valid64.data();
    }
  }

  void Init(const ConvPlan& pl) {
    const Window2D& g = pl.g;
    constexpr int64_t kMaxPlane = 64, kMaxColElements = int64_t{1} << 18;
    use = !pl.empty && g.group == 1 && g.sh == 1 && g.sw == 1 && g.oh == g.h && g.ow == g.w &&
          g.h * g.w <= kMaxPlane;
    if (!use) return;
    hw = g.h * g.w;
    khw = g.kh * g.kw;
    off.assign(static_cast<size_t>(khw), 0);
    valid32.assign(static_cast<size_t>(khw * hw), 0);
    valid64.assign(static_cast<size_t>(khw * hw), 0);
    margin = 0;
    for (int64_t kp = 0; kp < g.kh; ++kp) {
      for (int64_t kq = 0; kq < g.kw; ++kq) {
        const int64_t kk = kp * g.kw + kq, dy = kp * g.dh - g.pt, dx = kq * g.dw - g.pl;
        off[kk] = dy * g.w + dx;
        margin = std::max(margin, off[kk] < 0 ? -off[kk] : off[kk]);
        for (int64_t i = 0; i < g.h; ++i) {
          for (int64_t j = 0; j < g.w; ++j) {
            const bool inside = i + dy >= 0 && i + dy < g.h && j + dx >= 0 && j + dx < g.w;
            valid32[kk * hw + i * g.w + j] = inside ? ~uint32_t{0} : 0;
            valid64[kk * hw + i * g.w + j] = inside ? ~uint64_t{0} : 0;
          }
        }
      }
    }
    nb = std::max<int64_t>(1, std::min(g.n, kMaxColElements / std::max<int64_t>(1, pl.k * hw)));
  }
  // Scratch of a chunk of nb samples: the channel-major input (or dx) with its margins, the columns and the
  // channel-major output (or dy).
  int64_t scratch_elements(const ConvPlan& pl, int64_t samples) const {
    return 2 * margin + (pl.g.c + pl.k + pl.g.oc) * samples * hw;
  }
};

// xc[c][s * hw + e] = t[b0 + s][c][e] (t with `channels` channels) for c < channels, s < nb, and back.
template <typename S>
void ToChannelMajor(const S* t, int64_t channels, int64_t hw, int64_t b0, int64_t nb, S* xc) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t s = 0; s < nb; ++s)
      std::memcpy(xc + (c * nb + s) * hw, t + ((b0 + s) * channels + c) * hw, static_cast<size_t>(hw) * sizeof(S));
}

template <typename S>
void FromChannelMajor(const S* xc, int64_t channels, int64_t hw, int64_t b0, int64_t nb, S* t) {
  for (int64_t s = 0; s < nb; ++s)
    for (int64_t c = 0; c < channels; ++c)
      std::memcpy(t + ((b0 + s) * channels + c) * hw, xc + (c * nb + s) * hw, static_cast<size_t>(hw) * sizeof(S));
}

// v where the mask's bits are all ones, +0 where they are zeros.
template <typename S, typename U>
inline S Masked(S v, U mask) {
  U u;
  std::memcpy(&u, &v, sizeof u);
  u &= mask;
  std::memcpy(&v, &u, sizeof u);
  return v;
}

// col[(c, kk)][s * hw + e] = valid[kk][e] ? xc[c][s * hw + e + off[kk]] : 0.
template <typename S, typename U>
OPF_VECTOR_CLONES void FlatIm2Col(const S* __restrict xc, int64_t channels, int64_t nb, int64_t hw, int64_t khw,
                                  const int64_t* off, const U* valid, S* __restrict col) {
  const int64_t cols = nb * hw;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kk = 0; kk < khw; ++kk) {
      const S* __restrict src = xc + c * cols + off[kk];
      S* __restrict dst = col + (c * khw + kk) * cols;
      const U* __restrict m = valid + kk * hw;
      for (int64_t s = 0; s < nb; ++s) {
        for (int64_t e = 0; e < hw; ++e) dst[s * hw + e] = Masked(src[s * hw + e], m[e]);
      }
    }
  }
}

// dxc[c][s * hw + e + off[kk]] += col[(c, kk)][s * hw + e] where valid[kk][e]: dxc zeroed before, margins
// included (the masked elements add zeros there).
template <typename S, typename U>
OPF_VECTOR_CLONES void FlatCol2Im(const S* __restrict col, int64_t channels, int64_t nb, int64_t hw, int64_t khw,
                                  const int64_t* off, const U* valid, S* __restrict dxc) {
  const int64_t cols = nb * hw;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kk = 0; kk < khw; ++kk) {
      const S* __restrict src = col + (c * khw + kk) * cols;
      S* __restrict dst = dxc + c * cols + off[kk];
      const U* __restrict m = valid + kk * hw;
      for (int64_t s = 0; s < nb; ++s) {
        for (int64_t e = 0; e < hw; ++e) dst[s * hw + e] += Masked(src[s * hw + e], m[e]);
      }
    }
  }
}

// One chunk, samples [b0, b0 + nb), of problem kKind (a, b, out as in RunConv) in `scratch`
// (FlatPlan::scratch_elements(nb)); the filter gradient adds beta * dw.
template <typename S, ConvKind kKind>
void FlatChunk(const ConvPlan& pl, const FlatPlan& fp, const S* a, const S* b, S* out, S beta, int64_t b0, int64_t nb,
               S* scratch) {
  const Window2D& g = pl.g;
  const int64_t hw = fp.hw, cols = nb * hw;
  S* xc = scratch + fp.margin;  // [c][cols], margins on both sides
  S* col = xc + g.c * cols + fp.margin;
  S* yc = col + pl.k * cols;  // [oc][cols]
  std::fill(scratch, xc, S(0));
  std::fill(xc + g.c * cols, col, S(0));
  if constexpr (kKind == ConvKind::kForward) {  // y = W col
    ToChannelMajor(a, g.c, hw, b0, nb, xc);
    FlatIm2Col(xc, g.c, nb, hw, fp.khw, fp.off.data(), fp.template valid<S>(), col);
    Gemm<S>(false, false, g.oc, cols, pl.k, b, pl.k, col, cols, S(0), yc, cols);
    FromChannelMajor(yc, g.oc, hw, b0, nb, out);
  } else if constexpr (kKind == ConvKind::kInput) {  // col = W^T dy, then col2im
    ToChannelMajor(a, g.oc, hw, b0, nb, yc);
    Gemm<S>(true, false, pl.k, cols, g.oc, b, pl.k, yc, cols, S(0), col, cols);
    std::fill(xc, xc + g.c * cols, S(0));
    FlatCol2Im(col, g.c, nb, hw, fp.khw, fp.off.data(), fp.template valid<S>(), xc);
    FromChannelMajor(xc, g.c, hw, b0, nb, out);
  } else {  // dW (+)= dy col^T
    ToChannelMajor(b, g.c, hw, b0, nb, xc);
    FlatIm2Col(xc, g.c, nb, hw, fp.khw, fp.off.data(), fp.template valid<S>(), col);
    ToChannelMajor(a, g.oc, hw, b0, nb, yc);
    Gemm<S>(false, true, g.oc, pl.k, cols, yc, cols, col, cols, beta, out, pl.k);
  }
}

// Problem kKind over the batch by flat chunks: on one thread in `ws` (scratch_elements(fp.nb)); on
// several, the samples split across the threads, each with its own scratch and single-threaded GEMMs, the
// filter gradient summing the threads' partial dw.
template <typename S, ConvKind kKind>
void RunFlat(const ConvPlan& pl, const FlatPlan& fp, const S* a, const S* b, S* out, S* ws) {
  const Window2D& g = pl.g;
  const int64_t n = g.n, threads = ParallelThreads();
  const int64_t macs = g.n * g.oc * pl.k * g.oh * g.ow;
  if (threads <= 1 || n < 2 || macs < (int64_t{1} << 20)) {  // below: a second thread costs as much as it saves
    for (int64_t b0 = 0; b0 < n; b0 += fp.nb) {
      FlatChunk<S, kKind>(pl, fp, a, b, out, b0 == 0 ? S(0) : S(1), b0, std::min(fp.nb, n - b0), ws);
    }
    return;
  }
  const int64_t w_elements = g.oc * pl.k;
  const int64_t per_thread = std::min(fp.nb, (n + threads - 1) / threads);
  // Few columns per thread (large filters on small images, ResNet-50's late stages): splitting the samples
  // would have each thread stream all the weights; RunConv splits the channels instead.
  constexpr int64_t kMinColumnsPerThread = 256;
  if (per_thread * fp.hw < kMinColumnsPerThread) {
    RunConv<S, kKind>(pl, a, b, out, ws);
    return;
  }
  BlasOneThread one_thread;
  std::mutex mu;
  if constexpr (kKind == ConvKind::kFilter) std::fill(out, out + w_elements, S(0));
  ParallelFor((n + per_thread - 1) / per_thread, 1, [&](int64_t begin, int64_t end) {
    const int64_t part = kKind == ConvKind::kFilter ? w_elements : 0;
    std::unique_ptr<S[]> scratch(new S[static_cast<size_t>(fp.scratch_elements(pl, per_thread) + part)]);
    S* dw = scratch.get() + fp.scratch_elements(pl, per_thread);
    for (int64_t ch = begin; ch < end; ++ch) {
      const int64_t b0 = ch * per_thread, nb = std::min(per_thread, n - b0);
      FlatChunk<S, kKind>(pl, fp, a, b, kKind == ConvKind::kFilter ? dw : out, ch == begin ? S(0) : S(1), b0, nb,
                          scratch.get());
    }
    if constexpr (kKind == ConvKind::kFilter) {
      std::lock_guard<std::mutex> lock(mu);
      for (int64_t e = 0; e < w_elements; ++e) out[e] += dw[e];
    }
  });
}


template <typename T, ConvKind kKind>
class ConvCpuKernel : public CpuKernel {
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static constexpr bool kConvert = !std::is_same_v<T, S>;

 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    OPF_CHECK(ctx.num_inputs() >= 2 && ctx.num_outputs() == 1,
              "For '" << op << "', the kernel takes 2 tensor inputs and 1 output.");
    const auto& a = ctx.input(0).shape;  // x (forward) or dout (grads)
    const auto& b = ctx.input(1).shape;  // w (forward, input grad) or x (filter grad)
    const auto& out = ctx.output(0).shape;
    for (const auto* s : {&a, &b, &out}) {
      OPF_CHECK(s->size() == 4, "For '" << op << "', the tensors must be 4-D (NCHW), but got " << ShapeToString(*s)
                                        << ".");
    }
    // The forward problem's x, w and y shapes.
    const std::vector<int64_t>& x = kKind == ConvKind::kForward ? a : (kKind == ConvKind::kInput ? out : b);
    const std::vector<int64_t>& w = kKind == ConvKind::kFilter ? out : b;
    const std::vector<int64_t>& y = kKind == ConvKind::kForward ? out : a;
    Window2D g = MakeWindow2D(ctx, x, y, true);
    OPF_CHECK(w[0] == g.oc && w[1] * g.group == g.c && w[2] == g.kh && w[3] == g.kw,
              "For '" << op << "', the filter shape " << ShapeToString(w) << " does not match the input "
                      << ShapeToString(x) << ", the output " << ShapeToString(y) << " and the attrs.");
    plan_.Init(g);
    flat_.Init(plan_);
    n_x_ = g.n * g.c * g.h * g.w;
    n_w_ = g.oc * (g.c / g.group) * g.kh * g.kw;
    n_y_ = g.n * g.oc * g.oh * g.ow;
    // (RunFlat hands some multi-threaded problems to RunConv: room for both)
    int64_t ws = plan_.empty ? 0 : plan_.col_elements() + plan_.tmp_elements();
    if (flat_.use) ws = std::max(ws, flat_.scratch_elements(plan_, flat_.nb));
    if (kConvert) ws += n_x_ + n_w_ + n_y_;
    SetWorkspaceBytes(ws * static_cast<int64_t>(sizeof(S)));
  }

  void Launch(const KernelArgs& args) override {
    S* ws = args.workspace<S>();
    const int64_t n_in0 = kKind == ConvKind::kForward ? n_x_ : n_y_;
    const int64_t n_in1 = kKind == ConvKind::kFilter ? n_x_ : n_w_;
    const int64_t n_out = kKind == ConvKind::kForward ? n_y_ : (kKind == ConvKind::kInput ? n_x_ : n_w_);
    if (plan_.empty) {  // an empty sum: zeros
      T* o = args.output<T>(0);
      std::fill(o, o + n_out, Store<T>(compute_t<T>(0)));
      return;
    }
    const S* in0;
    const S* in1;
    S* out;
    S* scratch = ws;
    if constexpr (kConvert) {
      S* c0 = ws;
      S* c1 = c0 + n_in0;
      S* co = c1 + n_in1;
      scratch = ws + n_x_ + n_w_ + n_y_;
      Widen(args.input<T>(0), c0, n_in0);
      Widen(args.input<T>(1), c1, n_in1);
      in0 = c0;
      in1 = c1;
      out = co;
    } else {
      in0 = args.input<T>(0);
      in1 = args.input<T>(1);
      out = args.output<T>(0);
    }
    if (flat_.use) {
      RunFlat<S, kKind>(plan_, flat_, in0, in1, out, scratch);
    } else {
      RunConv<S, kKind>(plan_, in0, in1, out, scratch);
    }
    if constexpr (kConvert) {
      T* o = args.output<T>(0);
      ParallelFor(n_out, kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) o[i] = Store<T>(static_cast<compute_t<T>>(out[i]));
      });
    }
  }

 private:
  static void Widen(const T* src, S* dst, int64_t n) {
    ParallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<S>(Load(src[i]));
    });
  }

  ConvPlan plan_;
  FlatPlan flat_;
  int64_t n_x_ = 0, n_w_ = 0, n_y_ = 0;
};

#define REG_CONV(T, ID)                                                                                       \
  MS_REG_CPU_KERNEL(Conv2D, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),                 \
                    ConvCpuKernel<T, ConvKind::kForward>);                                                    \
  MS_REG_CPU_KERNEL(Conv2DBackpropInput, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),    \
                    ConvCpuKernel<T, ConvKind::kInput>);                                                      \
  MS_REG_CPU_KERNEL(Conv2DBackpropFilter, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),   \
                    ConvCpuKernel<T, ConvKind::kFilter>)

REG_CONV(float16, kNumberTypeFloat16);
REG_CONV(bfloat16, kNumberTypeBFloat16);
REG_CONV(float, kNumberTypeFloat32);
REG_CONV(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
