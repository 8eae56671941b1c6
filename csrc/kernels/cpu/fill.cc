// Fill(type, shape, value): no inputs, out = value everywhere (attr "value": bool, int or float; the
// output's dtype and shape are the inferred ones). ZerosLike(x) / OnesLike(x): 0 / 1 with x's shape and dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/elementwise.h"

namespace opforge {
namespace {

// bool tensors are written as bytes: a byte other than 0/1 in a C++ bool is UB.
template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

struct complex64 {
  float re, im;
};
struct complex128 {
  double re, im;
};

// float16 from double in one rounding, as NumPy does (through float would round twice).
float16 DoubleToHalf(double v) {
  float16 r;
  r.bits = float16::FromDouble(v);
  return r;
}

// The fill value as given: an exact integer (int or bool attr) or a double (float attr).
struct Scalar {
  bool is_int = true;
  int64_t i = 0;
  double f = 0.0;
};

Scalar ReadValue(const KernelContext& ctx) {
  Scalar s;
  try {
    s.i = ctx.GetInt("value");  // int or bool
  } catch (const KernelError&) {
    s.is_int = false;
    s.f = ctx.GetFloat("value");  // float; also fails clearly when the attr is missing
  }
  return s;
}

template <typename T>
Storage<T> Convert(const std::string& op, const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<uint8_t>(s.is_int ? s.i != 0 : s.f != 0.0);  // NaN != 0: True, as in NumPy
  } else if constexpr (std::is_integral_v<T>) {
    using Lim = std::numeric_limits<T>;
    if (s.is_int) {
      bool fits;
      if constexpr (std::is_signed_v<T>) {
        fits = s.i >= static_cast<int64_t>(Lim::min()) && s.i <= static_cast<int64_t>(Lim::max());
      } else {
        fits = s.i >= 0 && static_cast<uint64_t>(s.i) <= static_cast<uint64_t>(Lim::max());
      }
      OPF_CHECK(fits, "For '" << op << "', the 'value' must fit the output dtype " << TypeIdName(TypeIdOf<T>::value)
                              << " [" << +Lim::min() << ", " << +Lim::max() << "], but got " << s.i << ".");
      return static_cast<T>(s.i);
    } else {
      // Truncation toward zero (np.full's cast); the value must be finite and in range, where a C++
      // cast would be undefined. 2^digits is the first value too large (exact in double).
      const double hi = std::ldexp(1.0, Lim::digits);
      const double lo = std::is_signed_v<T> ? -hi : 0.0;
      OPF_CHECK(std::isfinite(s.f) && s.f > lo - 1.0 && s.f < hi,
                "For '" << op << "', the 'value' must be finite and fit the output dtype "
                        << TypeIdName(TypeIdOf<T>::value) << " after truncation, but got " << s.f << ".");
      return static_cast<T>(s.f);
    }
  } else if constexpr (std::is_same_v<T, float16>) {
    return s.is_int ? float16(static_cast<float>(s.i)) : DoubleToHalf(s.f);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16(s.is_int ? static_cast<float>(s.i) : static_cast<float>(s.f));  // as ml_dtypes: via float
  } else {
    return s.is_int ? static_cast<T>(s.i) : static_cast<T>(s.f);
  }
}

template <typename S>
void ParallelFill(S* out, int64_t n, S value) {
  ParallelForChunks(n, kParallelGrain, [&](int64_t begin, int64_t end) { std::fill(out + begin, out + end, value); });
}

// Writes one value everywhere; only its size matters, so all dtypes of a size share this Launch and
// the kernels below only work out the value.
template <typename T>
using Bits = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<
        sizeof(T) == 2, uint16_t,
        std::conditional_t<sizeof(T) == 4, uint32_t, std::conditional_t<sizeof(T) == 8, uint64_t, complex128>>>>;

template <typename E>
class FillBitsCpuKernel : public CpuKernel {
 public:
  void Launch(const KernelArgs& args) override { ParallelFill(args.output<E>(0), n_, value_); }

 protected:
  template <typename S>
  void Set(const S& value, int64_t n) {
    static_assert(sizeof(S) == sizeof(E), "the value must have the element's size");
    std::memcpy(&value_, &value, sizeof(E));
    n_ = n;
  }

 private:
  E value_{};
  int64_t n_ = 0;
};

template <typename T>
class FillCpuKernel : public FillBitsCpuKernel<Bits<Storage<T>>> {
 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.num_inputs() == 0, "For '" << ctx.op_name() << "', the kernel takes no tensor inputs, but got "
                                             << ctx.num_inputs() << ".");
    const TensorMeta& out = ctx.output(0);
    OPF_CHECK(out.dtype == TypeIdOf<T>::value, "For '" << ctx.op_name() << "', the output must be "
                                                       << TypeIdName(TypeIdOf<T>::value) << ", but got "
                                                       << TypeIdName(out.dtype) << ".");
    if (ctx.HasAttr("shape")) {
      const std::vector<int64_t> shape = ctx.GetInts("shape");
      OPF_CHECK(shape == out.shape, "For '" << ctx.op_name() << "', the output shape must be the 'shape' "
                                            << ShapeToString(shape) << ", but got " << ShapeToString(out.shape)
                                            << ".");
    }
    this->Set(Convert<T>(ctx.op_name(), ReadValue(ctx)), out.numel());
  }
};

template <typename T, int kValue>
Storage<T> Constant() {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return T{static_cast<decltype(T::re)>(kValue), 0};
  } else {
    Scalar s;
    s.i = kValue;
    return Convert<T>("", s);
  }
}

// ZerosLike / OnesLike: the output is the input's meta; the input's data is never read.
template <typename T, int kValue>
class ConstantLikeCpuKernel : public FillBitsCpuKernel<Bits<Storage<T>>> {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSameMeta(ctx, ctx.input(0), ctx.output(0), "output");
    this->Set(Constant<T, kValue>(), ctx.output(0).numel());
  }
};

template <typename... Ts>
struct TypeList {};
using RealTypes = TypeList<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float16,
                           bfloat16, float, double>;

template <typename T>
constexpr TypeId IdOf() {
  if constexpr (std::is_same_v<T, complex64>) {
    return kNumberTypeComplex64;
  } else if constexpr (std::is_same_v<T, complex128>) {
    return kNumberTypeComplex128;
  } else {
    return TypeIdOf<T>::value;
  }
}

template <typename... Ts>
void RegisterLike(TypeList<Ts...>) {
  (detail::RegisterKernel<ConstantLikeCpuKernel<Ts, 0>>(
       "CPU", "ZerosLike", KernelAttr().AddInputAttr(IdOf<Ts>()).AddOutputAttr(IdOf<Ts>())),
   ...);
  (detail::RegisterKernel<ConstantLikeCpuKernel<Ts, 1>>(
       "CPU", "OnesLike", KernelAttr().AddInputAttr(IdOf<Ts>()).AddOutputAttr(IdOf<Ts>())),
   ...);
}

template <typename... Ts>
bool RegisterAll(TypeList<Ts...>) {
  (detail::RegisterKernel<FillCpuKernel<Ts>>("CPU", "Fill", KernelAttr().AddOutputAttr(IdOf<Ts>())), ...);
  RegisterLike(TypeList<Ts..., complex64, complex128>{});
  return true;
}

// Fill: 13 real dtypes; ZerosLike, OnesLike: those and complex64, complex128.
[[maybe_unused]] const bool g_fill_registered = RegisterAll(RealTypes{});

}  // namespace
}  // namespace opforge
