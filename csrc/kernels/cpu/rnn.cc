// LSTMLayer, GRULayer, RNNLayer and their grads: one layer and direction of a recurrent net over a whole
// sequence (the recurrence in C++, not a Python loop per step), structured the way cuDNN and PyTorch do it.
// The input projection of every step is one GEMM before the recurrence; each step adds h_{t-1} W_hh^T (a
// GEMM of a few rows) and runs the cell math of functors/rnn.h. The backward pass walks the sequence in
// reverse (BPTT) and ends with one GEMM each for dx, dW_ih and dW_hh over every step. The GEMMs are
// PackedGemm below (the weights packed once per call), and the threads split the batch rows, each running
// the whole sequence for its rows. float32 and float64; the results do not depend on the thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "opforge/functors/rnn.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// n elements from src to dst; nothing for none (an empty tensor's data may be null, which memcpy must not get).
template <typename T>
void CopyElems(T* dst, const T* src, int64_t n) {
  if (n > 0) std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(n));
}

// The recurrences' GEMMs, c [m, n] (+)= a [m, k] b [k, n], with b packed once per call into panels of kLanes
// columns ([panel][k][kLanes], zero-padded) streamed through register accumulators of 4 rows. Through
// OpenBLAS the per-step product (m = the batch, a few rows) repacked W_hh on every step and ran at half the
// speed of the large ones; and the large ones ran OpenBLAS's AVX2 kernels (OPENBLAS_CORETYPE=Haswell on the
// dev machine), where these loops compile to AVX-512 (the 2-layer bidirectional LSTM of bench_models:
// forward + backward 50 -> 28 ms CPU time on 1 thread). Deterministic: every element is summed over k in
// order, whatever the thread count.
template <typename T>
constexpr int64_t kLanes = 64 / static_cast<int64_t>(sizeof(T));  // one 64-byte vector

template <typename T>
int64_t PackedPanelsSize(int64_t k, int64_t n) {
  return (n + kLanes<T> - 1) / kLanes<T> * kLanes<T> * k;
}

// Packs b [k, n] (b(i, j) = src[j * ld + i] when `trans`, else src[i * ld + j]) into `out`.
template <typename T>
void PackPanels(bool trans, int64_t k, int64_t n, const T* src, int64_t ld, T* out) {
  constexpr int64_t L = kLanes<T>;
  for (int64_t p = 0; p * L < n; ++p) {
    for (int64_t i = 0; i < k; ++i) {
      T* o = out + (p * k + i) * L;
      for (int64_t j = 0; j < L; ++j) {
        const int64_t col = p * L + j;
        o[j] = col >= n ? T(0) : trans ? src[col * ld + i] : src[i * ld + col];
      }
    }
  }
}

// R rows of c (+)= a b over NP panels of b (packed by PackPanels, `cols` columns in the last one), a(r, i) =
// a[r * lda + i * ak]. The accumulators are GCC/Clang vectors of 64 bytes: one AVX-512 register, two AVX2
// ones, four SSE ones, whichever clone the CPU runs; 4 rows by 2 panels keep 8 FMAs in flight.
template <typename T, int R, int NP>
OPF_VECTOR_CLONES void PanelRows(const T* a, int64_t lda, int64_t ak, const T* panels, int64_t k, int64_t cols,
                                 bool accumulate, T* c, int64_t ldc) {
  typedef T Vec __attribute__((vector_size(64)));
  constexpr int64_t L = kLanes<T>;
  Vec acc[R][NP] = {};
  for (int64_t i = 0; i < k; ++i) {
    Vec w[NP];
    for (int q = 0; q < NP; ++q) std::memcpy(&w[q], panels + (q * k + i) * L, sizeof(Vec));
    for (int r = 0; r < R; ++r) {
      const T v = a[r * lda + i * ak];
      for (int q = 0; q < NP; ++q) acc[r][q] += v * w[q];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < NP; ++q) {
      T* cr = c + r * ldc + q * L;
      const int64_t width = q == NP - 1 ? cols : L;
      if (width == L) {
        Vec out = acc[r][q];
        if (accumulate) {
          Vec old;
          std::memcpy(&old, cr, sizeof(Vec));
          out += old;
        }
        std::memcpy(cr, &out, sizeof(Vec));
      } else {
        for (int64_t j = 0; j < width; ++j) cr[j] = (accumulate ? cr[j] : T(0)) + acc[r][q][j];
      }
    }
  }
}

