// Sums kept in 16 independent lanes and folded pairwise at the end, for the CPU kernels' row reductions:
// one running accumulator fixes the order of the additions, so the compiler cannot vectorise it; 16 lanes
// are 16 independent sums it can. The order depends on the length only, not on the threads.
#pragma once

#include <cstdint>

namespace opforge {
namespace lanes {

constexpr int kLanes = 16;

// The sum over k in [0, n) of f(k), as S.
template <typename S, typename F>
inline S Sum(int64_t n, F f) {
  S acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += f(k + j);
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
  }
  S s = acc[0];
  for (; k < n; ++k) s += f(k);
  return s;
}

}  // namespace lanes
}  // namespace opforge
