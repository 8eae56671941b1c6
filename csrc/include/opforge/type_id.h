// Numeric type ids shared by Python (opforge.dtype) and every kernel library.
// The values are part of the kernel ABI: never renumber, only append.
#pragma once

#include <cstdint>
#include <cstring>

namespace opforge {

enum TypeId : int32_t {
  kTypeUnknown = 0,
  kNumberTypeBool = 1,
  kNumberTypeInt8 = 2,
  kNumberTypeInt16 = 3,
  kNumberTypeInt32 = 4,
  kNumberTypeInt64 = 5,
  kNumberTypeUInt8 = 6,
  kNumberTypeUInt16 = 7,
  kNumberTypeUInt32 = 8,
  kNumberTypeUInt64 = 9,
  kNumberTypeFloat16 = 10,
  kNumberTypeBFloat16 = 11,
  kNumberTypeFloat32 = 12,
  kNumberTypeFloat64 = 13,
  kNumberTypeComplex64 = 14,
  kNumberTypeComplex128 = 15,
  kNumberTypeEnd = 16,
};

inline const char* TypeIdName(int32_t id) {
  static const char* const kNames[] = {"Unknown", "Bool",    "Int8",    "Int16",    "Int32",     "Int64",
                                       "UInt8",   "UInt16",  "UInt32",  "UInt64",   "Float16",   "BFloat16",
                                       "Float32", "Float64", "Complex64", "Complex128"};
  return (id > 0 && id < kNumberTypeEnd) ? kNames[id] : kNames[0];
}

inline int64_t TypeIdSize(int32_t id) {
  static const int64_t kSizes[] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return (id > 0 && id < kNumberTypeEnd) ? kSizes[id] : 0;
}

// IEEE binary16, stored as bits. Arithmetic happens in float.
struct float16 {
  uint16_t bits;
  float16() = default;
  explicit float16(float f) : bits(FromFloat(f)) {}
  explicit operator float() const { return ToFloat(bits); }

  static uint16_t FromFloat(float f) {
#if defined(__FLT16_MAX__)
    _Float16 h = static_cast<_Float16>(f);
    uint16_t b;
    std::memcpy(&b, &h, sizeof(b));
    return b;
#else
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0u));
    if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
    if (x < 0x38800000u) {                                              // subnormal or zero
      float a;
      std::memcpy(&a, &x, sizeof(a));
      return static_cast<uint16_t>(sign | static_cast<uint32_t>(a * 16777216.0f + 0.5f));
    }
    const uint32_t mant_odd = (x >> 13) & 1u;
    x += 0xc8000fffu + mant_odd;  // rebias exponent and round to nearest even
    return static_cast<uint16_t>(sign | (x >> 13));
#endif
  }

  static float ToFloat(uint16_t b) {
#if defined(__FLT16_MAX__)
    _Float16 h;
    std::memcpy(&h, &b, sizeof(h));
    return static_cast<float>(h);
#else
    const uint32_t sign = (static_cast<uint32_t>(b) & 0x8000u) << 16;
    const uint32_t exp = (b >> 10) & 0x1fu;
    const uint32_t mant = b & 0x3ffu;
    float f;
    if (exp == 0) {
      f = static_cast<float>(mant) / 16777216.0f;
      uint32_t x;
      std::memcpy(&x, &f, sizeof(x));
      x |= sign;
      std::memcpy(&f, &x, sizeof(f));
      return f;
    }
    const uint32_t x = sign | ((exp == 31 ? 255u : exp + 112u) << 23) | (mant << 13);
    std::memcpy(&f, &x, sizeof(f));
    return f;
#endif
  }
};

// bfloat16: the top half of an IEEE float32, rounded to nearest even.
struct bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(FromFloat(f)) {}
  explicit operator float() const { return ToFloat(bits); }

  static uint16_t FromFloat(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
  }
  static float ToFloat(uint16_t b) {
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, sizeof(f));
    return f;
  }
};

// The type a kernel computes in: half types widen to float.
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
inline compute_t<T> Load(T v) {
  return static_cast<compute_t<T>>(v);
}
template <typename T>
inline T Store(compute_t<T> v) {
  return static_cast<T>(v);
}

// TypeId of a C++ type, for registration helpers.
template <typename T>
struct TypeIdOf;
#define OPFORGE_TYPE_ID_OF(CT, ID) \
  template <>                      \
  struct TypeIdOf<CT> {            \
    static constexpr TypeId value = ID; \
  };
OPFORGE_TYPE_ID_OF(bool, kNumberTypeBool)
OPFORGE_TYPE_ID_OF(int8_t, kNumberTypeInt8)
OPFORGE_TYPE_ID_OF(int16_t, kNumberTypeInt16)
OPFORGE_TYPE_ID_OF(int32_t, kNumberTypeInt32)
OPFORGE_TYPE_ID_OF(int64_t, kNumberTypeInt64)
OPFORGE_TYPE_ID_OF(uint8_t, kNumberTypeUInt8)
OPFORGE_TYPE_ID_OF(uint16_t, kNumberTypeUInt16)
OPFORGE_TYPE_ID_OF(uint32_t, kNumberTypeUInt32)
OPFORGE_TYPE_ID_OF(uint64_t, kNumberTypeUInt64)
OPFORGE_TYPE_ID_OF(float16, kNumberTypeFloat16)
OPFORGE_TYPE_ID_OF(bfloat16, kNumberTypeBFloat16)
OPFORGE_TYPE_ID_OF(float, kNumberTypeFloat32)
OPFORGE_TYPE_ID_OF(double, kNumberTypeFloat64)
#undef OPFORGE_TYPE_ID_OF

}  // namespace opforge
