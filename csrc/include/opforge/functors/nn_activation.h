// The per-element math of the activations of MindSpore's nn list that opforge adds on top of
// activation.h / elemwise.h: SeLU, CeLU, Softsign, HShrink, SoftShrink, Mish. Shared by the CPU
// kernels (csrc/kernels/cpu/nn_activation.cc) and the CUDA kernels (csrc/kernels/cuda/nn_activation.cu).
// Functors see values in compute_t<T> (float for the half types); attrs are fields. NaN propagates.
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// y = scale * (x if x > 0 else alpha * (exp(x) - 1)), the self-normalising constants of Klambauer et al.
struct SeLUOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C alpha = C(1.6732632423543772848170429916717);
    const C scale = C(1.0507009873554804934193349852946);
    return math::Select(x > C(0), scale * x, scale * alpha * math::expm1(x));  // selected: vectorises
  }
};

// y = x if x > 0 else alpha * (exp(x / alpha) - 1) (alpha != 0).
struct CeLUOp {
  double alpha = 1.0;
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return math::Select(x > C(0), x, a * math::expm1(x / a));
  }
};

// y = x / (1 + |x|).
struct SoftsignOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return x / (C(1) + (x < C(0) ? -x : x));
  }
};

// y = x where |x| > lambd, else 0.
struct HShrinkOp {
  double lambd = 0.5;
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C l = static_cast<C>(lambd);
    return (x > l || x < -l) ? x : (x == x ? C(0) : x);
  }
};

// y = x - lambd for x > lambd, x + lambd for x < -lambd, else 0.
struct SoftShrinkOp {
  double lambd = 0.5;
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C l = static_cast<C>(lambd);
    return x > l ? x - l : (x < -l ? x + l : (x == x ? C(0) : x));
  }
};

// y = x * tanh(softplus(x)) = x * n / (n + 2), n = e^x (e^x + 2) (tanh(log(1 + e)) = ((1 + e)^2 - 1) /
// ((1 + e)^2 + 1)): one exp, no branch. Beyond x = 20 the ratio is 1 in double too, so x is clamped
// there (no overflow). Float on the CPU: 5 ulp for x >= -87 (below, e^x is denormal).
struct MishOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C e = math::exp(math::Select(x > C(20), C(20), x));
    const C n = e * (e + C(2));
    return x * (n / (n + C(2)));
  }
};

}  // namespace opforge
