// The per-element math of Add, Sub, Mul, RealDiv, Square, Sqrt, SqrtGrad, Maximum, Minimum and
// Equal (NumPy semantics), shared by the CPU kernels and the CUDA kernels.
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// Integers wrap modulo 2^bits (see WrapType).
struct AddOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsIntegral<C>::value) {
      return static_cast<C>(static_cast<WrapType<C>>(a) + static_cast<WrapType<C>>(b));
    } else {
      return a + b;
    }
  }
};

struct SubOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsIntegral<C>::value) {
      return static_cast<C>(static_cast<WrapType<C>>(a) - static_cast<WrapType<C>>(b));
    } else {
      return a - b;
    }
  }
};

struct MulOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsIntegral<C>::value) {
      return static_cast<C>(static_cast<WrapType<C>>(a) * static_cast<WrapType<C>>(b));
    } else {
      return a * b;
    }
  }
};

// Floating point and complex only: RealDiv is not registered for integers.
struct DivOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    static_assert(!IsIntegral<C>::value, "DivOp is for floating point and complex types");
    return a / b;
  }
};

// y = x * x; integers wrap.
struct SquareOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsIntegral<C>::value) {
      const WrapType<C> u = static_cast<WrapType<C>>(x);
      return static_cast<C>(u * u);
    } else {
      return x * x;
    }
  }
};

// y = sqrt(x): NaN for x < 0, as in NumPy.
struct SqrtOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::sqrt(x);
  }
};

// SqrtGrad(y, dy) = dy / (2 y), y being Sqrt's output.
struct SqrtGradOp {
  template <typename C>
  OPF_HD C operator()(C y, C dy) const {
    return dy / (C(2) * y);
  }
};

// The transcendental unary ops (floating point). Sin, Cos: y = sin(x), cos(x).
struct SinOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::sin(x);
  }
  OPF_TRIG_VECTOR_PATH(SinSmall)
};

struct CosOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::cos(x);
  }
  OPF_TRIG_VECTOR_PATH(CosSmall)
};

// y = log(1 + x), accurate near 0.
struct Log1pOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::log1p(x);
  }
};

// y = exp(x) - 1, accurate near 0.
struct Expm1Op {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::expm1(x);
  }
};

// y = 1 / x (inf at 0, as in NumPy).
struct ReciprocalOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return C(1) / x;
  }
};

// y = 1 / sqrt(x) (NaN for x < 0, inf at 0).
struct RsqrtOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return C(1) / math::sqrt(x);
  }
};

// NumPy's rule for maximum and minimum: a NaN in either operand is the result; otherwise x wins
// ties (so max(-0.0, 0.0) is -0.0).
template <bool kMax, typename C>
OPF_HD bool PicksX(C x, C y) {
  return (kMax ? x >= y : x <= y) || math::IsNan(x);
}

struct MaximumOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return PicksX<true>(a, b) ? a : b;
  }
};

struct MinimumOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return PicksX<false>(a, b) ? a : b;
  }
};

// y = conj(x) = re - i im; real types are their own conjugate.
struct ConjOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsComplex<C>::value) {
      return math::conj(x);
    } else {
      return x;
    }
  }
};

// |z| of a complex z as its real type (Abs of complex64 is float32): hypot(re, im).
struct ComplexAbsOp {
  template <typename C>
  OPF_HD auto operator()(C z) const {
    return math::abs(z);
  }
};

// a == b: NaN equals nothing, -0.0 == 0.0.
struct EqualOp {
  template <typename C>
  OPF_HD bool operator()(C a, C b) const {
    return a == b;
  }
};

}  // namespace opforge
