// The per-element math of the third batch of elementwise operators, shared by the CPU kernels
// (csrc/kernels/cpu/math_ext.cc) and the CUDA kernels (csrc/kernels/cuda/math_ext.cu):
//   unary     Sinh, Cosh, Tan, Asin, Acos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv,
//             Lgamma, Digamma, Erfinv
//   bitwise   Invert, BitwiseAnd, BitwiseOr, BitwiseXor (integers)
//   binary    SquaredDifference, Xdivy, Xlogy, DivNoNan, LogicalXor
// Functors see values in compute_t<T> (float for the half types; bool tensors as their bytes).
#pragma once

#include "opforge/limits.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {
namespace math {

// The C math functions only these operators use (the shared ones, and the macros, are in opforge/math.h).
OPF_MATH_FN(trunc)

// The float versions the CPU vectorises (opforge/vmath.h, ulps stated there); double and the device: C's.
OPF_VMATH_FN(erfc, Erfc)
OPF_VMATH_FN(asin, Asin)
OPF_VMATH_FN(acos, Acos)
OPF_VMATH_FN(atan, Atan)
OPF_VMATH_FN(asinh, Asinh)
OPF_VMATH_FN(acosh, Acosh)
OPF_VMATH_FN(atanh, Atanh)

}  // namespace math

// One functor per C math function of one argument (the half types compute in float).
#define OPF_UNARY_MATH_FUNCTOR(NAME, FN) \
  struct NAME {                          \
    template <typename C>                \
    OPF_HD C operator()(C x) const {     \
      return math::FN(x);                \
    }                                    \
  };
OPF_UNARY_MATH_FUNCTOR(SinhOp, sinh)
OPF_UNARY_MATH_FUNCTOR(CoshOp, cosh)
OPF_UNARY_MATH_FUNCTOR(AsinOp, asin)
OPF_UNARY_MATH_FUNCTOR(AcosOp, acos)
OPF_UNARY_MATH_FUNCTOR(AtanOp, atan)
OPF_UNARY_MATH_FUNCTOR(AsinhOp, asinh)
OPF_UNARY_MATH_FUNCTOR(AcoshOp, acosh)
OPF_UNARY_MATH_FUNCTOR(AtanhOp, atanh)
OPF_UNARY_MATH_FUNCTOR(ErfcOp, erfc)
OPF_UNARY_MATH_FUNCTOR(RintOp, rint)
#undef OPF_UNARY_MATH_FUNCTOR

// ln |Gamma(x)| (+inf at the poles 0, -1, -2, ...). The host's lgamma_r leaves the global signgam alone,
// which lgamma writes (a data race between threads).
struct LgammaOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
#if defined(__CUDA_ARCH__)
    return ::lgamma(x);
#else
    int sign = 0;
    return static_cast<C>(::lgamma_r(static_cast<double>(x), &sign));
#endif
  }
};

// psi(x) = d/dx ln Gamma(x), in double: the reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 1/2,
// the recurrence psi(x) = psi(x + 1) - 1 / x up to 6, then the asymptotic series in 1 / x^2 (error below
// 1e-15 from 6). NaN at the poles -1, -2, ..., -inf at +0 and +inf at -0 (SciPy's), +inf at +inf.
struct DigammaOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return static_cast<C>(Psi(static_cast<double>(x)));
  }

  static OPF_HD double Psi(double x) {
    if (math::IsNan(x) || x == -limits::Infinity<double>()) return limits::QuietNaN<double>();
    double shift = 0.0;
    if (x < 0.5) {
      if (x == math::floor(x)) return x == 0.0 ? -1.0 / x : limits::QuietNaN<double>();  // psi(+-0): -1/x
      shift = -3.141592653589793 / math::tan(3.141592653589793 * x);
      x = 1.0 - x;
    }
    for (; x < 6.0; x += 1.0) shift -= 1.0 / x;
    const double r = 1.0 / (x * x);
    const double series =
        r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760))))));
    return shift + math::log(x) - 0.5 / x - series;
  }
};

// The Hurwitz zeta function zeta(s, q) = sum_{k >= 0} (q + k)^-s for an integer s >= 2, in double: the first
// terms summed directly until q + k >= 10 (at least 10 of them), then the Euler-Maclaurin tail with the
// Bernoulli numbers B_2 ... B_24, which is below 1e-16 of the sum from there. A negative q sums its terms
// through the integer power; a pole (q a non-positive integer) gives +inf, q = +inf 0.
OPF_HD double IntPower(double base, int64_t e) {
  double result = 1.0;
  for (; e > 0; e >>= 1, base *= base) {
    if (e & 1) result *= base;
  }
  return result;
}

OPF_HD double HurwitzZeta(int64_t s, double q) {
  if (math::IsNan(q)) return q;
  if (q == limits::Infinity<double>()) return 0.0;  // every term 0 (the tail's a^-s * a would be NaN)
  if (q <= 0.0 && q == math::floor(q)) return limits::Infinity<double>();
  // B_2j / (2j)!, j = 1 .. 12
  constexpr double kBernoulliOverFactorial[12] = {
      1.0 / 12.0,           -1.0 / 720.0,           1.0 / 30240.0,          -1.0 / 1209600.0,
      1.0 / 47900160.0,     -1.0 / 1.8924375803183791606e9, 1.0 / 7.47242496e10, -1.0 / 2.950130727918164224e12,
      1.0 / 1.1646782814350067249e14, -1.0 / 4.5979787224074726105e15, 1.0 / 1.8152105401943546773e17,
      -1.0 / 7.1661652561756670113e18};
  double sum = 0.0, a = q;
  for (int k = 0; k < 10 || a < 10.0; ++k, a += 1.0) sum += 1.0 / IntPower(a, s);
  // the tail from a: a^(1-s) / (s - 1) + a^-s / 2 + sum_j B_2j / (2j)! s (s + 1) ... (s + 2j - 2) a^(-s-2j+1)
  const double a_s = 1.0 / IntPower(a, s);
  sum += a_s * a / static_cast<double>(s - 1) + 0.5 * a_s;
  double rising = static_cast<double>(s), power = a_s / a;  // s (s+1)...(s+2j-2) and a^(-s-2j+1)
  for (int j = 0; j < 12; ++j) {
    const double term = kBernoulliOverFactorial[j] * rising * power;
    sum += term;
    if (math::fabs(term) < 1e-17 * math::fabs(sum)) break;
    rising *= static_cast<double>(s + 2 * j + 1) * static_cast<double>(s + 2 * j + 2);
    power /= a * a;
  }
  return sum;
}