template <typename T, int NP>
void PanelRowsAny(int64_t m, const T* a, int64_t lda, int64_t ak, const T* panels, int64_t k, int64_t cols,
                  bool accumulate, T* c, int64_t ldc) {
  int64_t r = 0;
  for (; r + 4 <= m; r += 4) PanelRows<T, 4, NP>(a + r * lda, lda, ak, panels, k, cols, accumulate, c + r * ldc, ldc);
  const T* ar = a + r * lda;
  T* cr = c + r * ldc;
  switch (m - r) {
    case 3:
      PanelRows<T, 3, NP>(ar, lda, ak, panels, k, cols, accumulate, cr, ldc);
      break;
    case 2:
      PanelRows<T, 2, NP>(ar, lda, ak, panels, k, cols, accumulate, cr, ldc);
      break;
    case 1:
      PanelRows<T, 1, NP>(ar, lda, ak, panels, k, cols, accumulate, cr, ldc);
      break;
    default:
      break;
  }
}

// c [m, n] = a [m, k] b (+ c when `accumulate`), b packed by PackPanels, a(r, i) = a[r * lda + i * ak].
// A large product is split across the threads by blocks of 4 rows: every element is computed the same way
// on any number of threads.
template <typename T>
void PackedGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, int64_t ak, const T* packed,
                bool accumulate, T* c, int64_t ldc) {
  constexpr int64_t L = kLanes<T>;
  constexpr int64_t kSerialMacs = int64_t{1} << 20;  // below this a second thread costs more than it saves
  const int64_t blocks = (m + 3) / 4;
  const int64_t grain = m * n * k < kSerialMacs ? std::max<int64_t>(1, blocks) : 1;
  ParallelFor(blocks, grain, [&](int64_t begin, int64_t end) {
    const int64_t r0 = begin * 4, rows = std::min(m, end * 4) - r0;
    const T* ar = a + r0 * lda;
    T* cr = c + r0 * ldc;
    for (int64_t p = 0; p * L < n; p += 2) {
      const T* panels = packed + p * k * L;
      if ((p + 1) * L < n) {
        PanelRowsAny<T, 2>(rows, ar, lda, ak, panels, k, std::min(L, n - (p + 1) * L), accumulate, cr + p * L, ldc);
      } else {
        PanelRowsAny<T, 1>(rows, ar, lda, ak, panels, k, n - p * L, accumulate, cr + p * L, ldc);
      }
    }
  });
}

// The per-step product: c [m, n] (+)= a [m, k] (rows of stride lda) b.
template <typename T>
void StepGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* packed, bool accumulate, T* c,
              int64_t ldc) {
  PackedGemm(m, n, k, a, lda, int64_t{1}, packed, accumulate, c, ldc);
}

// out [n, m] = the transpose of a [m, n], in tiles that stay in cache.
template <typename T>
void Transpose(const T* a, int64_t m, int64_t n, T* out) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < m; i0 += kTile) {
    for (int64_t j0 = 0; j0 < n; j0 += kTile) {
      const int64_t i1 = std::min(m, i0 + kTile), j1 = std::min(n, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j) {
        for (int64_t i = i0; i < i1; ++i) out[j * m + i] = a[i * n + j];
      }
    }
  }
}

// Every step's input projection at once: out [rows, g] (row stride ldo, holding the bias) += x [rows, in]
// W_ih^T, W_ih [g, in] packed into `scratch` (ProjectScratch elements).
template <typename T>
int64_t ProjectScratch(int64_t in, int64_t g) {
  return PackedPanelsSize<T>(in, g);
}

template <typename T>
void ProjectInputs(int64_t rows, int64_t g, int64_t in, const T* x, const T* w_ih, T* out, int64_t ldo, T* scratch) {
  PackPanels(true, in, g, w_ih, in, scratch);
  PackedGemm(rows, g, in, x, in, int64_t{1}, scratch, true, out, ldo);
}

// After BPTT, over every step at once: dx = dz_x W_ih, dW_ih = dz_x^T x and dW_hh = dz_h^T h_prev, with dz_x
// and dz_h [rows, g] (the same array for the LSTM and RNN, the GRU's dgi and dgh), x [rows, in], h_prev
// [rows, h]. The weight gradients read dz transposed (so the GEMM streams it); scratch: WeightGradScratch.
// dx is zeros when `compute_dx` is false (the bprop's input needs no gradient: the first layer's input,
// a tenth of the backward's arithmetic in the 2-layer bidirectional LSTM of bench_models).
template <typename T>
int64_t WeightGradScratch(int64_t rows, int64_t g, int64_t in, int64_t h, bool separate_dz_h) {
  return PackedPanelsSize<T>(g, in) + PackedPanelsSize<T>(rows, in) + PackedPanelsSize<T>(rows, h) +
         (separate_dz_h ? 2 : 1) * rows * g;
}

