// Elementary functions for the functors: one name for the host (<cmath>) and the device (CUDA's
// math library, built into NVRTC), for float and double; integers compare and test as themselves.
#pragma once

#include "opforge/portable.h"
#include "opforge/vmath.h"

#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

namespace opforge {
namespace math {

// OPF_MATH_FN and OPF_VMATH_FN stay defined: functors/math_ext.h declares its functions with them.
#if defined(__CUDA_ARCH__)
#define OPF_MATH_FN(NAME)                                  \
  OPF_HD float NAME(float x) { return ::NAME##f(x); }      \
  OPF_HD double NAME(double x) { return ::NAME(x); }
#else
#define OPF_MATH_FN(NAME)                                  \
  OPF_HD float NAME(float x) { return std::NAME(x); }      \
  OPF_HD double NAME(double x) { return std::NAME(x); }
#endif

// The transcendental float functions the CPU vectorises: on the host, float goes to the branch-free
// versions of opforge/vmath.h (accuracy in ulps stated there); double and the device keep C's / CUDA's.
#if defined(__CUDA_ARCH__)
#define OPF_VMATH_FN(NAME, VNAME) OPF_MATH_FN(NAME)
#else
#define OPF_VMATH_FN(NAME, VNAME)                           \
  OPF_HD float NAME(float x) { return vmath::VNAME(x); }   \
  OPF_HD double NAME(double x) { return std::NAME(x); }
#endif

OPF_VMATH_FN(exp, Exp)
OPF_VMATH_FN(expm1, Expm1)
OPF_VMATH_FN(log, Log)
OPF_VMATH_FN(log1p, Log1p)
OPF_VMATH_FN(tanh, Tanh)
OPF_VMATH_FN(erf, Erf)
OPF_VMATH_FN(sinh, Sinh)
OPF_VMATH_FN(cosh, Cosh)
OPF_MATH_FN(sqrt)
OPF_MATH_FN(fabs)

// sin, cos, tan: on the host a float within vmath's reduction range takes the branch-free version,
// beyond it (|x| > 6000, inf, NaN) C's. The branch keeps a loop around it scalar: the CPU's elementwise
// loop takes the vector path block by block instead (SinOp::Vector, kernels/cpu/elementwise.h).
#if defined(__CUDA_ARCH__)
#define OPF_TRIG_FN(NAME, VNAME) OPF_MATH_FN(NAME)
#else
#define OPF_TRIG_FN(NAME, VNAME)                                                                     \
  OPF_HD float NAME(float x) { return vmath::TrigInVectorRange(x) ? vmath::VNAME(x) : std::NAME(x); } \
  OPF_HD double NAME(double x) { return std::NAME(x); }
#endif
// In a functor: the branch-free float path and where it holds, for the CPU's elementwise loop.
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
#define OPF_TRIG_VECTOR_PATH(VNAME)                                     \
  static float Vector(float x) { return vmath::VNAME(x); }             \
  static bool VectorDomain(float x) { return vmath::TrigInVectorRange(x); }
#else
#define OPF_TRIG_VECTOR_PATH(VNAME)
#endif
OPF_TRIG_FN(sin, SinSmall)
OPF_TRIG_FN(cos, CosSmall)
OPF_TRIG_FN(tan, TanSmall)
#undef OPF_TRIG_FN
OPF_MATH_FN(floor)
OPF_MATH_FN(ceil)
OPF_MATH_FN(rint)

// Two-argument functions: atan2(y, x), pow(x, y), fmod(x, y) (C's, so NumPy's arctan2, power, fmod).
#if defined(__CUDA_ARCH__)
#define OPF_MATH_FN2(NAME)                                              \
  OPF_HD float NAME(float a, float b) { return ::NAME##f(a, b); }       \
  OPF_HD double NAME(double a, double b) { return ::NAME(a, b); }
#else
#define OPF_MATH_FN2(NAME)                                              \
  OPF_HD float NAME(float a, float b) { return std::NAME(a, b); }       \
  OPF_HD double NAME(double a, double b) { return std::NAME(a, b); }
#endif
OPF_MATH_FN2(fmod)
OPF_MATH_FN2(hypot)
OPF_MATH_FN2(copysign)
#undef OPF_MATH_FN2

// pow: float on the host in vmath (double inside, C's special cases); double and the device: C's / CUDA's.
// atan2 likewise (vmath::Atan2). PowOp also names vmath's two passes for the CPU's loops
// (OPF_TWO_PASS_VECTOR_PATH, kernels/cpu/elementwise.h).
#if defined(__CUDA_ARCH__)
OPF_HD float pow(float a, float b) { return ::powf(a, b); }
OPF_HD double pow(double a, double b) { return ::pow(a, b); }
OPF_HD float atan2(float a, float b) { return ::atan2f(a, b); }
OPF_HD double atan2(double a, double b) { return ::atan2(a, b); }
#else
OPF_HD float pow(float a, float b) { return vmath::Pow(a, b); }
OPF_HD double pow(double a, double b) { return std::pow(a, b); }
OPF_HD float atan2(float a, float b) { return vmath::Atan2(a, b); }
OPF_HD double atan2(double a, double b) { return std::atan2(a, b); }
#endif
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
#define OPF_TWO_PASS_VECTOR_PATH(FIRST, SECOND, DOMAIN)                                          \
  static double VectorFirst(float a, float b) { return vmath::FIRST(a, b); }                     \
  static float VectorSecond(double t, float a, float b) { return vmath::SECOND(t, a, b); }       \
  static bool VectorDomain(float a, float b) { return vmath::DOMAIN(a, b); }
#else
#define OPF_TWO_PASS_VECTOR_PATH(FIRST, SECOND, DOMAIN)
#endif

// c ? a : b with both arms already computed. On the host a float or a double goes through bit masks so
// that the loop around it vectorises and no branch mispredicts (GCC keeps a ?: with floating-point arms
// as a branch); elsewhere ?:.
template <typename C>
OPF_HD C Select(bool c, C a, C b) {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
  if constexpr (sizeof(C) == 4 && IsFloat<C>::value) return vmath::Select(c, a, b);
  if constexpr (sizeof(C) == 8 && IsFloat<C>::value) return vmath::SelectD(c, a, b);
#endif
  return c ? a : b;
}

// sigmoid x = 1 / (1 + e^-x). On the host a float takes vmath::Sigmoid (3 ulp, vectorised); double and
// the device take e / (1 + e) with e = exp(-|x|) for x < 0, so that results reach the denormals instead of
// 1 / inf = 0.
template <typename C>
OPF_HD C SigmoidByExp(C x) {
  const C e = exp(x < C(0) ? x : -x);
  const C s = C(1) / (C(1) + e);
  return Select(x < C(0), e * s, s);
}
#if defined(__CUDA_ARCH__)
OPF_HD float sigmoid(float x) { return SigmoidByExp(x); }
#else
OPF_HD float sigmoid(float x) { return vmath::Sigmoid(x); }
#endif
OPF_HD double sigmoid(double x) { return SigmoidByExp(x); }

// True only for NaN. The host asks std::isnan: GCC vectorises a loop around it (a float widened to
// double and tested as x != x was not); the device tests x != x (-ffast-math is not used).
template <typename C>
OPF_HD bool IsNan(C v) {
  if constexpr (IsFloat<C>::value) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
    return v != v;
#else
    return std::isnan(v);
#endif
  } else {
    return false;
  }
}

}  // namespace math
}  // namespace opforge

// The complex overloads of exp, log, sqrt, ... (complex64, complex128).
#include "opforge/complex.h"
