// Cast: out = x.astype(out dtype), for every pair of bool, (u)int8..64, float16, bfloat16, float32, float64.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/elementwise.h"

namespace opforge {
namespace {

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// bool tensors are read and written as bytes: a byte other than 0/1 in a C++ bool is UB.
template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// The source value in a type C++ converts from: bool, an integer, float or double.
template <typename S>
auto Widen(Storage<S> v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v != 0;
  } else if constexpr (kIsHalf<S>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// float -> int truncates toward zero; NaN gives 0 and values out of range saturate, where a
// plain C++ cast would be undefined.
template <typename I>
I FloatToInt(double f) {
  using Lim = std::numeric_limits<I>;
  if constexpr (Lim::digits < std::numeric_limits<double>::digits) {
    // The limits are exact in double, so clamping first is exact too. Written as min/max and a
    // select through a 32- or 64-bit int so that GCC vectorises the loop (no branches).
    using Wide = std::conditional_t<(Lim::digits < 32), int32_t, int64_t>;
    constexpr double lo = static_cast<double>(Lim::min()), hi = static_cast<double>(Lim::max());
    const double c = std::isnan(f) ? 0.0 : std::min(std::max(f, lo), hi);
    return static_cast<I>(static_cast<Wide>(c));
  } else {
    // 64-bit: the max is not a double, so test against 2^digits, the first value too large.
    const double hi = std::ldexp(1.0, Lim::digits);
    const double lo = std::is_signed_v<I> ? -hi : 0.0;  // exact; [lo - 1, lo) still truncates into range
    if (f > lo - 1.0 && f < hi) return static_cast<I>(f);
    if (std::isnan(f)) return I(0);
    return f > 0 ? Lim::max() : Lim::min();
  }
}

// float16 from double in one rounding, as NumPy does (through float would round twice).
float16 DoubleToHalf(double v) {
#if defined(__FLT16_MAX__)
  const _Float16 h = static_cast<_Float16>(v);
  float16 r;
  std::memcpy(&r.bits, &h, sizeof(r.bits));
  return r;
#else
  return float16(static_cast<float>(v));
#endif
}

template <typename D, typename V>
Storage<D> Convert(V v) {
  if constexpr (std::is_same_v<D, bool>) {
    return static_cast<uint8_t>(v != V(0));  // NaN != 0, so NaN -> True as in NumPy
  } else if constexpr (std::is_same_v<D, float16> && std::is_same_v<V, double>) {
    return DoubleToHalf(v);
  } else if constexpr (kIsHalf<D>) {
    return D(static_cast<float>(v));  // bfloat16 from double goes through float, as in ml_dtypes
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<V>) {
    return FloatToInt<D>(static_cast<double>(v));
  } else {
    return static_cast<D>(v);  // int -> int wraps modulo 2^bits, as in NumPy
  }
}

template <typename S, typename D>
class CastCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.output(0).shape == ctx.input(0).shape,
              "For 'Cast', the output shape must equal the input shape " << ShapeToString(ctx.input(0).shape)
                                                                          << ", but got "
                                                                          << ShapeToString(ctx.output(0).shape)
                                                                          << ".");
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const Storage<S>* x = args.input<Storage<S>>(0);
    Storage<D>* y = args.output<Storage<D>>(0);
    if constexpr (std::is_same_v<S, D>) {
      if (n_ > 0 && static_cast<const void*>(x) != static_cast<void*>(y)) std::memcpy(y, x, n_ * sizeof(S));
    } else {
      ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) { Run(x + begin, y + begin, end - begin); });
    }
  }

 private:
  // Pointers as parameters: byte-typed stores (bool, int8) could otherwise alias the lambda's
  // captures, forcing reloads that also block vectorisation.
  static void Run(const Storage<S>* x, Storage<D>* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = Convert<D>(Widen<S>(x[i]));
  }

  int64_t n_ = 0;
};

// Pairs that do the same to the stored bits share one kernel. A dtype to itself, or an integer to an
// integer of its width, is a copy; otherwise an integer (or bool) becomes an integer modulo 2^bits,
// so only the widths matter, and the source's signedness only when it widens; an integer becomes a
// bool by a test against zero, whatever its signedness.
template <size_t kBytes>
using Bits = std::conditional_t<kBytes == 1, uint8_t,
                                std::conditional_t<kBytes == 2, uint16_t,
                                                   std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;
template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename K>
struct KernelTag {
  using type = K;
};

template <typename S, typename D>
constexpr auto CastKernelTag() {
  if constexpr (std::is_same_v<S, D> || (kIsInt<S> && kIsInt<D> && sizeof(S) == sizeof(D))) {
    return KernelTag<CastCpuKernel<Bits<sizeof(S)>, Bits<sizeof(S)>>>{};
  } else if constexpr (kIsInt<D> && (kIsInt<S> || std::is_same_v<S, bool>)) {
    using Src = std::conditional_t<std::is_same_v<S, bool> || (sizeof(S) < sizeof(D)), S, Bits<sizeof(S)>>;
    return KernelTag<CastCpuKernel<Src, Bits<sizeof(D)>>>{};
  } else if constexpr (kIsInt<S> && std::is_same_v<D, bool>) {
    return KernelTag<CastCpuKernel<Bits<sizeof(S)>, bool>>{};
  } else {
    return KernelTag<CastCpuKernel<S, D>>{};
  }
}
template <typename S, typename D>
using CastKernelFor = typename decltype(CastKernelTag<S, D>())::type;

template <typename... Ts>
struct TypeList {};
using CastTypes = TypeList<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float16,
                           bfloat16, float, double>;

template <typename S, typename... Ds>
void RegisterFrom(TypeList<Ds...>) {
  (detail::RegisterKernel<CastKernelFor<S, Ds>>(
       "CPU", "Cast", KernelAttr().AddInputAttr(TypeIdOf<S>::value).AddOutputAttr(TypeIdOf<Ds>::value)),
   ...);
}

template <typename... Ss>
bool RegisterAll(TypeList<Ss...>) {
  (RegisterFrom<Ss>(CastTypes{}), ...);
  return true;
}

// 13 x 13 registrations, one per (source, destination) pair, identity included; 114 distinct kernels.
[[maybe_unused]] const bool g_cast_registered = RegisterAll(CastTypes{});

}  // namespace
}  // namespace opforge
