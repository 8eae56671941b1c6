// Sort and TopK on the GPU (the CPU's csrc/kernels/cpu/sort.cc): one thread per element places it at
// its rank in its row (functors/sort.h), when that rank is below k. O(n) work per element: for the
// moderate row lengths of sorting along a dim; deterministic, with the CPU's order.
#include "opforge/cuda.h"
#include "opforge/functors/sort.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void RankSortKernel(const T* x, T* values, int32_t* indices, int64_t total, int64_t n, int64_t inner,
                               int64_t k, bool descending) {
  OPF_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = i % inner, j = (i / inner) % n, o = i / (inner * n);
    const T* row = x + o * n * inner + c;
    const int64_t rank = RankInRow(row, n, inner, j, descending);
    if (rank < k) {
      const int64_t at = o * k * inner + rank * inner + c;
      values[at] = row[j * inner];
      indices[at] = static_cast<int32_t>(j);
    }
  }
}

}  // namespace cuda
}  // namespace opforge
