// ParallelFor: split [0, n) across OpenMP threads when the work is large enough to pay for them, one
// piece per thread (bodies with a set-up per call: scratch, a GEMM's packing). ParallelForChunks: for
// elementwise bodies, chunks the threads claim.
// Compiled without OpenMP it runs serially. The body must not throw.
//
// The thread count is one for the whole process: opforge's core owns it and hands every kernel
// library a pointer to it when it loads the library (opforge_bind_runtime below), so
// set_context(num_threads=n) reaches every thread and every library. In a process forked from
// one that ran parallel kernels the count is 1: the OpenMP thread pool does not survive fork().
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>

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
// ParallelForChunks cuts a region's work into this many chunks per thread.
constexpr int64_t kChunksPerThread = 4;

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

// The threads a region of n elements may use: at most one per `grain` of them (all when grain <= 0).
inline int64_t RegionThreads(int64_t n, int64_t grain) {
  const int64_t max_threads = ParallelThreads();
  return grain > 0 ? std::min<int64_t>(max_threads, n / grain) : max_threads;
}

template <typename F>
inline void ParallelFor(int64_t n, int64_t grain, F&& body) {
#ifdef _OPENMP
  const int64_t want = RegionThreads(n, grain);
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

namespace detail {

// When a parallel region's other threads come late (the OS runs another process on their cores, or
// shares the caller's with them), the region takes longer than the caller alone would have. Two such
// regions in a row and the next kSerialRegions run on the calling thread alone; then a region tries the
// threads again, and if it is late too, twice as many run alone (up to kMaxSerialRegions), so that the
// tries cost little while the cores stay taken. A region on time starts the count again.
constexpr int kSerialRegions = 64;
constexpr int kMaxSerialRegions = 8192;

struct Contention {
  std::atomic<int> serial{0};             // regions left to run serially
  std::atomic<int> strikes{0};            // late regions in a row
  std::atomic<int> span{kSerialRegions};  // how many run serially at the next back-off
};

__attribute__((visibility("hidden"))) inline Contention& contention() {
  static Contention state;
  return state;
}

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The CPU time of the calling thread (ns): what its chunks cost, however the OS shared its core.
inline int64_t ThreadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// Record one region: it took `wall` ns, where one thread alone would have taken about `serial` ns (the
// caller's CPU time per chunk times the chunks). Slower than that, it was late.
inline void RecordRegion(int64_t serial, int64_t wall) {
  Contention& c = contention();
  if (wall <= serial) {
    c.strikes.store(0, std::memory_order_relaxed);
    c.span.store(kSerialRegions, std::memory_order_relaxed);
    return;
  }
  const int span = c.span.load(std::memory_order_relaxed);
  const int needed = span > kSerialRegions ? 1 : 2;  // after a back-off, one late try is enough
  if (c.strikes.fetch_add(1, std::memory_order_relaxed) + 1 >= needed) {
    c.strikes.store(0, std::memory_order_relaxed);
    c.serial.store(span, std::memory_order_relaxed);
    c.span.store(std::min(2 * span, kMaxSerialRegions), std::memory_order_relaxed);
  }
}

// Whether this region runs serially because recent ones found the cores taken.
inline bool BackOff() {
  std::atomic<int>& serial = contention().serial;
  int left = serial.load(std::memory_order_relaxed);
  while (left > 0 && !serial.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
  }
  return left > 0;
}

}  // namespace detail

// ParallelFor for bodies whose cost is their elements' (elementwise loops, no per-call set-up): the work
// cut into kChunksPerThread chunks per thread, claimed one at a time, so a thread the OS runs late finds
// the chunks taken by the others instead of holding a fixed share back (on a shared 2-core machine a 1M
// Add's slowest tenth of 2-thread calls went from 1.7-3.3 ms to 0.18). When the others keep coming late
// (detail::RecordRegion), regions run on the calling thread for a while (detail::BackOff).
template <typename F>
inline void ParallelForChunks(int64_t n, int64_t grain, F&& body) {
#ifdef _OPENMP
  const int64_t want = RegionThreads(n, grain);
  if (want > 1 && !omp_in_parallel() && !detail::BackOff()) {
    const int64_t pieces = std::min<int64_t>(n, want * kChunksPerThread);
    const int64_t chunk = (n + pieces - 1) / pieces;
    std::atomic<int64_t> next{0};
    const int64_t start = detail::NowNs();
    int64_t caller_cpu = 0, caller_chunks = 0;
#pragma omp parallel num_threads(static_cast<int>(want))
    {
      const bool caller = omp_get_thread_num() == 0;
      const int64_t cpu = caller ? detail::ThreadCpuNs() : 0;
      int64_t done = 0;
      for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c * chunk < n;
           c = next.fetch_add(1, std::memory_order_relaxed), ++done) {
        body(c * chunk, std::min(n, (c + 1) * chunk));
      }
      if (caller) caller_cpu = detail::ThreadCpuNs() - cpu, caller_chunks = done;
    }
    if (caller_chunks > 0) detail::RecordRegion(caller_cpu * pieces / caller_chunks, detail::NowNs() - start);
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
