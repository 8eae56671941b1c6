// ParallelFor: split [0, n) across OpenMP threads when the work is large enough to pay for them.
// Compiled without OpenMP it runs serially. The body must not throw.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace opforge {

// Below this many elements a cheap elementwise loop is faster on one thread.
constexpr int64_t kParallelGrain = 32768;

template <typename F>
inline void ParallelFor(int64_t n, int64_t grain, F&& body) {
#ifdef _OPENMP
  const int64_t max_threads = omp_get_max_threads();
  const int64_t want = grain > 0 ? std::min<int64_t>(max_threads, n / grain) : max_threads;
  if (want > 1 && !omp_in_parallel()) {
    const int threads = static_cast<int>(want);
#pragma omp parallel num_threads(threads)
    {
      const int64_t t = omp_get_thread_num();
      const int64_t nt = omp_get_num_threads();
      const int64_t chunk = (n + nt - 1) / nt;
      const int64_t begin = std::min(n, t * chunk);
      const int64_t end = std::min(n, begin + chunk);
      if (begin < end) body(begin, end);
    }
    return;
  }
#endif
  (void)grain;
  if (n > 0) body(int64_t{0}, n);
}

}  // namespace opforge
