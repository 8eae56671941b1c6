// The process-wide kernel runtime: the thread count every parallel region uses, shared with every
// kernel library, and what happens to it across fork().
#pragma once

namespace opforge {
namespace runtime {

// Once, when opforge._C is imported: the count starts at OpenMP's default (OMP_NUM_THREADS, else
// every core), the core's own kernels are bound to it and a fork handler is installed.
void Init();
// Hands the count to a library the core has just loaded (if it uses ParallelFor).
void Bind(void* library_handle);
// The count asked for; any thread may set it, and it applies to every thread. In a process forked
// from this one parallel regions stay on one thread whatever is asked (see ForkedChild).
void SetNumThreads(int n);
// The threads a parallel region uses now.
int NumThreads();
// True in a child created by fork() after Init: OpenMP's thread pool did not survive the fork, so
// entering it would hang; kernels run serially there.
bool ForkedChild();

}  // namespace runtime
}  // namespace opforge