template <typename T>
void InputAndWeightGrads(int64_t rows, int64_t g, int64_t in, int64_t h, const T* x, const T* h_prev, const T* w_ih,
                         const T* dz_x, const T* dz_h, bool compute_dx, T* dx, T* dw_ih, T* dw_hh, T* scratch) {
  T* w_ih_p = scratch;
  T* x_p = w_ih_p + PackedPanelsSize<T>(g, in);
  T* h_prev_p = x_p + PackedPanelsSize<T>(rows, in);
  T* dz_x_t = h_prev_p + PackedPanelsSize<T>(rows, h);
  T* dz_h_t = dz_h == dz_x ? dz_x_t : dz_x_t + rows * g;
  PackPanels(false, rows, in, x, in, x_p);
  PackPanels(false, rows, h, h_prev, h, h_prev_p);
  Transpose(dz_x, rows, g, dz_x_t);
  if (dz_h != dz_x) Transpose(dz_h, rows, g, dz_h_t);
  if (compute_dx) {
    PackPanels(false, g, in, w_ih, in, w_ih_p);
    PackedGemm(rows, in, g, dz_x, g, int64_t{1}, w_ih_p, false, dx, in);  // dx = dz_x W_ih
  } else if (rows * in > 0) {
    std::memset(static_cast<void*>(dx), 0, sizeof(T) * static_cast<size_t>(rows * in));
  }
  PackedGemm(g, in, rows, dz_x_t, rows, int64_t{1}, x_p, false, dw_ih, in);       // dW_ih = dz_x^T x
  PackedGemm(g, h, rows, dz_h_t, rows, int64_t{1}, h_prev_p, false, dw_hh, h);  // dW_hh = dz_h^T h_prev
}

// The grads' 'compute_dx' attribute (default true): false when the bprop needs no gradient of x.
bool ComputeDx(const KernelContext& ctx) { return !ctx.HasAttr("compute_dx") || ctx.GetBool("compute_dx"); }

// Runs body(begin, end) over the batch rows [0, batch) split across the threads. The rows of a recurrence
// are independent (row r of a step reads only row r of the step before), so each thread runs the whole
// sequence for its rows with no synchronisation per step; each row's arithmetic is the same on any
// number of threads.
template <typename F>
void ForBatchRows(int64_t batch, F&& body) {
  constexpr int64_t kRowsPerThread = 4;  // one register block of StepGemm
  ParallelFor(batch, kRowsPerThread, body);
}

// The LSTM cell over whole rows: each row's H elements in one loop the compiler vectorises (the cell's
// exp-based sigmoid and tanh in opforge/vmath.h; an element-by-element loop with a division for the row
// took most of an LSTM's time). z [rows, 4H] and dz [rows, 4H]; the states [rows, H].
template <typename T>
OPF_VECTOR_CLONES void LstmForwardRows(T* z, const T* c_prev, T* c, T* h, int64_t rows, int64_t hidden) {
  for (int64_t r = 0; r < rows; ++r) {
    T* zr = z + r * 4 * hidden;
    const T* cp = c_prev + r * hidden;
    T* cr = c + r * hidden;
    T* hr = h + r * hidden;
#pragma omp simd
    for (int64_t j = 0; j < hidden; ++j) cr[j] = LstmCellForward(zr, j, hidden, cp[j], hr + j);
  }
}

template <typename T>
OPF_VECTOR_CLONES void LstmBackwardRows(const T* z, const T* c_prev, const T* c, const T* dy, const T* dh, T* dc, T* dz,
                                        int64_t rows, int64_t hidden) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* zr = z + r * 4 * hidden;
    T* dzr = dz + r * 4 * hidden;
    const int64_t o = r * hidden;
#pragma omp simd
    for (int64_t j = 0; j < hidden; ++j) {
      dc[o + j] = LstmCellBackward(zr, j, hidden, c_prev[o + j], c[o + j], dy[o + j] + dh[o + j], dc[o + j], dzr);
    }
  }
}

// The sizes of one layer: x [T, B, I], h [B, H], gates [T, B, 4H].
struct LstmShape {
  int64_t t = 0, b = 0, in = 0, h = 0;
  bool reverse = false;

  // Inputs 0-4 are x, h0, c0, w_ih, w_hh in both kernels; the forward's input 5 is the bias.
  void Init(const KernelContext& ctx, bool forward) {
    const std::string& op = ctx.op_name();
    const auto& x = ctx.input(0).shape;
    const auto& w_ih = ctx.input(3).shape;
    OPF_CHECK(x.size() == 3 && w_ih.size() == 2, "For '" << op << "', 'x' must be [seq, batch, input] and 'w_ih' "
                                                          << "[4 * hidden, input], but got " << ShapeToString(x)
                                                          << " and " << ShapeToString(w_ih) << ".");
    t = x[0];
    b = x[1];
    in = x[2];
    OPF_CHECK(w_ih[0] % 4 == 0 && w_ih[1] == in, "For '" << op << "', 'w_ih' must be [4 * hidden, " << in
                                                         << "], but got " << ShapeToString(w_ih) << ".");
    h = w_ih[0] / 4;
    const std::vector<int64_t> bh{b, h}, hh{4 * h, h}, bias{4 * h};
    OPF_CHECK(ctx.input(1).shape == bh && ctx.input(2).shape == bh,
              "For '" << op << "', 'h0' and 'c0' must be " << ShapeToString(bh) << ".");
    OPF_CHECK(ctx.input(4).shape == hh, "For '" << op << "', 'w_hh' must be " << ShapeToString(hh) << ".");
    OPF_CHECK(!forward || ctx.input(5).shape == bias,
              "For '" << op << "', 'bias' must be " << ShapeToString(bias) << ".");
    reverse = ctx.HasAttr("reverse") && ctx.GetBool("reverse");
  }
  // The step processed k-th (0-based): the sequence in order, or backwards for the reverse direction.
  int64_t Step(int64_t k) const { return reverse ? t - 1 - k : k; }
};

