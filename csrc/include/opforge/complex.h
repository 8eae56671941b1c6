// complex64 and complex128 for the functors: one host/device type (no std::complex, which NVRTC
// lacks), laid out as NumPy's complex64 / complex128 ({float re, im} / {double re, im}), with the
// arithmetic and the elementary functions NumPy computes (its division is Smith's algorithm; exp,
// log, sqrt, tanh, sin, cos follow C99 Annex G on infinities and NaN, as the libm NumPy calls).
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

template <typename T>
struct Complex {
  T re;
  T im;

  Complex() = default;
  OPF_HD constexpr Complex(T r, T i = T(0)) : re(r), im(i) {}
  // Between the two widths (complex128 -> complex64 rounds each part).
  template <typename U>
  OPF_HD constexpr explicit Complex(const Complex<U>& z) : re(static_cast<T>(z.re)), im(static_cast<T>(z.im)) {}
};

using complex64 = Complex<float>;
using complex128 = Complex<double>;
static_assert(sizeof(complex64) == 8 && sizeof(complex128) == 16, "complex layout must match NumPy's");

template <typename T>
struct IsComplex<Complex<T>> {
  static constexpr bool value = true;
};

template <typename T>
OPF_HD Complex<T> operator+(Complex<T> a, Complex<T> b) {
  return Complex<T>(a.re + b.re, a.im + b.im);
}
template <typename T>
OPF_HD Complex<T> operator-(Complex<T> a, Complex<T> b) {
  return Complex<T>(a.re - b.re, a.im - b.im);
}
template <typename T>
OPF_HD Complex<T> operator-(Complex<T> a) {
  return Complex<T>(-a.re, -a.im);
}
// NumPy's product: no special handling of infinities.
template <typename T>
OPF_HD Complex<T> operator*(Complex<T> a, Complex<T> b) {
  return Complex<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// Smith's algorithm as in NumPy's loops: the divisor is scaled by its larger part, so |b|^2 never
// overflows or underflows; a zero divisor gives inf/NaN parts as a real division does.
template <typename T>
OPF_HD Complex<T> operator/(Complex<T> a, Complex<T> b) {
  const T br_abs = math::fabs(b.re), bi_abs = math::fabs(b.im);
  if (br_abs >= bi_abs) {
    if (br_abs == T(0) && bi_abs == T(0)) return Complex<T>(a.re / br_abs, a.im / br_abs);
    const T rat = b.im / b.re;
    const T scl = T(1) / (b.re + b.im * rat);
    return Complex<T>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  const T rat = b.re / b.im;
  const T scl = T(1) / (b.im + b.re * rat);
  return Complex<T>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
// NaN parts compare unequal, -0.0 == 0.0.
template <typename T>
OPF_HD bool operator==(Complex<T> a, Complex<T> b) {
  return a.re == b.re && a.im == b.im;
}
template <typename T>
OPF_HD bool operator!=(Complex<T> a, Complex<T> b) {
  return !(a == b);
}

namespace math {

template <typename T>
OPF_HD bool IsInf(T v) {
  return !IsNan(v) && IsNan(v - v);
}
template <typename T>
OPF_HD bool IsFinite(T v) {
  return !IsNan(v - v);
}

template <typename T>
OPF_HD Complex<T> conj(Complex<T> z) {
  return Complex<T>(z.re, -z.im);
}

// |z| without overflow (hypot): inf when a part is infinite, even with a NaN part.
template <typename T>
OPF_HD T abs(Complex<T> z) {
  return hypot(z.re, z.im);
}

// exp(z) = e^re (cos im + i sin im).
template <typename T>
OPF_HD Complex<T> exp(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (IsFinite(x)) {
    if (y == T(0)) return Complex<T>(exp(x), y);
    if (!IsFinite(y)) return Complex<T>(y - y, y - y);  // NaN + i NaN
    const T e = exp(x);
    return Complex<T>(e * cos(y), e * sin(y));
  }
  if (IsNan(x)) return y == T(0) ? Complex<T>(x, y) : Complex<T>(x, x);
  // x = +-inf
  if (x < T(0)) {
    if (!IsFinite(y)) return Complex<T>(T(0), T(0));
    return Complex<T>(T(0) * cos(y), T(0) * sin(y));
  }
  if (y == T(0)) return Complex<T>(x, y);
  if (!IsFinite(y)) return Complex<T>(x, y - y);  // inf + i NaN
  return Complex<T>(x * cos(y), x * sin(y));
}

// log(z) = log|z| + i arg(z); log|z| through log1p near the unit circle, where log(hypot) loses
// its relative accuracy.
template <typename T>
OPF_HD Complex<T> log(Complex<T> z) {
  const T ax = fabs(z.re), ay = fabs(z.im);
  const T big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
  T lr;
  if (big > T(0.5) && big < T(2) && IsFinite(small)) {
    lr = T(0.5) * log1p((big - T(1)) * (big + T(1)) + small * small);
  } else {
    lr = log(hypot(z.re, z.im));
  }
  return Complex<T>(lr, atan2(z.im, z.re));
}

// The principal square root (branch cut on the negative real axis, sign of im kept).
template <typename T>
OPF_HD Complex<T> sqrt(Complex<T> z) {
  const T x = z.re, y = z.im;
  const T inf = T(1) / T(0);
  if (x == T(0) && y == T(0)) return Complex<T>(T(0), y);
  if (IsInf(y)) return Complex<T>(inf, y);
  if (IsNan(x)) return Complex<T>(x, x);
  if (IsInf(x)) {
    if (x > T(0)) return Complex<T>(x, IsNan(y) ? y : copysign(T(0), y));
    return Complex<T>(IsNan(y) ? y : T(0), copysign(inf, y));
  }
  if (IsNan(y)) return Complex<T>(y, y);
  // Scale large values so |x| + |z| cannot overflow.
  const T huge = sizeof(T) == 4 ? T(1e37) : T(1e307);
  const bool scale = fabs(x) > huge || fabs(y) > huge;
  const T sx = scale ? x * T(0.25) : x, sy = scale ? y * T(0.25) : y;
  T t = sqrt((fabs(sx) + hypot(sx, sy)) * T(0.5));
  if (scale) t = t * T(2);
  if (x >= T(0)) return Complex<T>(t, y / (T(2) * t));
  return Complex<T>(fabs(y) / (T(2) * t), copysign(t, y));
}

// tanh(z) by Kahan's formula (as FreeBSD's ctanh): no overflow for large |re|.
template <typename T>
OPF_HD Complex<T> tanh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (!IsFinite(x)) {
    if (IsNan(x)) return Complex<T>(x, y == T(0) ? y : x);
    return Complex<T>(copysign(T(1), x), copysign(T(0), IsFinite(y) ? sin(y) * cos(y) : y));
  }
  if (!IsFinite(y)) {
    if (x == T(0)) return Complex<T>(x, y - y);
    return Complex<T>(y - y, y - y);
  }
  const T limit = sizeof(T) == 4 ? T(9) : T(22);
  if (fabs(x) >= limit) {
    const T e = exp(-fabs(x));
    return Complex<T>(copysign(T(1), x), T(4) * sin(y) * cos(y) * e * e);
  }
  const T t = tan(y);
  const T beta = T(1) + t * t;
  const T s = sinh(x);
  const T rho = sqrt(T(1) + s * s);
  const T denom = T(1) + beta * s * s;
  return Complex<T>(beta * rho * s / denom, t / denom);
}

// sinh(z) and cosh(z), with C99 Annex G's infinities and NaN (as FreeBSD's csinh / ccosh).
template <typename T>
OPF_HD Complex<T> sinh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (IsFinite(x) && IsFinite(y)) {
    if (y == T(0)) return Complex<T>(sinh(x), y);
    return Complex<T>(sinh(x) * cos(y), cosh(x) * sin(y));
  }
  if (x == T(0)) return Complex<T>(x, y - y);  // +-0 + i inf / NaN
  if (y == T(0)) return Complex<T>(x, y);
  if (IsFinite(x)) return Complex<T>(y - y, y - y);
  if (IsInf(x)) {
    if (!IsFinite(y)) return Complex<T>(x, y - y);
    return Complex<T>(x * cos(y), (T(1) / T(0)) * sin(y));
  }
  return Complex<T>((x * x) * (y - y), (x + x) * (y - y));
}

template <typename T>
OPF_HD Complex<T> cosh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (IsFinite(x) && IsFinite(y)) {
    if (y == T(0)) return Complex<T>(cosh(x), x * y);
    return Complex<T>(cosh(x) * cos(y), sinh(x) * sin(y));
  }
  if (x == T(0)) return Complex<T>(y - y, x * copysign(T(0), y));
  if (y == T(0)) return Complex<T>(x * x, IsInf(x) ? copysign(T(0), x) * y : copysign(T(0), (x + x) * y));
  if (IsFinite(x)) return Complex<T>(y - y, x * (y - y));
  if (IsInf(x)) {
    if (!IsFinite(y)) return Complex<T>(x * x, x * (y - y));
    return Complex<T>((x * x) * cos(y), x * sin(y));
  }
  return Complex<T>((x * x) * (y - y), (x + x) * (y - y));
}

// sin(z) = -i sinh(iz), cos(z) = cosh(iz).
template <typename T>
OPF_HD Complex<T> sin(Complex<T> z) {
  // re inf or NaN with im +-inf: NaN + i inf (+inf, as glibc and so NumPy; C99 leaves the sign open)
  if (!IsFinite(z.re) && IsInf(z.im)) return Complex<T>(z.re - z.re, T(1) / T(0));
  const Complex<T> h = sinh(Complex<T>(-z.im, z.re));
  return Complex<T>(h.im, -h.re);
}

template <typename T>
OPF_HD Complex<T> cos(Complex<T> z) {
  return cosh(Complex<T>(-z.im, z.re));
}

}  // namespace math
}  // namespace opforge