// psi^(n)(x), the n-th derivative of psi = digamma: psi itself for n = 0, else
// (-1)^(n+1) n! zeta(n + 1, x) (+-inf at the poles, x = 0, -1, -2, ...). In double.
OPF_HD double PolygammaAt(int64_t n, double x) {
  if (n == 0) return DigammaOp::Psi(x);
  double factorial = 1.0;
  for (int64_t k = 2; k <= n; ++k) factorial *= static_cast<double>(k);
  return ((n & 1) ? factorial : -factorial) * HurwitzZeta(n + 1, x);
}

// erf^-1(y) for y in [-1, 1] (+-inf at +-1, NaN outside), in double: an initial guess of Giles' single
// precision approximation, then Newton steps (quadratic: each doubles the correct digits) on erf, or for
// |y| > 1/2 on ln erfc(|x|) = ln(1 - |y|), whose right side is exact there (erf near +-1 would cancel) and
// whose left side is nearly linear in the tail (Newton on erfc itself crawls there).
struct ErfinvOp {
  template <typename C>
  OPF_HD C operator()(C y) const {
    return static_cast<C>(Inverse(static_cast<double>(y)));
  }

  static OPF_HD double Inverse(double y) {
    if (!(y >= -1.0 && y <= 1.0)) return limits::QuietNaN<double>();
    if (y == 1.0 || y == -1.0) return y * limits::Infinity<double>();
    double w = -math::log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
      w -= 2.5;
      double p = 2.81022636e-08;
      p = 3.43273939e-07 + p * w;
      p = -3.5233877e-06 + p * w;
      p = -4.39150654e-06 + p * w;
      p = 0.00021858087 + p * w;
      p = -0.00125372503 + p * w;
      p = -0.00417768164 + p * w;
      p = 0.246640727 + p * w;
      x = (1.50140941 + p * w) * y;
    } else {
      w = math::sqrt(w) - 3.0;
      double p = -0.000200214257;
      p = 0.000100950558 + p * w;
      p = 0.00134934322 + p * w;
      p = -0.00367342844 + p * w;
      p = 0.00573950773 + p * w;
      p = -0.0076224613 + p * w;
      p = 0.00943887047 + p * w;
      p = 1.00167406 + p * w;
      x = (2.83297682 + p * w) * y;
    }
    const bool tail = y > 0.5 || y < -0.5;
    const double sign = y < 0.0 ? -1.0 : 1.0, rest = 1.0 - sign * y;  // 1 - |y|, exact for |y| > 1/2
    for (int step = 0; step < 8; ++step) {
      const double slope = 1.1283791670955126 * math::exp(-x * x);  // d erf / dx = 2 / sqrt(pi) e^(-x^2)
      if (slope == 0.0) break;  // |x| beyond ~27: erf is 1 in double, the guess stands
      double delta = (math::erf(x) - y) / slope;
      if (tail) {
        const double upper = math::erfc(sign * x);  // d ln erfc(u) / du = -slope / erfc(u)
        delta = sign * (math::log(rest) - math::log(upper)) * upper / slope;
      }
      x -= delta;
      if (math::fabs(delta) <= 1e-15 * math::fabs(x)) break;
    }
    return x;
  }
};

struct TanOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::tan(x);
  }
  OPF_TRIG_VECTOR_PATH(TanSmall)
};

// Rounds toward zero; integers are returned as they are.
struct TruncOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsFloat<C>::value) {
      return math::trunc(x);
    } else {
      return x;
    }
  }
};

// y = 1 / x (MindSpore's Inv; inf at 0).
struct InvOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return C(1) / x;
  }
};

// ~x, bit by bit (integers).
struct InvertOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

struct BitwiseAndOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};

struct BitwiseOrOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};

struct BitwiseXorOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};

// (x - y)^2; integers wrap as their multiplication does.
struct SquaredDifferenceOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsFloat<C>::value) {
      const C d = a - b;
      return d * d;
    } else {
      const WrapType<C> d = static_cast<WrapType<C>>(a) - static_cast<WrapType<C>>(b);
      return static_cast<C>(d * d);
    }
  }
};

// x / y, and 0 where x = 0 (even for y = 0 or NaN y): MindSpore's Xdivy.
struct XdivyOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a / b;
  }
};

// x * log(y), and 0 where x = 0 (even for y = 0 or NaN y): MindSpore's Xlogy.
struct XlogyOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a * math::log(b);
  }
};

// x / y, and 0 where y = 0: MindSpore's DivNoNan.
struct DivNoNanOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return b == C(0) ? C(0) : a / b;
  }
};

// bool tensors are their bytes: the result is a 0/1 byte.
struct LogicalXorOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return (a != C(0)) != (b != C(0)) ? C(1) : C(0);
  }
};

}  // namespace opforge