// Inputs x, h0, c0, w_ih, w_hh, bias; outputs y [T, B, H], h_n, c_n, gates [T, B, 4H] (activated), c [T, B, H].
template <typename T>
class LstmLayerCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    s_.Init(ctx, true);
    // W_hh^T packed, then the input projection's scratch
    SetWorkspaceBytes(static_cast<int64_t>(sizeof(T)) *
                      (PackedPanelsSize<T>(s_.h, 4 * s_.h) + ProjectScratch<T>(s_.in, 4 * s_.h)));
  }

  void Launch(const KernelArgs& args) override {
    const LstmShape s = s_;
    const int64_t g4 = 4 * s.h;
    const T *x = args.input<T>(0), *h0 = args.input<T>(1), *c0 = args.input<T>(2);
    const T *w_ih = args.input<T>(3), *w_hh = args.input<T>(4), *bias = args.input<T>(5);
    T *y = args.output<T>(0), *hn = args.output<T>(1), *cn = args.output<T>(2);
    T *gates = args.output<T>(3), *cs = args.output<T>(4);
    T* w_hh_t = args.workspace<T>();
    PackPanels(true, s.h, g4, w_hh, s.h, w_hh_t);
    // Every step's input projection at once: gates = x W_ih^T + bias.
    for (int64_t r = 0; r < s.t * s.b; ++r) CopyElems(gates + r * g4, bias, g4);
    ProjectInputs(s.t * s.b, g4, s.in, x, w_ih, gates, g4, w_hh_t + PackedPanelsSize<T>(s.h, g4));
    const int64_t bh = s.b * s.h;
    ForBatchRows(s.b, [&](int64_t begin, int64_t end) {
      const int64_t rows = end - begin, o = begin * s.h;
      const T *hp = h0 + o, *cp = c0 + o;  // h_{t-1} and c_{t-1} of these rows
      for (int64_t k = 0; k < s.t; ++k) {
        const int64_t t = s.Step(k);
        T* z = gates + (t * s.b + begin) * g4;
        StepGemm(rows, g4, s.h, hp, s.h, w_hh_t, true, z, g4);  // z += h_{t-1} W_hh^T
        T *yt = y + t * bh + o, *ct = cs + t * bh + o;
        LstmForwardRows(z, cp, ct, yt, rows, s.h);
        hp = yt;
        cp = ct;
      }
      CopyElems(hn + o, hp, rows * s.h);
      CopyElems(cn + o, cp, rows * s.h);
    });
  }

 private:
  LstmShape s_;
};

