// The per-element updates of ApplyGradientDescent, ApplyMomentum, Adam, ApplyRMSProp,
// ApplyCenteredRMSProp, ApplyAdagrad and AdamWeightDecay, shared by the CPU kernels
// (csrc/kernels/cpu/optimizer.cc) and the CUDA kernels (csrc/kernels/cuda/optimizer.cu). Values are
// in compute_t<T> (float for the half types); the scalar inputs (0-d or [1] tensors of T) are read
// through a pointer by From(), on the host by the CPU and by each thread on the GPU, so both read
// them the same way: T, widened to double, then C.
#pragma once

#include "opforge/half.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {
namespace optimizer {

template <typename T>
OPF_HD double ScalarOf(const T* p) {
  return static_cast<double>(Load(p[0]));
}

}  // namespace optimizer

// var -= alpha * delta
template <typename C>
struct GradientDescentUpdate {
  C alpha;

  template <typename T>
  static OPF_HD GradientDescentUpdate From(const T* alpha) {
    return {static_cast<C>(optimizer::ScalarOf(alpha))};
  }
  OPF_HD C operator()(C var, C delta) const { return var - alpha * delta; }
};

// acc = acc * momentum + gradient * gradient_scale; var -= lr * acc
// (nesterov: var -= lr * (gradient * gradient_scale + momentum * acc)). Returns the new var and
// sets *acc; the var update uses acc before it is stored.
template <typename C>
struct MomentumUpdate {
  C lr, momentum, scale;
  bool nesterov;

  template <typename T>
  static OPF_HD MomentumUpdate From(const T* lr, const T* momentum, double gradient_scale, bool nesterov) {
    return {static_cast<C>(optimizer::ScalarOf(lr)), static_cast<C>(optimizer::ScalarOf(momentum)),
            static_cast<C>(gradient_scale), nesterov};
  }
  OPF_HD C operator()(C var, C* acc, C gradient) const {
    const C g = gradient * scale;
    const C a = *acc * momentum + g;
    *acc = a;
    return var - lr * (nesterov ? g + momentum * a : a);
  }
};

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (g - m) * (1 - beta1);
// v += (g * g - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon)
// (nesterov: var -= lr_t * (m * beta1 + (1 - beta1) * g) / (sqrt(v) + epsilon)).
// Returns the new var and sets *m and *v.
template <typename C>
struct AdamUpdate {
  C lr_t, beta1, one_minus_beta1, one_minus_beta2, epsilon;
  bool nesterov;

  template <typename T>
  static OPF_HD AdamUpdate From(const T* beta1_power, const T* beta2_power, const T* lr, const T* beta1,
                                const T* beta2, const T* epsilon, bool nesterov) {
    const double b1 = optimizer::ScalarOf(beta1), b2 = optimizer::ScalarOf(beta2);
    const double lr_t = optimizer::ScalarOf(lr) * math::sqrt(1.0 - optimizer::ScalarOf(beta2_power)) /
                        (1.0 - optimizer::ScalarOf(beta1_power));
    return {static_cast<C>(lr_t), static_cast<C>(b1), static_cast<C>(1.0 - b1), static_cast<C>(1.0 - b2),
            static_cast<C>(optimizer::ScalarOf(epsilon)), nesterov};
  }
  OPF_HD C operator()(C var, C* m, C* v, C g) const {
    const C m_new = *m + (g - *m) * one_minus_beta1;
    const C v_new = *v + (g * g - *v) * one_minus_beta2;
    const C step = nesterov ? m_new * beta1 + one_minus_beta1 * g : m_new;
    *m = m_new;
    *v = v_new;
    return var - lr_t * step / (math::sqrt(v_new) + epsilon);
  }
};

// ms = ms * decay + (1 - decay) * g * g;  mom = mom * momentum + lr * g / sqrt(ms + epsilon);  var -= mom.
// Returns the new var and sets *ms and *mom.
template <typename C>
struct RMSPropUpdate {
  C lr, decay, momentum, epsilon;

