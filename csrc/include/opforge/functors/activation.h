// The per-element math of the activations and their grads, shared by the CPU kernels
// (csrc/kernels/cpu/activation.cc) and the CUDA kernels (csrc/kernels/cuda/activation.cu).
// Functors see values in compute_t<T> (float for the half types); attrs are fields.
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// y = max(x, 0), written so NaN propagates (NaN < 0 is false) as in NumPy.
struct ReluOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return x < C(0) ? C(0) : x;
  }
};

// y = x if x > 0 else alpha * (exp(x) - 1). Both arms computed and selected: the CPU loop
// vectorises (float: expm1 within 2 ulp, opforge/vmath.h).
struct EluOp {
  double alpha = 1.0;
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::Select(x > C(0), x, static_cast<C>(alpha) * math::expm1(x));
  }
};

// y = 1 / (1 + exp(-x)), reaching the denormals for x < 0 (math::sigmoid; float: 3 ulp on the CPU,
// vectorised, opforge/vmath.h).
struct SigmoidOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::sigmoid(x);
  }
};

// float: 3 ulp on the CPU (opforge/vmath.h), vectorised; CUDA's tanhf on the device.
struct TanhOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::tanh(x);
  }
};

// y = -x; integers in unsigned arithmetic, so the minimum wraps to itself as in NumPy.
struct NegOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsIntegral<C>::value) {
      return static_cast<C>(WrapType<C>(0) - static_cast<WrapType<C>>(x));
    } else {
      return -x;
    }
  }
};

// float: 1 ulp on the CPU (opforge/vmath.h), vectorised; CUDA's expf on the device.
struct ExpOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::exp(x);
  }
};

// float: 1 ulp on the CPU (opforge/vmath.h), vectorised; CUDA's logf on the device.
struct LogOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::log(x);
  }
};

// Grad functors take (dy, y) with y the forward output, as MindSpore's grad primitives do.
// ReluGrad: dx = dy where y > 0, else 0.
struct ReluGradOp {
  template <typename C>
  OPF_HD C operator()(C dy, C y) const {
    return y > C(0) ? dy : C(0);
  }
};

// EluGrad(dy, y): dx = dy where y > 0, else dy * (y + alpha), since y = alpha * (exp(x) - 1).
struct EluGradOp {
  double alpha = 1.0;
  template <typename C>
  OPF_HD C operator()(C dy, C y) const {
    return y > C(0) ? dy : dy * (y + static_cast<C>(alpha));
  }
};

// SigmoidGrad(y, dy): dx = dy * y * (1 - y).
struct SigmoidGradOp {
  template <typename C>
  OPF_HD C operator()(C y, C dy) const {
    return dy * y * (C(1) - y);
  }
};

// TanhGrad(y, dy): dx = dy * (1 - y^2).
struct TanhGradOp {
  template <typename C>
  OPF_HD C operator()(C y, C dy) const {
    return dy * (C(1) - y * y);
  }
};

}  // namespace opforge