// Inputs x, h0, c0, w_ih, w_hh, y, gates, c, dy, dh_n, dc_n; outputs dx, dh0, dc0, dw_ih, dw_hh, dbias.
template <typename T>
class LstmLayerGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    s_.Init(ctx, false);
    compute_dx_ = ComputeDx(ctx);
    const int64_t rows = s_.t * s_.b;
    // dz [T, B, 4H], h_prev [T, B, H], dh and dc [B, H], W_hh packed, the weight gradients' scratch
    SetWorkspaceBytes(static_cast<int64_t>(sizeof(T)) *
                      (rows * 4 * s_.h + rows * s_.h + 2 * s_.b * s_.h + PackedPanelsSize<T>(4 * s_.h, s_.h) +
                       WeightGradScratch<T>(rows, 4 * s_.h, s_.in, s_.h, false)));
  }

  void Launch(const KernelArgs& args) override {
    const LstmShape s = s_;
    const int64_t g4 = 4 * s.h, bh = s.b * s.h, rows = s.t * s.b;
    const T *x = args.input<T>(0), *h0 = args.input<T>(1), *c0 = args.input<T>(2);
    const T *w_ih = args.input<T>(3), *w_hh = args.input<T>(4), *y = args.input<T>(5);
    const T *gates = args.input<T>(6), *cs = args.input<T>(7), *dy = args.input<T>(8);
    const T *dhn = args.input<T>(9), *dcn = args.input<T>(10);
    T *dx = args.output<T>(0), *dh0 = args.output<T>(1), *dc0 = args.output<T>(2);
    T *dw_ih = args.output<T>(3), *dw_hh = args.output<T>(4), *dbias = args.output<T>(5);
    T* dz = args.workspace<T>();
    T* h_prev = dz + rows * g4;
    T* dh = h_prev + rows * s.h;
    T* dc = dh + bh;
    T* w_hh_p = dc + bh;
    PackPanels(false, g4, s.h, w_hh, s.h, w_hh_p);
    ForBatchRows(s.b, [&](int64_t begin, int64_t end) {
      const int64_t rows = end - begin, o = begin * s.h;
      T *dh_r = dh + o, *dc_r = dc + o;
      CopyElems(dh_r, dhn + o, rows * s.h);
      CopyElems(dc_r, dcn + o, rows * s.h);
      for (int64_t k = s.t - 1; k >= 0; --k) {
        const int64_t t = s.Step(k);
        // h_{t-1} and c_{t-1}: the states the step started from
        const T* hp = (k == 0 ? h0 : y + s.Step(k - 1) * bh) + o;
        const T* cp = (k == 0 ? c0 : cs + s.Step(k - 1) * bh) + o;
        CopyElems(h_prev + t * bh + o, hp, rows * s.h);
        const int64_t zo = (t * s.b + begin) * g4;
        LstmBackwardRows(gates + zo, cp, cs + t * bh + o, dy + t * bh + o, dh_r, dc_r, dz + zo, rows, s.h);
        StepGemm(rows, s.h, g4, dz + zo, g4, w_hh_p, false, dh_r, s.h);  // dh_{t-1} = dz W_hh
      }
      CopyElems(dh0 + o, dh_r, rows * s.h);
      CopyElems(dc0 + o, dc_r, rows * s.h);
    });
    InputAndWeightGrads(rows, g4, s.in, s.h, x, h_prev, w_ih, dz, dz, compute_dx_, dx, dw_ih, dw_hh,
                        w_hh_p + PackedPanelsSize<T>(g4, s.h));
    for (int64_t j = 0; j < g4; ++j) dbias[j] = T(0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < g4; ++j) dbias[j] += dz[r * g4 + j];
  }

 private:
  LstmShape s_;
  bool compute_dx_ = true;
};

// The sizes of a GRU or RNN layer (inputs x, h0, w_ih, w_hh, ...): x [T, B, I], h [B, H], w_ih [G * H, I].
struct SeqShape {
  int64_t t = 0, b = 0, in = 0, h = 0, gates = 1;
  bool reverse = false;

  void Init(const KernelContext& ctx, int64_t n_gates) {
    const std::string& op = ctx.op_name();
    const auto& x = ctx.input(0).shape;
    const auto& w_ih = ctx.input(2).shape;
    OPF_CHECK(x.size() == 3 && w_ih.size() == 2 && w_ih[0] % n_gates == 0 && w_ih[1] == x[2],
              "For '" << op << "', 'x' must be [seq, batch, input] and 'w_ih' [" << n_gates
                      << " * hidden, input], but got " << ShapeToString(x) << " and " << ShapeToString(w_ih) << ".");
    t = x[0];
    b = x[1];
    in = x[2];
    gates = n_gates;
    h = w_ih[0] / n_gates;
    const std::vector<int64_t> bh{b, h}, hh{n_gates * h, h};
    OPF_CHECK(ctx.input(1).shape == bh, "For '" << op << "', 'h0' must be " << ShapeToString(bh) << ".");
    OPF_CHECK(ctx.input(3).shape == hh, "For '" << op << "', 'w_hh' must be " << ShapeToString(hh) << ".");
    reverse = ctx.HasAttr("reverse") && ctx.GetBool("reverse");
  }
  int64_t Step(int64_t k) const { return reverse ? t - 1 - k : k; }
};

// Fills each of `rows` rows (stride ld) with bias[0, n).
template <typename T>
void FillRows(T* out, int64_t rows, int64_t n, int64_t ld, const T* bias) {
  for (int64_t r = 0; r < rows; ++r) CopyElems(out + r * ld, bias, n);
}

// out[0, n) (+)= the column sums of x [rows, n].
template <typename T>
void SumRows(const T* x, int64_t rows, int64_t n, T* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = T(0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) out[j] += x[r * n + j];
}

// The GRU cell over whole rows (vectorised like the LSTM's): g [rows, 4H] (gi in, saved gates out),
// gh [rows, 3H], the states [rows, H].
template <typename T>
OPF_VECTOR_CLONES void GruForwardRows(T* g, const T* gh, const T* h_prev, T* h, int64_t rows, int64_t hidden) {
  for (int64_t r = 0; r < rows; ++r) {
    T* gr = g + r * 4 * hidden;
    const T* ghr = gh + r * 3 * hidden;
    const int64_t o = r * hidden;
#pragma omp simd
    for (int64_t j = 0; j < hidden; ++j) h[o + j] = GruCellForward(gr, ghr, j, hidden, h_prev[o + j]);
  }
}

