// The recurrent cells' per-element math (LSTM, GRU, plain RNN), shared by the C++ kernels (csrc/kernels/cpu/rnn.cc) and the CUDA
// kernels (csrc/kernels/cuda/rnn.cu). Gates are laid out [i | f | g | o] (MindSpore's and PyTorch's
// order), each H wide; z holds their pre-activations x W_ih^T + h W_hh^T + b.
//
//   i = sigmoid(z_i), f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o)
//   c = f * c_prev + i * g,   h = o * tanh(c)
#pragma once

#include "opforge/functors/activation.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

template <typename C>
OPF_HD C LstmSigmoid(C x) {
  return C(1) / (C(1) + math::exp(-x));
}

// tanh for the cells. In float it goes through exp (tanh|x| = (1 - e^{-2|x|}) / (1 + e^{-2|x|}), a Taylor
// polynomial below |x| = 1/16 where that difference cancels): glibc's tanhf (through expm1f) measured
// several times slower than expf and took a fifth of an LSTM's time. Relative error under 1e-6.
// double keeps math::tanh.
template <typename C>
OPF_HD C RnnTanh(C x) {
  if constexpr (sizeof(C) == sizeof(float)) {
    // Both arms computed and selected (no branch), so the cells' loops vectorise.
    const C a = math::Select(x < C(0), -x, x);
    const C a2 = a * a;
    const C small = a * (C(1) - a2 * (C(1) / C(3) - a2 * C(2) / C(15)));
    const C t = math::exp(C(-2) * a);
    const C r = math::Select(a < C(0.0625), small, (C(1) - t) / (C(1) + t));
    return math::Select(x < C(0), -r, r);
  } else {
    return math::tanh(x);
  }
}

// Element j of one row (of H): the pre-activations in gates[] are replaced by the activated gates
// (saved for the backward pass); returns c, writes h.
template <typename C>
OPF_HD C LstmCellForward(C* gates, int64_t j, int64_t hidden, C c_prev, C* h) {
  const C i = LstmSigmoid(gates[j]);
  const C f = LstmSigmoid(gates[hidden + j]);
  const C g = RnnTanh(gates[2 * hidden + j]);
  const C o = LstmSigmoid(gates[3 * hidden + j]);
  gates[j] = i;
  gates[hidden + j] = f;
  gates[2 * hidden + j] = g;
  gates[3 * hidden + j] = o;
  const C c = f * c_prev + i * g;
  *h = o * RnnTanh(c);
  return c;
}

// The backward of element j: from the activated gates, c_prev and c, the gradient dh of h and dc of c
// (from the later step), writes the pre-activation gradients dz[4H row] and returns the gradient of c_prev.
template <typename C>
OPF_HD C LstmCellBackward(const C* gates, int64_t j, int64_t hidden, C c_prev, C c, C dh, C dc, C* dz) {
  const C i = gates[j], f = gates[hidden + j], g = gates[2 * hidden + j], o = gates[3 * hidden + j];
  const C tc = RnnTanh(c);
  const C dc_total = dc + dh * o * (C(1) - tc * tc);
  dz[j] = dc_total * g * i * (C(1) - i);
  dz[hidden + j] = dc_total * c_prev * f * (C(1) - f);
  dz[2 * hidden + j] = dc_total * i * (C(1) - g * g);
  dz[3 * hidden + j] = dh * tc * o * (C(1) - o);
  return dc_total * f;
}

// GRU (gates r, z, n, MindSpore's and PyTorch's order): gi = x W_ih^T + b_ih, gh = h W_hh^T + b_hh,
//   r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n),  h = n + z * (h_prev - n).
// g is one row of 4H: on entry gi in its first 3H; on exit r, z, n and gh_n (what the backward needs).
template <typename C>
OPF_HD C GruCellForward(C* g, const C* gh, int64_t j, int64_t hidden, C h_prev) {
  const C r = LstmSigmoid(g[j] + gh[j]);
  const C z = LstmSigmoid(g[hidden + j] + gh[hidden + j]);
  const C ghn = gh[2 * hidden + j];
  const C n = RnnTanh(g[2 * hidden + j] + r * ghn);
  g[j] = r;
  g[hidden + j] = z;
  g[2 * hidden + j] = n;
  g[3 * hidden + j] = ghn;
  return n + z * (h_prev - n);
}

// The GRU's backward of element j: from the saved row g (r, z, n, gh_n), h_prev and the gradient dh of h,
// writes the gradients of gi (dgi) and of gh (dgh), 3H rows each; returns the direct part of dh_prev (the
// part through W_hh is dgh W_hh).
template <typename C>
OPF_HD C GruCellBackward(const C* g, int64_t j, int64_t hidden, C h_prev, C dh, C* dgi, C* dgh) {
  const C r = g[j], z = g[hidden + j], n = g[2 * hidden + j], ghn = g[3 * hidden + j];
  const C dn = dh * (C(1) - z) * (C(1) - n * n);
  const C dz = dh * (h_prev - n) * z * (C(1) - z);
  const C dr = dn * ghn * r * (C(1) - r);
  dgi[j] = dr;
  dgi[hidden + j] = dz;
  dgi[2 * hidden + j] = dn;
  dgh[j] = dr;
  dgh[hidden + j] = dz;
  dgh[2 * hidden + j] = dn * r;
  return dh * z;
}

// Plain RNN: h = act(x W_ih^T + h_prev W_hh^T + b), act tanh or relu (MindSpore's nonlinearity; ReLU's
// functor, so a NaN stays NaN).
template <typename C>
OPF_HD C RnnActivate(C z, bool relu) {
  return relu ? ReluOp()(z) : RnnTanh(z);
}

// d act / d z, from the output h = act(z).
template <typename C>
OPF_HD C RnnActivateGrad(C h, bool relu) {
  return relu ? (h > C(0) ? C(1) : C(0)) : C(1) - h * h;
}

}  // namespace opforge
