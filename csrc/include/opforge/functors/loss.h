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

}  // namespace opforge
