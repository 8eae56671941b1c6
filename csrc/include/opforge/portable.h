// What code shared by the CPU and the GPU may rely on. The same header compiles with g++ (the CPU
// kernels), nvcc, NVRTC (CUDA kernels compiled by CuPy at run time, which has no C++ standard
// library) and g++ again in the tests' host emulation of CUDA.
#pragma once

#if defined(__CUDACC__)
#define OPF_HD __host__ __device__ __forceinline__
#else
#define OPF_HD inline
#endif

#if defined(__CUDACC_RTC__)
// NVRTC: no <cstdint>. LP64 widths, so a struct has one layout on the host and the device.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
#else
#include <cstdint>
#endif

namespace opforge {

// The few type traits the shared code needs (NVRTC has no <type_traits>).
template <bool B, typename T, typename F>
struct Conditional {
  using type = T;
};
template <typename T, typename F>
struct Conditional<false, T, F> {
  using type = F;
};
template <bool B, typename T, typename F>
using conditional_t = typename Conditional<B, T, F>::type;

template <typename A, typename B>
struct IsSame {
  static constexpr bool value = false;
};
template <typename A>
struct IsSame<A, A> {
  static constexpr bool value = true;
};

template <typename T>
struct MakeUnsigned {
  using type = T;  // unsigned types and bool
};
#define OPF_UNSIGNED_OF(S, U) \
  template <>                 \
  struct MakeUnsigned<S> {    \
    using type = U;           \
  };
OPF_UNSIGNED_OF(signed char, unsigned char)
OPF_UNSIGNED_OF(char, unsigned char)
OPF_UNSIGNED_OF(short, unsigned short)
OPF_UNSIGNED_OF(int, unsigned int)
OPF_UNSIGNED_OF(long, unsigned long)
OPF_UNSIGNED_OF(long long, unsigned long long)
#undef OPF_UNSIGNED_OF

template <typename T>
struct IsFloat {
  static constexpr bool value = IsSame<T, float>::value || IsSame<T, double>::value;
};
// complex64 / complex128 (opforge/complex.h specialises it).
template <typename T>
struct IsComplex {
  static constexpr bool value = false;
};
template <typename T>
struct IsIntegral {
  // the compute types are integers, float, double or complex
  static constexpr bool value = !IsFloat<T>::value && !IsComplex<T>::value;
};

// The range of an integer type (NVRTC has no <limits>): digits as std::numeric_limits counts them
// (the value bits, without the sign), and the least and greatest values.
template <typename I>
struct IntLimits {
  static constexpr bool kSigned = static_cast<I>(-1) < static_cast<I>(0);
  static constexpr int kDigits = static_cast<int>(sizeof(I) * 8) - (kSigned ? 1 : 0);
  static OPF_HD constexpr I Max() { return static_cast<I>(~static_cast<uint64_t>(0) >> (64 - kDigits)); }
  static OPF_HD constexpr I Min() { return kSigned ? static_cast<I>(-Max() - 1) : static_cast<I>(0); }
};

// Integer + - * and negation wrap modulo 2^bits as in NumPy. They are done in an unsigned type of
// at least `unsigned` width: signed overflow (and uint16 * uint16 promoted to int) is UB in C++.
template <typename C>
using WrapType = conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, typename MakeUnsigned<C>::type>;

}  // namespace opforge
