// RangeCheck: the indices a kernel is about to read (Gather's, the losses' labels, GatherNd's and the scatters'
// index rows), checked on the device as the call runs: safe[i] is in[i] when it is in [0, bound), else 0,
// so the reading kernel stays in bounds; *first ends as the least position (row) of a value out of range
// (the caller fills it with n first, and raises after the launches when it moved).
#include "opforge/cuda.h"
#include "opforge/functors/gather.h"

namespace opforge {
namespace cuda {

// kIgnore: the value `ignore` passes too (NLLLoss's ignore_index), and a bad value reads as it.
template <typename I, bool kIgnore>
__global__ void RangeCheckKernel(const I* in, I* safe, int64_t n, int64_t bound, int64_t ignore,
                                 unsigned long long* first) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    const I v = in[i];
    const bool ok = (v >= 0 && static_cast<int64_t>(v) < bound) || (kIgnore && static_cast<int64_t>(v) == ignore);
    safe[i] = ok ? v : static_cast<I>(kIgnore ? ignore : 0);  // (an ignored label is read as no row at all)
    if (!ok) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

// Rows of nd.k coordinates, each in [0, nd.dim[d]): a row with one out of range is read as all zeros.
template <typename I>
__global__ void RowRangeCheckKernel(const I* in, I* safe, int64_t rows, NdIndex nd, unsigned long long* first) {
  OPF_GRID_STRIDE_LOOP(r, rows) {
    const bool ok = nd.BadCoordinate(in, r) < 0;
    for (int64_t d = 0; d < nd.k; ++d) safe[r * nd.k + d] = ok ? in[r * nd.k + d] : static_cast<I>(0);
    if (!ok) atomicMin(first, static_cast<unsigned long long>(r));
  }
}

}  // namespace cuda
}  // namespace opforge
