// The per-element math of Cast (x.astype(dtype), NumPy's rules), shared by the CPU kernels
// (csrc/kernels/cpu/cast.cc) and the CUDA kernels (csrc/kernels/cuda/cast.cu). The types are bool,
// the (u)int8..64, float16, bfloat16, float, double, complex64 and complex128; a bool is stored as a byte.
#pragma once

#include "opforge/half.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {
namespace cast {

// bool tensors are read and written as bytes: a byte other than 0/1 in a C++ bool is UB.
template <typename T>
using Storage = conditional_t<IsSame<T, bool>::value, uint8_t, T>;

template <typename T>
struct IsHalf {
  static constexpr bool value = IsSame<T, float16>::value || IsSame<T, bfloat16>::value;
};

// An integer type other than bool.
template <typename T>
struct IsInt {
  static constexpr bool value = !IsSame<T, bool>::value && !IsHalf<T>::value && !IsFloat<T>::value;
};

// The source value in a type C++ converts from: bool, an integer, float or double.
template <typename S>
OPF_HD auto Widen(Storage<S> v) {
  if constexpr (IsSame<S, bool>::value) {
    return v != 0;
  } else if constexpr (IsHalf<S>::value) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// 2^k as a double, for 0 <= k <= 64 (exact).
OPF_HD constexpr double PowerOfTwo(int k) {
  return k == 64 ? 2.0 * static_cast<double>(uint64_t(1) << 63) : static_cast<double>(uint64_t(1) << k);
}

// float -> int truncates toward zero; NaN gives 0 and values out of range saturate, where a
// plain C++ cast would be undefined.
template <typename I>
OPF_HD I FloatToInt(double f) {
  using Lim = IntLimits<I>;
  if constexpr (Lim::kDigits < 53) {
    // The limits are exact in double, so clamping first is exact too. Written as min/max selects
    // (std::max / std::min's own form) and a conversion through a 32- or 64-bit int, so that GCC
    // vectorises the CPU loop (no branches).
    using Wide = conditional_t<(Lim::kDigits < 32), int32_t, int64_t>;
    constexpr double lo = static_cast<double>(Lim::Min()), hi = static_cast<double>(Lim::Max());
    const double at_least_lo = f < lo ? lo : f;
    const double clamped = hi < at_least_lo ? hi : at_least_lo;
    const double c = math::IsNan(f) ? 0.0 : clamped;
    return static_cast<I>(static_cast<Wide>(c));
  } else {
    // 64-bit: the max is not a double, so test against 2^digits, the first value too large.
    constexpr double hi = PowerOfTwo(Lim::kDigits);
    constexpr double lo = Lim::kSigned ? -hi : 0.0;  // exact; [lo - 1, lo) still truncates into range
    if (f > lo - 1.0 && f < hi) return static_cast<I>(f);
    if (math::IsNan(f)) return I(0);
    return f > 0 ? Lim::Max() : Lim::Min();
  }
}

// v as a float; from double as the CPU converts it (subnormals and NaN payloads kept on the GPU too).
template <typename V>
OPF_HD float ToFloat(V v) {
  if constexpr (IsSame<V, double>::value) {
    return half_bits::NarrowToFloat(v);
  } else {
    return static_cast<float>(v);
  }
}

// v (a Widen()ed source value) as a D, stored.
template <typename D, typename V>
OPF_HD Storage<D> Convert(V v) {
  if constexpr (IsComplex<D>::value) {
    using R = decltype(D{}.re);
    if constexpr (IsComplex<V>::value) {
      return D(Convert<R>(v.re), Convert<R>(v.im));
    } else {
      return D(Convert<R>(v), R(0));  // real -> complex: a zero imaginary part
    }
  } else if constexpr (IsComplex<V>::value) {
    if constexpr (IsSame<D, bool>::value) {
      return static_cast<uint8_t>(v.re != 0 || v.im != 0);  // nonzero, as NumPy
    } else {
      return Convert<D>(v.re);  // complex -> real: the real part, as NumPy
    }
  } else if constexpr (IsSame<D, bool>::value) {
    return static_cast<uint8_t>(v != V(0));  // NaN != 0, so NaN -> True as in NumPy
  } else if constexpr (IsSame<D, float16>::value && IsSame<V, double>::value) {
    float16 h;
    h.bits = float16::FromDouble(v);  // one rounding, as NumPy
    return h;
  } else if constexpr (IsHalf<D>::value) {
    return D(ToFloat(v));  // bfloat16 from double goes through float, as in ml_dtypes
  } else if constexpr (IsSame<D, float>::value) {
    return ToFloat(v);
  } else if constexpr (IsInt<D>::value && IsFloat<V>::value) {
    return FloatToInt<D>(static_cast<double>(v));
  } else {
    return static_cast<D>(v);  // int -> int wraps modulo 2^bits, as in NumPy
  }
}

}  // namespace cast

// One element of Cast from S to D (bool as itself: its storage is a byte).
template <typename S, typename D>
struct CastOp {
  OPF_HD cast::Storage<D> operator()(cast::Storage<S> x) const { return cast::Convert<D>(cast::Widen<S>(x)); }
};

}  // namespace opforge
