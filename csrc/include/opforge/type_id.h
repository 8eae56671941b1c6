// Numeric type ids shared by Python (opforge.dtype) and every kernel library.
// The values are part of the kernel ABI: never renumber, only append.
#pragma once

#include <cstdint>

#include "opforge/complex.h"
#include "opforge/half.h"

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
OPFORGE_TYPE_ID_OF(complex64, kNumberTypeComplex64)
OPFORGE_TYPE_ID_OF(complex128, kNumberTypeComplex128)
#undef OPFORGE_TYPE_ID_OF

}  // namespace opforge
