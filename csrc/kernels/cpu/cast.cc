// Cast: out = x.astype(out dtype), for every pair of bool, (u)int8..64, float16, bfloat16, float32, float64.
// The per-element math is opforge/functors/cast.h, shared with the CUDA kernels.
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/cpu/elementwise.h"
#include "opforge/functors/cast.h"

namespace opforge {
namespace {

using cast::Storage;

template <typename S, typename D>
void CastLoop(const Storage<S>* x, Storage<D>* y, int64_t n) {
  const CastOp<S, D> op;
  for (int64_t i = 0; i < n; ++i) y[i] = op(x[i]);
}

// float16 <-> other types, in the AVX2 and AVX-512 clones too: there _Float16's conversions are F16C's
// vcvtps2ph / vcvtph2ps, where the baseline x86-64 calls libgcc per element (1M float32 to float16 took
// 10.7 ms that way, 0.27 ms in the clones).
template <typename S, typename D>
OPF_VECTOR_CLONES void CastLoopClones(const Storage<S>* x, Storage<D>* y, int64_t n) {
  CastLoop<S, D>(x, y, n);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// float32 <-> float16 eight at a time (GCC does not vectorise _Float16's conversions): F16C's instructions,
// rounding to nearest even, so the same results as the element-by-element loop above.
__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* x, float16* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  for (; i < n; ++i) y[i].bits = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("avx,f16c"))) void HalfToFloatF16c(const float16* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
  for (; i < n; ++i) y[i] = _cvtsh_ss(x[i].bits);
}

bool HasF16c() {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}
#define OPF_CAST_F16C 1
#endif

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
      ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) { Run(x + begin, y + begin, end - begin); });
    }
  }

 private:
  // Pointers as parameters: byte-typed stores (bool, int8) could otherwise alias the lambda's
  // captures, forcing reloads that also block vectorisation.
  static void Run(const Storage<S>* x, Storage<D>* y, int64_t n) {
#ifdef OPF_CAST_F16C
    if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float16>) {
      if (HasF16c()) return FloatToHalfF16c(x, y, n);
    } else if constexpr (std::is_same_v<S, float16> && std::is_same_v<D, float>) {
      if (HasF16c()) return HalfToFloatF16c(x, y, n);
    }
#endif
    if constexpr (std::is_same_v<S, float16> || std::is_same_v<D, float16>) {
      CastLoopClones<S, D>(x, y, n);
    } else {
      CastLoop<S, D>(x, y, n);
    }
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
  if constexpr ((std::is_same_v<S, D> && sizeof(S) <= 8) || (kIsInt<S> && kIsInt<D> && sizeof(S) == sizeof(D))) {
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
                           bfloat16, float, double, complex64, complex128>;

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

// 15 x 15 registrations, one per (source, destination) pair, identity included.
[[maybe_unused]] const bool g_cast_registered = RegisterAll(CastTypes{});

}  // namespace
}  // namespace opforge
