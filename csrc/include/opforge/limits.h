// Limits of the arithmetic types for host and device code (NVRTC has no <limits>): the infinity and quiet
// NaN of the floating types, and the lowest and highest values of the integer types.
#pragma once

#include "opforge/half.h"
#include "opforge/portable.h"

namespace opforge {

namespace limits {

template <typename C>
OPF_HD C Infinity() {
  return static_cast<C>(half_bits::BitsFloat(0x7f800000u));  // float's +inf widens exactly to double's
}

template <typename C>
OPF_HD C QuietNaN() {
  return static_cast<C>(half_bits::BitsFloat(0x7fc00000u));
}

// The smallest value of an integer type: 0 when unsigned, -2^(bits-1) when signed.
template <typename C>
OPF_HD C Lowest() {
  using U = typename MakeUnsigned<C>::type;
  if constexpr (IsSame<C, U>::value) {
    return C(0);
  } else {
    return static_cast<C>(static_cast<U>(static_cast<U>(~U(0)) >> 1) + U(1));  // two's complement: 0b100...0
  }
}

// The largest value of an integer type: ~0 when unsigned, 2^(bits-1) - 1 when signed.
template <typename C>
OPF_HD C Highest() {
  using U = typename MakeUnsigned<C>::type;
  return static_cast<C>(static_cast<U>(~static_cast<U>(Lowest<C>())));
}

}  // namespace limits

}  // namespace opforge