  template <typename T>
  static OPF_HD RMSPropUpdate From(const T* lr, const T* decay, const T* momentum, const T* epsilon) {
    return {static_cast<C>(optimizer::ScalarOf(lr)), static_cast<C>(optimizer::ScalarOf(decay)),
            static_cast<C>(optimizer::ScalarOf(momentum)), static_cast<C>(optimizer::ScalarOf(epsilon))};
  }
  OPF_HD C operator()(C var, C* ms, C* mom, C g) const {
    const C ms_new = *ms * decay + (C(1) - decay) * g * g;
    const C mom_new = *mom * momentum + lr * g / math::sqrt(ms_new + epsilon);
    *ms = ms_new;
    *mom = mom_new;
    return var - mom_new;
  }
};

// Centered: mg = mg * decay + (1 - decay) * g;  ms = ms * decay + (1 - decay) * g * g;
// mom = mom * momentum + lr * g / sqrt(ms - mg * mg + epsilon);  var -= mom.
// Returns the new var and sets *mg, *ms and *mom.
template <typename C>
struct CenteredRMSPropUpdate {
  C lr, decay, momentum, epsilon;

  template <typename T>
  static OPF_HD CenteredRMSPropUpdate From(const T* lr, const T* decay, const T* momentum, const T* epsilon) {
    return {static_cast<C>(optimizer::ScalarOf(lr)), static_cast<C>(optimizer::ScalarOf(decay)),
            static_cast<C>(optimizer::ScalarOf(momentum)), static_cast<C>(optimizer::ScalarOf(epsilon))};
  }
  OPF_HD C operator()(C var, C* mg, C* ms, C* mom, C g) const {
    const C mg_new = *mg * decay + (C(1) - decay) * g;
    const C ms_new = *ms * decay + (C(1) - decay) * g * g;
    const C mom_new = *mom * momentum + lr * g / math::sqrt(ms_new - mg_new * mg_new + epsilon);
    *mg = mg_new;
    *ms = ms_new;
    *mom = mom_new;
    return var - mom_new;
  }
};

// accum += g * g (when update_slots);  var -= lr * g / sqrt(accum). Returns the new var, sets *accum.
template <typename C>
struct AdagradUpdate {
  C lr;
  bool update_slots;

  template <typename T>
  static OPF_HD AdagradUpdate From(const T* lr, bool update_slots) {
    return {static_cast<C>(optimizer::ScalarOf(lr)), update_slots};
  }
  OPF_HD C operator()(C var, C* accum, C g) const {
    const C a = update_slots ? *accum + g * g : *accum;
    *accum = a;
    return var - lr * g / math::sqrt(a);
  }
};

// m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g;
// var -= lr * (m / (sqrt(v) + epsilon) + decay * var)   (no bias correction; decoupled weight decay).
// Returns the new var and sets *m and *v.
template <typename C>
struct AdamWeightDecayUpdate {
  C lr, beta1, beta2, epsilon, decay;

  template <typename T>
  static OPF_HD AdamWeightDecayUpdate From(const T* lr, const T* beta1, const T* beta2, const T* epsilon,
                                           const T* decay) {
    return {static_cast<C>(optimizer::ScalarOf(lr)), static_cast<C>(optimizer::ScalarOf(beta1)),
            static_cast<C>(optimizer::ScalarOf(beta2)), static_cast<C>(optimizer::ScalarOf(epsilon)),
            static_cast<C>(optimizer::ScalarOf(decay))};
  }
  OPF_HD C operator()(C var, C* m, C* v, C g) const {
    const C m_new = beta1 * *m + (C(1) - beta1) * g;
    const C v_new = beta2 * *v + (C(1) - beta2) * g * g;
    *m = m_new;
    *v = v_new;
    return var - lr * (m_new / (math::sqrt(v_new) + epsilon) + decay * var);
  }
};

}  // namespace opforge
