// The LSTM cell's per-element math, shared by the C++ kernels (csrc/kernels/cpu/rnn.cc) and the CUDA
// kernels (csrc/kernels/cuda/rnn.cu). Gates are laid out [i | f | g | o] (MindSpore's and PyTorch's
// order), each H wide; z holds their pre-activations x W_ih^T + h W_hh^T + b.
//
//   i = sigmoid(z_i), f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o)
//   c = f * c_prev + i * g,   h = o * tanh(c)
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

template <typename C>
OPF_HD C LstmSigmoid(C x) {
  return C(1) / (C(1) + math::exp(-x));
}

// Element j of one row (of H): the pre-activations in gates[] are replaced by the activated gates
// (saved for the backward pass); returns c, writes h.
template <typename C>
OPF_HD C LstmCellForward(C* gates, int64_t j, int64_t hidden, C c_prev, C* h) {
  const C i = LstmSigmoid(gates[j]);
  const C f = LstmSigmoid(gates[hidden + j]);
  const C g = math::tanh(gates[2 * hidden + j]);
  const C o = LstmSigmoid(gates[3 * hidden + j]);
  gates[j] = i;
  gates[hidden + j] = f;
  gates[2 * hidden + j] = g;
  gates[3 * hidden + j] = o;
  const C c = f * c_prev + i * g;
  *h = o * math::tanh(c);
  return c;
}

// The backward of element j: from the activated gates, c_prev and c, the gradient dh of h and dc of c
// (from the later step), writes the pre-activation gradients dz[4H row] and returns the gradient of c_prev.
template <typename C>
OPF_HD C LstmCellBackward(const C* gates, int64_t j, int64_t hidden, C c_prev, C c, C dh, C dc, C* dz) {
  const C i = gates[j], f = gates[hidden + j], g = gates[2 * hidden + j], o = gates[3 * hidden + j];
  const C tc = math::tanh(c);
  const C dc_total = dc + dh * o * (C(1) - tc * tc);
  dz[j] = dc_total * g * i * (C(1) - i);
  dz[hidden + j] = dc_total * c_prev * f * (C(1) - f);
  dz[2 * hidden + j] = dc_total * i * (C(1) - g * g);
  dz[3 * hidden + j] = dh * tc * o * (C(1) - o);
  return dc_total * f;
}

}  // namespace opforge
