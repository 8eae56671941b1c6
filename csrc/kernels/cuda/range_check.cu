// RangeCheck: the indices a kernel is about to read (Gather's, a loss's labels), checked on the device
// where the host cannot look at them first (a captured device graph): safe[i] is in[i] when it is in
// [0, bound), else 0, so the reading kernel stays in bounds; *first ends as the least position of a
// value out of range (the caller fills it with n first, and raises after the launch when it moved).
#include "opforge/cuda.h"

namespace opforge {
namespace cuda {

template <typename I>
__global__ void RangeCheckKernel(const I* in, I* safe, int64_t n, int64_t bound, unsigned long long* first) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    const I v = in[i];
    const bool ok = v >= 0 && static_cast<int64_t>(v) < bound;
    safe[i] = ok ? v : static_cast<I>(0);
    if (!ok) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

}  // namespace cuda
}  // namespace opforge
