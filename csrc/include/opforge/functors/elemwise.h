// The per-element math of the second batch of elementwise operators, shared by the CPU kernels
// (csrc/kernels/cpu/elemwise.cc, compare.cc) and the CUDA kernels (csrc/kernels/cuda/elemwise.cu):
//   unary     Abs, Erf, Floor, Ceil, Round, Sign, IsNan, IsFinite, LogicalNot
//   activ.    GeLU, Softplus, HSigmoid, HSwish, ReLU6 and their grads
//   binary    Pow, Atan2, Div, FloorDiv, Mod, FloorMod, LogicalAnd, LogicalOr
//   compare   Greater, GreaterEqual, Less, LessEqual, NotEqual
// Functors see values in compute_t<T> (float for the half types; bool tensors as their bytes).
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// ---------------------------------------------------------------------------------------------
// Unary

// |x|; signed integers in unsigned arithmetic, so |INT_MIN| wraps to INT_MIN as in NumPy.
struct AbsOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsFloat<C>::value) {
      return math::fabs(x);
    } else if constexpr (IntLimits<C>::kSigned) {
      return x < C(0) ? static_cast<C>(WrapType<C>(0) - static_cast<WrapType<C>>(x)) : x;
    } else {
      return x;
    }
  }
};

// AbsGrad(x, dy): dx = dy * sign(x), 0 at x = 0 (and NaN for a NaN x).
struct AbsGradOp {
  template <typename C>
  OPF_HD C operator()(C x, C dy) const {
    return x > C(0) ? dy : (x < C(0) ? static_cast<C>(-dy) : (x == C(0) ? C(0) : x));
  }
};

// float: 4 ulp on the CPU (opforge/vmath.h), vectorised; CUDA's erff on the device.
struct ErfOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::erf(x);
  }
};

struct FloorOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::floor(x);
  }
};

struct CeilOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::ceil(x);
  }
};

// Round half to even (np.round / rint); integers are returned as they are.
struct RoundOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsFloat<C>::value) {
      return math::rint(x);
    } else {
      return x;
    }
  }
};

// -1, 0 or 1 by the sign of x; NaN stays NaN and -0.0 gives 0 (np.sign).
struct SignOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return x > C(0) ? C(1) : (x < C(0) ? C(-1) : (x == C(0) ? C(0) : x));
  }
};

// Predicates (bool outputs).
struct IsNanOp {
  template <typename C>
  OPF_HD bool operator()(C x) const {
    return math::IsNan(x);
  }
};

// Neither NaN nor infinite: x - x is 0 exactly for finite x (NaN otherwise); integers are finite.
struct IsFiniteOp {
  template <typename C>
  OPF_HD bool operator()(C x) const {
    if constexpr (IsFloat<C>::value) {
      const C d = x - x;
      return d == d;
    } else {
      return true;
    }
  }
};

// bool tensors are their bytes: the result is a 0/1 byte.
struct LogicalNotOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return x ? C(0) : C(1);
  }
};

// ---------------------------------------------------------------------------------------------
// Activations (floating point) and their grads

// MindSpore's GeLU, the tanh approximation (float on the CPU: tanh within 3 ulp, vectorised):
//   y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
struct GeLUOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C k = C(0.7978845608028654);  // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + math::tanh(k * (x + C(0.044715) * x * x * x)));
  }
};

// GeLUGrad(dy, x, y): dx = dy (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2 / pi) (1 + 3 * 0.044715 x^2)),
// t = tanh(sqrt(2 / pi) (x + 0.044715 x^3)); y (GeLU's output) is not needed.
struct GeLUGradOp {
  template <typename C>
  OPF_HD C operator()(C dy, C x, C) const {
    const C k = C(0.7978845608028654);
    const C t = math::tanh(k * (x + C(0.044715) * x * x * x));
    const C du = k * (C(1) + C(3 * 0.044715) * x * x);
    return dy * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * du);
  }
};

