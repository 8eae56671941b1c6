// The per-element math of L2Loss and SmoothL1Loss / SmoothL1LossGrad, shared by the CPU kernels
// (csrc/kernels/cpu/loss_norm.cc) and the CUDA kernels (csrc/kernels/cuda/loss_norm.cu). Host and device.
#pragma once

#include "opforge/half.h"
#include "opforge/math.h"

namespace opforge {

// SmoothL1 of d = x - y: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.
template <typename S>
OPF_HD S SmoothL1(S d, S beta) {
  const S a = d < S(0) ? -d : d;
  return a < beta ? S(0.5) * d * d / beta : a - S(0.5) * beta;
}

// Its derivative in d: d / beta clipped to [-1, 1].
template <typename S>
OPF_HD S SmoothL1Grad(S d, S beta) {
  const S g = d / beta;
  return g > S(1) ? S(1) : (g < S(-1) ? S(-1) : g);
}

// BCEWithLogitsLoss's term: w * ((1 - y) x + (1 + (pw - 1) y) softplus(-x)), the stable form of
// -w (pw y log(sigmoid(x)) + (1 - y) log(1 - sigmoid(x))), with softplus(-x) = log1p(exp(-|x|)) + max(-x, 0).
template <typename S>
OPF_HD S BceWithLogits(S x, S y, S w, S pw) {
  const S ax = x < S(0) ? -x : x;
  const S sp = math::log1p(math::exp(-ax)) + (x < S(0) ? -x : S(0));
  return w * ((S(1) - y) * x + (S(1) + (pw - S(1)) * y) * sp);
}

}  // namespace opforge
