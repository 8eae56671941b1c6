// The type a kernel accumulates sums in.
#pragma once

#include <cstdint>
#include <type_traits>

#include "opforge/type_id.h"

namespace opforge {

// Half types sum in float, float32 in double (cheap, and much more accurate), integers in 64 bits.
// The integer one is unsigned so overflow wraps (as NumPy's does) instead of being UB; two's
// complement makes it bit-identical to an int64 sum.
template <typename T>
struct AccType {
  using type = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
};
template <>
struct AccType<float16> {
  using type = float;
};
template <>
struct AccType<bfloat16> {
  using type = float;
};
template <typename T>
using acc_t = typename AccType<T>::type;

}  // namespace opforge