// y = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): nothing overflows, no branch (the CPU loop
// vectorises; float within 3 ulp there). NaN: log1p(e^NaN) is NaN.
struct SoftplusOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    const C neg_abs = x > C(0) ? -x : x;
    return (x > C(0) ? x : C(0)) + math::log1p(math::exp(neg_abs));
  }
};

// SoftplusGrad(dy, x): dx = dy * sigmoid(x).
struct SoftplusGradOp {
  template <typename C>
  OPF_HD C operator()(C dy, C x) const {
    return dy / (C(1) + math::exp(-x));
  }
};

// relu6(x + 3) / 6 = min(max((x + 3) / 6, 0), 1); NaN propagates.
template <typename C>
OPF_HD C HardSigmoid(C x) {
  const C v = (x + C(3)) / C(6);
  return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
}

struct HSigmoidOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return HardSigmoid(x);
  }
};

// HSigmoidGrad(dy, x): dx = dy / 6 for -3 < x < 3, else 0.
struct HSigmoidGradOp {
  template <typename C>
  OPF_HD C operator()(C dy, C x) const {
    return (x > C(-3) && x < C(3)) ? dy / C(6) : C(0);
  }
};

// y = min(max(x, 0), 6); NaN propagates.
struct ReLU6Op {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  }
};

// ReLU6Grad(dy, x): dx = dy for 0 < x < 6, else 0 (MindSpore's: the kinks take no gradient).
struct ReLU6GradOp {
  template <typename C>
  OPF_HD C operator()(C dy, C x) const {
    return (x > C(0) && x < C(6)) ? dy : C(0);
  }
};

// y = x * relu6(x + 3) / 6.
struct HSwishOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return x * HardSigmoid(x);
  }
};

// HSwishGrad(dy, x): dx = 0 for x <= -3, dy for x >= 3, else dy (2x + 3) / 6.
struct HSwishGradOp {
  template <typename C>
  OPF_HD C operator()(C dy, C x) const {
    return x <= C(-3) ? C(0) : (x >= C(3) ? dy : dy * (C(2) * x + C(3)) / C(6));
  }
};

// ---------------------------------------------------------------------------------------------
// Binary arithmetic

// x ** y. Floats: C's pow. Integers: exact by squaring, wrapping modulo 2^bits like NumPy; a negative
// exponent gives the truncated real power (1 for x = 1, +-1 for x = -1, else 0) where NumPy raises.
struct PowOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsFloat<C>::value) {
      return math::pow(a, b);
    } else {
      using W = WrapType<C>;
      if constexpr (IntLimits<C>::kSigned) {
        if (b < C(0)) {
          if (a == C(1)) return C(1);
          if (a == C(-1)) return (b & C(1)) ? C(-1) : C(1);
          return C(0);
        }
      }
      W result = 1, base = static_cast<W>(a);
      for (C e = b; e != C(0); e = static_cast<C>(e >> 1)) {
        if (e & C(1)) result = static_cast<W>(result * base);
        base = static_cast<W>(base * base);
      }
      return static_cast<C>(result);
    }
  }
  OPF_TWO_PASS_VECTOR_PATH(PowExponent, PowFromExponent, PowVectorDomain)
};

// atan2(x, y): the angle of the point (y, x), MindSpore's Atan2(x, y) = np.arctan2(x, y).
struct Atan2Op {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return math::atan2(a, b);
  }
};

// An integer divided by 0, MindSpore's CPU rule: 0 / 0 = 0, else the type's max for x > 0 and its
// min for x < 0 (what +-inf saturates to).
template <typename C>
OPF_HD C IntDivByZero(C a) {
  return a == C(0) ? C(0) : (a > C(0) ? IntLimits<C>::Max() : IntLimits<C>::Min());
}

