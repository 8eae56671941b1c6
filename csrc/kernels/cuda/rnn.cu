// LSTMLayer, GRULayer, RNNLayer and their grads on the GPU: the GEMMs are cuBLAS's, given with these kernels as
// the steps of one launch by opforge/kernels/gpu/rnn.py; these kernels are the per-step cell math of
// functors/rnn.h, one thread per (batch row, hidden unit), each owning its four gate entries.
#include "copy.cuh"  // CopyKernel: the carried state's first value
#include "opforge/cuda.h"
#include "opforge/functors/rnn.h"

namespace opforge {
namespace cuda {

// Step t: z = gates[t] (x W_ih^T, precomputed) + hw (h_{t-1} W_hh^T) + bias, then the cell; writes the
// activated gates in place, c and h into the sequence outputs and into the carried h and c.
template <typename T>
__global__ void LstmForwardStepKernel(T* gates, const T* hw, const T* bias, T* y, T* cs, T* h, T* c, int64_t t,
                                      int64_t batch, int64_t hidden) {
  const int64_t n = batch * hidden, g4 = 4 * hidden;
  OPF_GRID_STRIDE_LOOP(e, n) {
    const int64_t row = e / hidden, j = e % hidden;
    T* z = gates + (t * batch + row) * g4;
    const T* r = hw + row * g4;
    for (int64_t k = 0; k < 4; ++k) z[k * hidden + j] += r[k * hidden + j] + bias[k * hidden + j];
    T out;
    const T cell = LstmCellForward(z, j, hidden, c[e], &out);
    cs[t * n + e] = cell;
    y[t * n + e] = out;
    c[e] = cell;
    h[e] = out;
  }
}

// Step t of BPTT (prev: the step the forward ran before t, or -1): dh = dy[t] + dh_next; writes the
// gate gradients into dz[t] and dz_step (the step's GEMM operand), the carried dc, and h_{t-1} into h_prev.
template <typename T>
__global__ void LstmBackwardStepKernel(const T* gates, const T* cs, const T* c0, const T* y, const T* h0, const T* dy,
                                       const T* dh_next, T* dc, T* dz, T* dz_step, T* h_prev, int64_t t, int64_t prev,
                                       int64_t batch, int64_t hidden) {
  const int64_t n = batch * hidden, g4 = 4 * hidden;
  OPF_GRID_STRIDE_LOOP(e, n) {
    const int64_t row = e / hidden, j = e % hidden;
    const T c_prev = prev < 0 ? c0[e] : cs[prev * n + e];
    h_prev[t * n + e] = prev < 0 ? h0[e] : y[prev * n + e];
    T* dzt = dz + (t * batch + row) * g4;
    dc[e] = LstmCellBackward(gates + (t * batch + row) * g4, j, hidden, c_prev, cs[t * n + e], dy[t * n + e] + dh_next[e],
                             dc[e], dzt);
    for (int64_t k = 0; k < 4; ++k) dz_step[row * g4 + k * hidden + j] = dzt[k * hidden + j];
  }
}

// GRULayer step t: the row's gi (x W_ih^T, precomputed for every step) + b_ih goes into the gates row, hw
// (h_{t-1} W_hh^T) gets b_hh, then the cell of functors/rnn.h; writes h into y[t] and the carried h.
template <typename T>
__global__ void GruForwardStepKernel(const T* gi, T* gates, T* hw, const T* b_ih, const T* b_hh, T* y, T* h, int64_t t,
                                     int64_t batch, int64_t hidden) {
  const int64_t n = batch * hidden, g3 = 3 * hidden, g4 = 4 * hidden;
  OPF_GRID_STRIDE_LOOP(e, n) {
    const int64_t row = e / hidden, j = e % hidden;
    const T* gir = gi + (t * batch + row) * g3;
    T* g = gates + (t * batch + row) * g4;
    T* gh = hw + row * g3;
    for (int64_t k = 0; k < 3; ++k) {
      g[k * hidden + j] = gir[k * hidden + j] + b_ih[k * hidden + j];
      gh[k * hidden + j] += b_hh[k * hidden + j];
    }
    const T out = GruCellForward(g, gh, j, hidden, h[e]);
    y[t * n + e] = out;
    h[e] = out;
  }
}

// GRULayerGrad step t (prev: the step the forward ran before t, or -1). The gradient of h_t is dy[t] +
// dh_mm (the previous BPTT step's dgh W_hh, or dh_n) + dh_dir (its direct part); writes the gate gradients
// into dgi[t], dgh[t] and dgh_step (the step's GEMM operand), the new direct part, and h_{t-1} into h_prev.
template <typename T>
__global__ void GruBackwardStepKernel(const T* gates, const T* y, const T* h0, const T* dy, const T* dh_mm, T* dh_dir,
                                      T* dgi, T* dgh, T* dgh_step, T* h_prev, int64_t t, int64_t prev, int64_t batch,
                                      int64_t hidden) {
  const int64_t n = batch * hidden, g3 = 3 * hidden, g4 = 4 * hidden;
  OPF_GRID_STRIDE_LOOP(e, n) {
    const int64_t row = e / hidden, j = e % hidden;
    const T hp = prev < 0 ? h0[e] : y[prev * n + e];
    h_prev[t * n + e] = hp;
    T* dgit = dgi + (t * batch + row) * g3;
    T* dght = dgh + (t * batch + row) * g3;
    dh_dir[e] = GruCellBackward(gates + (t * batch + row) * g4, j, hidden, hp, dy[t * n + e] + dh_mm[e] + dh_dir[e],
                                dgit, dght);
    for (int64_t k = 0; k < 3; ++k) dgh_step[row * g3 + k * hidden + j] = dght[k * hidden + j];
  }
}

// RNNLayer step t: h = act(pre[t] (x W_ih^T) + hw (h_{t-1} W_hh^T) + bias) into y[t] and the carried h.
template <typename T>
__global__ void RnnForwardStepKernel(const T* pre, const T* hw, const T* bias, T* y, T* h, int64_t t, int64_t batch,
                                     int64_t hidden, int64_t relu) {
  const int64_t n = batch * hidden;
  OPF_GRID_STRIDE_LOOP(e, n) {
    const T out = RnnActivate(pre[t * n + e] + hw[e] + bias[e % hidden], relu != 0);
    y[t * n + e] = out;
    h[e] = out;
  }
}

// RNNLayerGrad step t: dz = (dy[t] + dh) act'(y[t]) into dz[t] and dz_step, h_{t-1} into h_prev.
template <typename T>
__global__ void RnnBackwardStepKernel(const T* y, const T* h0, const T* dy, const T* dh, T* dz, T* dz_step, T* h_prev,
                                      int64_t t, int64_t prev, int64_t batch, int64_t hidden, int64_t relu) {
  const int64_t n = batch * hidden;
  OPF_GRID_STRIDE_LOOP(e, n) {
    h_prev[t * n + e] = prev < 0 ? h0[e] : y[prev * n + e];
    const T d = (dy[t * n + e] + dh[e]) * RnnActivateGrad(y[t * n + e], relu != 0);
    dz[t * n + e] = d;
    dz_step[e] = d;
  }
}

// out = a + b over n elements.
template <typename T>
__global__ void AddKernel(const T* a, const T* b, T* out, int64_t n) {
  OPF_GRID_STRIDE_LOOP(e, n) { out[e] = a[e] + b[e]; }
}

// out[j] = sum of the rows of x [rows, cols] (the bias gradient), one thread per column.
template <typename T>
__global__ void SumRowsKernel(const T* x, T* out, int64_t rows, int64_t cols) {
  OPF_GRID_STRIDE_LOOP(j, cols) {
    T acc = T(0);
    for (int64_t r = 0; r < rows; ++r) acc += x[r * cols + j];
    out[j] = acc;
  }
}

}  // namespace cuda
}  // namespace opforge
