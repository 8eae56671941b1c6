// ParallelFor: split [0, n) across OpenMP threads when the work is large enough to pay for them.
// Compiled without OpenMP it runs serially. The body must not throw.
//
// The thread count is one for the whole process: opforge's core owns it and hands every kernel
// library a pointer to it when it loads the library (opforge_bind_runtime below), so
// set_context(num_threads=n) reaches every thread and every library. In a process forked from
// one that ran parallel kernels the count is 1: the OpenMP thread pool does not survive fork().
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

extern "C" {

// What the core shares with a kernel library. A plain C struct: part of the kernel ABI.
typedef struct OpfRuntime {
  int32_t version;             // 1
  const int32_t* num_threads;  // the threads a parallel region may use; read atomically
} OpfRuntime;

}  // extern "C"

namespace opforge {

// Below this many elements a cheap elementwise loop is faster on one thread.
constexpr int64_t kParallelGrain = 32768;

namespace detail {

// This library's view of the core's thread count; null until the core binds it. Hidden, so every
// shared library keeps its own.
__attribute__((visibility("hidden"))) inline std::atomic<const int32_t*>& bound_num_threads() {
  static std::atomic<const int32_t*> count{nullptr};
  return count;
}

}  // namespace detail

// The threads a parallel region may use now.
inline int ParallelThreads() {
  const int32_t* count = detail::bound_num_threads().load(std::memory_order_acquire);
  if (count != nullptr) return __atomic_load_n(count, __ATOMIC_RELAXED);
#ifdef _OPENMP
  return omp_get_max_threads();  // a library used outside opforge's loader
#else
  return 1;
#endif
}

template <typename F>
inline void ParallelFor(int64_t n, int64_t grain, F&& body) {
#ifdef _OPENMP
  const int64_t max_threads = ParallelThreads();
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

// Called by the core when it loads the library (and on itself): from then on ParallelFor uses the
// process-wide count. Emitted in every translation unit that includes this header, like
// opforge_kernel_defs.
extern "C" __attribute__((visibility("default"), used)) inline void opforge_bind_runtime(const OpfRuntime* runtime) {
  if (runtime != nullptr && runtime->version >= 1) {
    opforge::detail::bound_num_threads().store(runtime->num_threads, std::memory_order_release);
  }
}