// dh [rows, H] holds the gradient of h on entry (without dy) and the direct part of dh_prev on exit.
template <typename T>
OPF_VECTOR_CLONES void GruBackwardRows(const T* g, const T* h_prev, const T* dy, T* dh, T* dgi, T* dgh, int64_t rows,
                                       int64_t hidden) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* gr = g + r * 4 * hidden;
    T *dgir = dgi + r * 3 * hidden, *dghr = dgh + r * 3 * hidden;
    const int64_t o = r * hidden;
#pragma omp simd
    for (int64_t j = 0; j < hidden; ++j) {
      dh[o + j] = GruCellBackward(gr, j, hidden, h_prev[o + j], dy[o + j] + dh[o + j], dgir, dghr);
    }
  }
}

// GRULayer. Inputs x, h0, w_ih [3H, I], w_hh [3H, H], b_ih, b_hh [3H]; outputs y [T, B, H], h_n, and the
// saved gates [T, B, 4H] (r, z, n, gh_n per row).
template <typename T>
class GruLayerCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    s_.Init(ctx, 3);
    // gh of one step, W_hh^T packed
    SetWorkspaceBytes(static_cast<int64_t>(sizeof(T)) *
                      (s_.b * 3 * s_.h + PackedPanelsSize<T>(s_.h, 3 * s_.h) + ProjectScratch<T>(s_.in, 3 * s_.h)));
  }

  void Launch(const KernelArgs& args) override {
    const SeqShape s = s_;
    const int64_t g3 = 3 * s.h, g4 = 4 * s.h, bh = s.b * s.h;
    const T *x = args.input<T>(0), *h0 = args.input<T>(1), *w_ih = args.input<T>(2), *w_hh = args.input<T>(3);
    const T *b_ih = args.input<T>(4), *b_hh = args.input<T>(5);
    T *y = args.output<T>(0), *hn = args.output<T>(1), *gates = args.output<T>(2);
    T* gh = args.workspace<T>();
    T* w_hh_t = gh + s.b * g3;
    PackPanels(true, s.h, g3, w_hh, s.h, w_hh_t);
    // Every step's input projection at once, into the first 3H columns of each gates row.
    FillRows(gates, s.t * s.b, g3, g4, b_ih);
    ProjectInputs(s.t * s.b, g3, s.in, x, w_ih, gates, g4, w_hh_t + PackedPanelsSize<T>(s.h, g3));
    ForBatchRows(s.b, [&](int64_t begin, int64_t end) {
      const int64_t rows = end - begin, o = begin * s.h;
      const T* hp = h0 + o;
      T* gh_r = gh + begin * g3;
      for (int64_t k = 0; k < s.t; ++k) {
        const int64_t t = s.Step(k);
        FillRows(gh_r, rows, g3, g3, b_hh);
        StepGemm(rows, g3, s.h, hp, s.h, w_hh_t, true, gh_r, g3);  // gh = h_{t-1} W_hh^T + b_hh
        T* yt = y + t * bh + o;
        GruForwardRows(gates + (t * s.b + begin) * g4, gh_r, hp, yt, rows, s.h);
        hp = yt;
      }
      CopyElems(hn + o, hp, rows * s.h);
    });
  }

 private:
  SeqShape s_;
};

