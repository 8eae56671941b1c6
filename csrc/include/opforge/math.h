// Elementary functions for the functors: one name for the host (<cmath>) and the device (CUDA's
// math library, built into NVRTC), for float and double; integers compare and test as themselves.
#pragma once

#include "opforge/portable.h"

#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

namespace opforge {
namespace math {

#if defined(__CUDA_ARCH__)
#define OPF_MATH_FN(NAME)                                  \
  OPF_HD float NAME(float x) { return ::NAME##f(x); }      \
  OPF_HD double NAME(double x) { return ::NAME(x); }
#else
#define OPF_MATH_FN(NAME)                                  \
  OPF_HD float NAME(float x) { return std::NAME(x); }      \
  OPF_HD double NAME(double x) { return std::NAME(x); }
#endif

OPF_MATH_FN(exp)
OPF_MATH_FN(expm1)
OPF_MATH_FN(log)
OPF_MATH_FN(log1p)
OPF_MATH_FN(tanh)
OPF_MATH_FN(tan)
OPF_MATH_FN(sinh)
OPF_MATH_FN(cosh)
OPF_MATH_FN(sqrt)
OPF_MATH_FN(fabs)
OPF_MATH_FN(sin)
OPF_MATH_FN(cos)
OPF_MATH_FN(floor)
OPF_MATH_FN(ceil)
OPF_MATH_FN(rint)
OPF_MATH_FN(erf)
#undef OPF_MATH_FN

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
OPF_MATH_FN2(atan2)
OPF_MATH_FN2(pow)
OPF_MATH_FN2(fmod)
OPF_MATH_FN2(hypot)
OPF_MATH_FN2(copysign)
#undef OPF_MATH_FN2

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
