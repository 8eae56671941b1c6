#include "core/runtime.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <mutex>

#include "opforge/parallel.h"

namespace opforge {
namespace runtime {
namespace {

// Read by every ParallelFor through OpfRuntime::num_threads, so it is a plain int32 accessed with
// atomic builtins (the struct crosses the C ABI).
alignas(64) int32_t g_num_threads = 1;
std::atomic<int32_t> g_requested{1};
std::atomic<bool> g_forked_child{false};
const OpfRuntime g_runtime{1, &g_num_threads};

void Publish() {
  const int32_t n = g_forked_child.load() ? 1 : g_requested.load();
  __atomic_store_n(&g_num_threads, n, __ATOMIC_RELAXED);
}

// Runs in the child of fork(): async-signal-safe stores only.
void AfterForkInChild() {
  g_forked_child.store(true);
  __atomic_store_n(&g_num_threads, 1, __ATOMIC_RELAXED);
}

}  // namespace

void Init() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef _OPENMP
    g_requested.store(omp_get_max_threads());
#endif
    Publish();
    pthread_atfork(nullptr, nullptr, &AfterForkInChild);
    opforge_bind_runtime(&g_runtime);
  });
}

void Bind(void* library_handle) {
  using BindFn = void (*)(const OpfRuntime*);
  auto bind = reinterpret_cast<BindFn>(dlsym(library_handle, "opforge_bind_runtime"));
  if (bind != nullptr) bind(&g_runtime);  // a library without ParallelFor exports none
}

void SetNumThreads(int n) {
  g_requested.store(n);
  Publish();
}

int NumThreads() { return __atomic_load_n(&g_num_threads, __ATOMIC_RELAXED); }

bool ForkedChild() { return g_forked_child.load(); }

}  // namespace runtime
}  // namespace opforge