// GRULayerGrad. Inputs x, h0, w_ih, w_hh, y, gates, dy, dh_n; outputs dx, dh0, dw_ih, dw_hh, db_ih, db_hh.
template <typename T>
class GruLayerGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    s_.Init(ctx, 3);
    compute_dx_ = ComputeDx(ctx);
    const int64_t rows = s_.t * s_.b;
    // dgi and dgh [T, B, 3H], h_prev [T, B, H], dh [B, H], W_hh packed
    SetWorkspaceBytes(static_cast<int64_t>(sizeof(T)) *
                      (2 * rows * 3 * s_.h + rows * s_.h + s_.b * s_.h + PackedPanelsSize<T>(3 * s_.h, s_.h) +
                       WeightGradScratch<T>(rows, 3 * s_.h, s_.in, s_.h, true)));
  }

  void Launch(const KernelArgs& args) override {
    const SeqShape s = s_;
    const int64_t g3 = 3 * s.h, g4 = 4 * s.h, bh = s.b * s.h, rows = s.t * s.b;
    const T *x = args.input<T>(0), *h0 = args.input<T>(1), *w_ih = args.input<T>(2), *w_hh = args.input<T>(3);
    const T *y = args.input<T>(4), *gates = args.input<T>(5), *dy = args.input<T>(6), *dhn = args.input<T>(7);
    T *dx = args.output<T>(0), *dh0 = args.output<T>(1), *dw_ih = args.output<T>(2), *dw_hh = args.output<T>(3);
    T *db_ih = args.output<T>(4), *db_hh = args.output<T>(5);
    T* dgi = args.workspace<T>();
    T* dgh = dgi + rows * g3;
    T* h_prev = dgh + rows * g3;
    T* dh = h_prev + rows * s.h;
    T* w_hh_p = dh + bh;
    PackPanels(false, g3, s.h, w_hh, s.h, w_hh_p);
    ForBatchRows(s.b, [&](int64_t begin, int64_t end) {
      const int64_t rows = end - begin, o = begin * s.h;
      T* dh_r = dh + o;
      CopyElems(dh_r, dhn + o, rows * s.h);
      for (int64_t k = s.t - 1; k >= 0; --k) {
        const int64_t t = s.Step(k);
        const T* hp = (k == 0 ? h0 : y + s.Step(k - 1) * bh) + o;
        CopyElems(h_prev + t * bh + o, hp, rows * s.h);
        const int64_t go = (t * s.b + begin) * g3;
        GruBackwardRows(gates + (t * s.b + begin) * g4, hp, dy + t * bh + o, dh_r, dgi + go, dgh + go, rows, s.h);
        StepGemm(rows, s.h, g3, dgh + go, g3, w_hh_p, true, dh_r, s.h);  // dh_{t-1} += dgh W_hh
      }
      CopyElems(dh0 + o, dh_r, rows * s.h);
    });
    InputAndWeightGrads(rows, g3, s.in, s.h, x, h_prev, w_ih, dgi, dgh, compute_dx_, dx, dw_ih, dw_hh,
                        w_hh_p + PackedPanelsSize<T>(g3, s.h));
    SumRows(dgi, rows, g3, db_ih);
    SumRows(dgh, rows, g3, db_hh);
  }

 private:
  SeqShape s_;
  bool compute_dx_ = true;
};

bool RnnRelu(const KernelContext& ctx) {
  const std::string act = ctx.HasAttr("nonlinearity") ? ctx.GetStr("nonlinearity") : "tanh";
  OPF_CHECK(act == "tanh" || act == "relu",
            "For '" << ctx.op_name() << "', 'nonlinearity' must be 'tanh' or 'relu', but got '" << act << "'.");
  return act == "relu";
}

// The plain RNN's activation over n elements in place, and its backward dz = (dy + dh) act'(y).
template <typename T>
OPF_VECTOR_CLONES void RnnForwardRows(T* z, int64_t n, bool relu) {
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) z[e] = RnnActivate(z[e], relu);
}

template <typename T>
OPF_VECTOR_CLONES void RnnBackwardRows(const T* y, const T* dy, const T* dh, T* dz, int64_t n, bool relu) {
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) dz[e] = (dy[e] + dh[e]) * RnnActivateGrad(y[e], relu);
}

// RNNLayer. Inputs x, h0, w_ih [H, I], w_hh [H, H], bias [H] (b_ih + b_hh); outputs y [T, B, H], h_n.
template <typename T>
class RnnLayerCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    s_.Init(ctx, 1);
    relu_ = RnnRelu(ctx);
    // W_hh^T packed, the input projection's scratch
    SetWorkspaceBytes(static_cast<int64_t>(sizeof(T)) *
                      (PackedPanelsSize<T>(s_.h, s_.h) + ProjectScratch<T>(s_.in, s_.h)));
  }

  void Launch(const KernelArgs& args) override {
    const SeqShape s = s_;
    const bool relu = relu_;
    const int64_t bh = s.b * s.h;
    const T *x = args.input<T>(0), *h0 = args.input<T>(1), *w_ih = args.input<T>(2), *w_hh = args.input<T>(3);
    const T* bias = args.input<T>(4);
    T *y = args.output<T>(0), *hn = args.output<T>(1);
    T* w_hh_t = args.workspace<T>();
    PackPanels(true, s.h, s.h, w_hh, s.h, w_hh_t);
    // y holds every step's pre-activation until its step runs: x W_ih^T + b, then + h_{t-1} W_hh^T.
    FillRows(y, s.t * s.b, s.h, s.h, bias);
    ProjectInputs(s.t * s.b, s.h, s.in, x, w_ih, y, s.h, w_hh_t + PackedPanelsSize<T>(s.h, s.h));
    ForBatchRows(s.b, [&](int64_t begin, int64_t end) {
      const int64_t rows = end - begin, o = begin * s.h;
      const T* hp = h0 + o;
      for (int64_t k = 0; k < s.t; ++k) {
        T* yt = y + s.Step(k) * bh + o;
        StepGemm(rows, s.h, s.h, hp, s.h, w_hh_t, true, yt, s.h);
        RnnForwardRows(yt, rows * s.h, relu);
        hp = yt;
      }
      CopyElems(hn + o, hp, rows * s.h);
    });
  }

 private:
  SeqShape s_;
  bool relu_ = false;
};

