// The order of Sort and TopK, shared by the CPU kernels (csrc/kernels/cpu/sort.cc) and the CUDA kernels
// (csrc/kernels/cuda/sort.cu): values ascending (or descending), NaN greater than every number (last when
// ascending, first when descending, as NumPy / PyTorch), ties broken by the smaller index first (stable).
// Both sort order keys (OrderKey below): unsigned integers in that order, ties on equal keys.
#pragma once

#include "opforge/half.h"
#include "opforge/portable.h"

namespace opforge {

template <typename T>
OPF_HD bool SortsBefore(T a_, int64_t ia, T b_, int64_t ib, bool descending) {
  const compute_t<T> a = Load(a_), b = Load(b_);
  const bool a_nan = !(a == a), b_nan = !(b == b);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return ia < ib;
    return descending ? a_nan : b_nan;
  }
  if (a == b) return ia < ib;
  return descending ? b < a : a < b;
}

// The position element j of a row (n elements `stride` apart) takes in the sorted row: the number of
// elements that sort before it. The CUDA kernels place each element by it (one thread per element).
template <typename T>
OPF_HD int64_t RankInRow(const T* row, int64_t n, int64_t stride, int64_t j, bool descending) {
  const T v = row[j * stride];
  int64_t rank = 0;
  for (int64_t m = 0; m < n; ++m) {
    if (m != j && SortsBefore(row[m * stride], m, v, j, descending)) ++rank;
  }
  return rank;
}

// The order key of a float's bits (U: the unsigned type of its width; a NaN's magnitude bits are above
// `inf_bits`, those of +inf): every NaN the greatest key, -0 and +0 one key, the rest in the order of the
// values (negative: all bits flipped; positive: the sign set). Integer operations and selects only, so a
// CPU loop of them vectorises.
template <typename U>
OPF_HD U FloatOrderKey(U bits, U inf_bits) {
  constexpr int kHigh = static_cast<int>(sizeof(U)) * 8 - 1;
  constexpr U kSign = static_cast<U>(static_cast<U>(1) << kHigh);
  const U magnitude = static_cast<U>(bits & static_cast<U>(~kSign));
  const U negative = static_cast<U>(static_cast<U>(0) - static_cast<U>(bits >> kHigh));  // all ones if the sign is set
  const U key = magnitude == 0 ? kSign : static_cast<U>(bits ^ static_cast<U>(negative | kSign));
  return magnitude > inf_bits ? static_cast<U>(~static_cast<U>(0)) : key;
}

OPF_HD uint64_t DoubleBits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
#endif
}

// SortKey<T>::Of(v): an unsigned integer (type U) whose ascending order is SortsBefore's ascending order of
// the values, equal values (all NaNs, -0 and +0) on equal keys.
template <typename T>
struct SortKey {  // integers: the sign bit flipped
  using U = typename MakeUnsigned<T>::type;
  static OPF_HD U Of(T v) {
    constexpr U kFlip = IntLimits<T>::kSigned ? static_cast<U>(static_cast<U>(1) << (sizeof(U) * 8 - 1)) : U(0);
    return static_cast<U>(static_cast<U>(v) ^ kFlip);
  }
};

template <>
struct SortKey<float> {
  using U = uint32_t;
  static OPF_HD U Of(float v) { return FloatOrderKey<U>(half_bits::FloatBits(v), 0x7F800000u); }
};

template <>
struct SortKey<double> {
  using U = uint64_t;
  static OPF_HD U Of(double v) { return FloatOrderKey<U>(DoubleBits(v), 0x7FF0000000000000ull); }
};

template <typename H, uint16_t kInfBits>
struct HalfSortKey {  // float16 and bfloat16: their own 16 bits
  using U = uint16_t;
  static OPF_HD U Of(H v) { return FloatOrderKey<U>(v.bits, kInfBits); }
};
template <>
struct SortKey<float16> : HalfSortKey<float16, 0x7C00> {};
template <>
struct SortKey<bfloat16> : HalfSortKey<bfloat16, 0x7F80> {};

template <typename T>
OPF_HD typename SortKey<T>::U OrderKey(T v, bool descending) {
  using U = typename SortKey<T>::U;
  const U key = SortKey<T>::Of(v);
  return descending ? static_cast<U>(~key) : key;  // NaN first, larger first; ties still by index
}

}  // namespace opforge