// x / y. Floats: IEEE division. Integers: truncated toward zero (C, MindSpore's CPU Div); x / 0 by
// IntDivByZero; INT_MIN / -1 wraps to INT_MIN.
struct DivideOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (!IsIntegral<C>::value) {
      return a / b;
    } else {
      if (b == C(0)) return IntDivByZero(a);
      if constexpr (IntLimits<C>::kSigned) {
        if (b == C(-1)) return static_cast<C>(WrapType<C>(0) - static_cast<WrapType<C>>(a));
      }
      return static_cast<C>(a / b);
    }
  }
};

// floor(x / y). Floats: floor of the quotient in double (MindSpore; +-inf or NaN for y = 0). Integers:
// rounded toward -inf, x / 0 by IntDivByZero, INT_MIN // -1 wraps to INT_MIN (NumPy).
struct FloorDivOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsFloat<C>::value) {
      // The quotient in double, as MindSpore's CPU kernel: a float quotient can round up to an
      // integer (2.5f / 1e-3f == 2500.0f) where the exact one is below it.
      return static_cast<C>(math::floor(static_cast<double>(a) / static_cast<double>(b)));
    } else {
      if (b == C(0)) return IntDivByZero(a);
      if constexpr (IntLimits<C>::kSigned) {
        if (b == C(-1)) return static_cast<C>(WrapType<C>(0) - static_cast<WrapType<C>>(a));
        const C q = static_cast<C>(a / b);
        return (a % b != C(0) && ((a < C(0)) != (b < C(0)))) ? static_cast<C>(q - C(1)) : q;
      } else {
        return static_cast<C>(a / b);
      }
    }
  }
};

// The truncated remainder, with the sign of x (C's fmod, np.fmod; MindSpore's Mod). Floats: NaN for
// y = 0. Integers: x mod 0 = 0 (NumPy) and INT_MIN mod -1 = 0.
struct ModOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsFloat<C>::value) {
      return math::fmod(a, b);
    } else {
      if (b == C(0)) return C(0);
      if constexpr (IntLimits<C>::kSigned) {
        if (b == C(-1)) return C(0);
      }
      return static_cast<C>(a % b);
    }
  }
};

// The floored remainder, with the sign of y (Python's %, np.mod; MindSpore's FloorMod). Floats: NaN
// for y = 0, a zero result takes y's sign. Integers: x mod 0 = 0 (NumPy).
struct FloorModOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsFloat<C>::value) {
      C r = math::fmod(a, b);
      if (r != C(0)) {
        if ((r < C(0)) != (b < C(0))) r += b;
      } else {
        r = b < C(0) ? C(-0.0) : C(0);
        if (b != b) r = b;  // NaN divisor
      }
      return r;
    } else {
      if (b == C(0)) return C(0);
      if constexpr (IntLimits<C>::kSigned) {
        if (b == C(-1)) return C(0);
        const C r = static_cast<C>(a % b);
        return (r != C(0) && ((r < C(0)) != (b < C(0)))) ? static_cast<C>(r + b) : r;
      } else {
        return static_cast<C>(a % b);
      }
    }
  }
};

// bool tensors as bytes: 0/1 results.
struct LogicalAndOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return (a && b) ? C(1) : C(0);
  }
};

struct LogicalOrOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return (a || b) ? C(1) : C(0);
  }
};

// ---------------------------------------------------------------------------------------------
// Comparisons (bool outputs; NaN compares false except in NotEqual, as in NumPy)

struct GreaterOp {
  template <typename C>
  OPF_HD bool operator()(C a, C b) const {
    return a > b;
  }
};

struct GreaterEqualOp {
  template <typename C>
  OPF_HD bool operator()(C a, C b) const {
    return a >= b;
  }
};

struct LessOp {
  template <typename C>
  OPF_HD bool operator()(C a, C b) const {
    return a < b;
  }
};

struct LessEqualOp {
  template <typename C>
  OPF_HD bool operator()(C a, C b) const {
    return a <= b;
  }
};

struct NotEqualOp {
  template <typename C>
  OPF_HD bool operator()(C a, C b) const {
    return a != b;
  }
};

}  // namespace opforge
