// float16 (IEEE binary16) and bfloat16 (the top half of a float32) as 16-bit storage types:
// kernels load them as float, compute, and store them back rounded to nearest even.
// Host and device: the device converts with the hardware's cvt instructions (sm_80 and later).
#pragma once

#include "opforge/portable.h"

#if !defined(__CUDACC_RTC__)
#include <cstring>
#endif

namespace opforge {
namespace half_bits {

OPF_HD uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  return x;
#endif
}

OPF_HD float BitsFloat(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(x);
#else
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
#endif
}

// double -> float as the CPU does it. On the GPU, a plain conversion would flush a subnormal result
// to zero (CuPy compiles every module with -ftz=true) and make every NaN the canonical one; the
// CPU (x86 cvtsd2ss) keeps subnormals, and a NaN's sign and top payload bits.
OPF_HD float NarrowToFloat(double d) {
#if defined(__CUDA_ARCH__)
  if (d != d) {
    const uint64_t b = static_cast<uint64_t>(__double_as_longlong(d));
    return __uint_as_float(static_cast<uint32_t>(((b >> 32) & 0x80000000u) | 0x7fc00000u | ((b >> 29) & 0x3fffffu)));
  }
  float f;
  asm("cvt.rn.f32.f64 %0, %1;" : "=f"(f) : "d"(d));  // no .ftz: subnormals kept
  return f;
#else
  return static_cast<float>(d);
#endif
}

}  // namespace half_bits

struct float16 {
  uint16_t bits;
  float16() = default;
  OPF_HD explicit float16(float f) : bits(FromFloat(f)) {}
  OPF_HD explicit operator float() const { return ToFloat(bits); }

  static OPF_HD uint16_t FromFloat(float f) {
#if defined(__CUDA_ARCH__)
    uint16_t b;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return b;
#elif defined(__FLT16_MAX__) && !defined(__CUDACC__)
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t b;
    std::memcpy(&b, &h, sizeof(b));
    return b;
#else
    uint32_t x = half_bits::FloatBits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0u));
    if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
    if (x < 0x38800000u) {                                              // subnormal or zero
      const float a = half_bits::BitsFloat(x);
      return static_cast<uint16_t>(sign | static_cast<uint32_t>(a * 16777216.0f + 0.5f));
    }
    const uint32_t mant_odd = (x >> 13) & 1u;
    x += 0xc8000fffu + mant_odd;  // rebias the exponent and round to nearest even
    return static_cast<uint16_t>(sign | (x >> 13));
#endif
  }

  // From double in one rounding, as NumPy does (through float would round twice). Without a
  // binary16 type on the host it does go through float.
  static OPF_HD uint16_t FromDouble(double d) {
#if defined(__CUDA_ARCH__)
    uint16_t b;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(b) : "d"(d));
    return b;
#elif defined(__FLT16_MAX__) && !defined(__CUDACC__)
    const _Float16 h = static_cast<_Float16>(d);
    uint16_t b;
    std::memcpy(&b, &h, sizeof(b));
    return b;
#else
    return FromFloat(static_cast<float>(d));
#endif
  }

  static OPF_HD float ToFloat(uint16_t b) {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
    return f;
#elif defined(__FLT16_MAX__) && !defined(__CUDACC__)
    _Float16 h;
    std::memcpy(&h, &b, sizeof(h));
    return static_cast<float>(h);
#else
    const uint32_t sign = (static_cast<uint32_t>(b) & 0x8000u) << 16;
    const uint32_t exp = (b >> 10) & 0x1fu;
    const uint32_t mant = b & 0x3ffu;
    if (exp == 0) {
      const float f = static_cast<float>(mant) / 16777216.0f;
      return half_bits::BitsFloat(half_bits::FloatBits(f) | sign);
    }
    return half_bits::BitsFloat(sign | ((exp == 31 ? 255u : exp + 112u) << 23) | (mant << 13));
#endif
  }
};

struct bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  OPF_HD explicit bfloat16(float f) : bits(FromFloat(f)) {}
  OPF_HD explicit operator float() const { return ToFloat(bits); }

  static OPF_HD uint16_t FromFloat(float f) {
    uint32_t x = half_bits::FloatBits(f);
    // A NaN keeps its sign and top payload bits, quietened (cvt on the GPU would make it canonical).
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
#if defined(__CUDA_ARCH__)
    uint16_t b;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return b;
#else
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
#endif
  }
  static OPF_HD float ToFloat(uint16_t b) { return half_bits::BitsFloat(static_cast<uint32_t>(b) << 16); }
};

// The type a kernel computes in: the half types widen to float.
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<float16> {
  using type = float;
};
template <>
struct ComputeType<bfloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeType<T>::type;

template <typename T>
OPF_HD compute_t<T> Load(T v) {
  return static_cast<compute_t<T>>(v);
}
template <typename T>
OPF_HD T Store(compute_t<T> v) {
  return static_cast<T>(v);
}

}  // namespace opforge
