// Helpers for kernels that look for a maximum: a NaN test that also compiles for integers, and a
// max scan the compiler vectorises.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "opforge/type_id.h"

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

// The largest of `init` and x[0..n), computed in C, and whether any element is NaN. Eight lanes of
// branch-free selects (which vectorise) with the NaN flag kept on the side.
template <typename C, typename T>
C MaxScan(const T* x, int64_t n, C init, bool* saw_nan) {
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