// RNNLayerGrad. Inputs x, h0, w_ih, w_hh, y, dy, dh_n; outputs dx, dh0, dw_ih, dw_hh, dbias.
template <typename T>
class RnnLayerGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    s_.Init(ctx, 1);
    relu_ = RnnRelu(ctx);
    compute_dx_ = ComputeDx(ctx);
    const int64_t rows = s_.t * s_.b;
    // dz, h_prev, dh, W_hh packed, the weight gradients' scratch
    SetWorkspaceBytes(static_cast<int64_t>(sizeof(T)) *
                      (2 * rows * s_.h + s_.b * s_.h + PackedPanelsSize<T>(s_.h, s_.h) +
                       WeightGradScratch<T>(rows, s_.h, s_.in, s_.h, false)));
  }

  void Launch(const KernelArgs& args) override {
    const SeqShape s = s_;
    const bool relu = relu_;
    const int64_t bh = s.b * s.h, rows = s.t * s.b;
    const T *x = args.input<T>(0), *h0 = args.input<T>(1), *w_ih = args.input<T>(2), *w_hh = args.input<T>(3);
    const T *y = args.input<T>(4), *dy = args.input<T>(5), *dhn = args.input<T>(6);
    T *dx = args.output<T>(0), *dh0 = args.output<T>(1), *dw_ih = args.output<T>(2), *dw_hh = args.output<T>(3);
    T* dbias = args.output<T>(4);
    T* dz = args.workspace<T>();
    T* h_prev = dz + rows * s.h;
    T* dh = h_prev + rows * s.h;
    T* w_hh_p = dh + bh;
    PackPanels(false, s.h, s.h, w_hh, s.h, w_hh_p);
    ForBatchRows(s.b, [&](int64_t begin, int64_t end) {
      const int64_t rows = end - begin, o = begin * s.h;
      T* dh_r = dh + o;
      CopyElems(dh_r, dhn + o, rows * s.h);
      for (int64_t k = s.t - 1; k >= 0; --k) {
        const int64_t t = s.Step(k);
        CopyElems(h_prev + t * bh + o, (k == 0 ? h0 : y + s.Step(k - 1) * bh) + o, rows * s.h);
        T* dzt = dz + t * bh + o;
        RnnBackwardRows(y + t * bh + o, dy + t * bh + o, dh_r, dzt, rows * s.h, relu);
        StepGemm(rows, s.h, s.h, dzt, s.h, w_hh_p, false, dh_r, s.h);  // dh_{t-1} = dz W_hh
      }
      CopyElems(dh0 + o, dh_r, rows * s.h);
    });
    InputAndWeightGrads(rows, s.h, s.in, s.h, x, h_prev, w_ih, dz, dz, compute_dx_, dx, dw_ih, dw_hh,
                        w_hh_p + PackedPanelsSize<T>(s.h, s.h));
    SumRows(dz, rows, s.h, dbias);
  }

 private:
  SeqShape s_;
  bool relu_ = false;
  bool compute_dx_ = true;
};

KernelAttr SameAttr(TypeId id, int n_in, int n_out) {
  KernelAttr attr;
  for (int i = 0; i < n_in; ++i) attr.AddInputAttr(id);
  for (int i = 0; i < n_out; ++i) attr.AddOutputAttr(id);
  return attr;
}

#define REG_LSTM(ID, T)                                                   \
  MS_REG_CPU_KERNEL(LSTMLayer, SameAttr(ID, 6, 5), LstmLayerCpuKernel<T>); \
  MS_REG_CPU_KERNEL(LSTMLayerGrad, SameAttr(ID, 11, 6), LstmLayerGradCpuKernel<T>)

REG_LSTM(kNumberTypeFloat32, float);
REG_LSTM(kNumberTypeFloat64, double);

#define REG_GRU_RNN(ID, T)                                                       \
  MS_REG_CPU_KERNEL(GRULayer, SameAttr(ID, 6, 3), GruLayerCpuKernel<T>);         \
  MS_REG_CPU_KERNEL(GRULayerGrad, SameAttr(ID, 8, 6), GruLayerGradCpuKernel<T>); \
  MS_REG_CPU_KERNEL(RNNLayer, SameAttr(ID, 5, 2), RnnLayerCpuKernel<T>);         \
  MS_REG_CPU_KERNEL(RNNLayerGrad, SameAttr(ID, 7, 5), RnnLayerGradCpuKernel<T>)

REG_GRU_RNN(kNumberTypeFloat32, float);
REG_GRU_RNN(kNumberTypeFloat64, double);

}  // namespace
}  // namespace opforge
