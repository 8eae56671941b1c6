// Helpers for kernels that look for a maximum: a NaN test that also compiles for integers, and a
// max scan the compiler vectorises.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "opforge/type_id.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opforge {

template <typename C>
inline bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// float32 runs with AVX: GCC 12 vectorises neither the select loop below (it turns the float ?: into
// integer cmovs) nor a bit-mask form of it in its AVX-512 clone. vmaxps(v, m) / vminps(v, m) keep m when
// v is NaN, as `v > m ? v : m` does; the NaN flag is an unordered compare or-ed across the run.
template <bool kMax>
__attribute__((target("avx"))) float ExtremeScanAvx(const float* x, int64_t n, float init, bool* saw_nan) {
  __m256 m = _mm256_set1_ps(init), nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    m = kMax ? _mm256_max_ps(v, m) : _mm256_min_ps(v, m);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  bool any_nan = _mm256_movemask_ps(nan) != 0;
  float best = lanes[0];
  for (int l = 1; l < 8; ++l) best = (kMax ? lanes[l] > best : lanes[l] < best) ? lanes[l] : best;
  for (; i < n; ++i) {
    const float v = x[i];
    best = (kMax ? v > best : v < best) ? v : best;
    any_nan = any_nan || v != v;
  }
  *saw_nan = any_nan;
  return best;
}

inline bool HasAvx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}
#define OPF_SCAN_AVX 1
#endif

// The largest of `init` and x[0..n), computed in C, and whether any element is NaN. Eight lanes of
// branch-free selects with the NaN flag kept on the side (float32 with AVX: ExtremeScanAvx).
template <typename C, typename T>
C MaxScan(const T* x, int64_t n, C init, bool* saw_nan) {
#ifdef OPF_SCAN_AVX
  if constexpr (std::is_same_v<C, float> && std::is_same_v<T, float>) {
    if (HasAvx()) return ExtremeScanAvx<true>(x, n, init, saw_nan);
  }
#endif
  constexpr int kLanes = 8;
  C m[kLanes];
  for (int l = 0; l < kLanes; ++l) m[l] = init;
  int nan = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const C v = Load(x[i + l]);
      m[l] = v > m[l] ? v : m[l];
      nan |= IsNan(v) ? 1 : 0;
    }
  }
  for (; i < n; ++i) {
    const C v = Load(x[i]);
    m[0] = v > m[0] ? v : m[0];
    nan |= IsNan(v) ? 1 : 0;
  }
  *saw_nan = nan != 0;
  C best = m[0];
  for (int l = 1; l < kLanes; ++l) best = m[l] > best ? m[l] : best;
  return best;
}

}  // namespace opforge
