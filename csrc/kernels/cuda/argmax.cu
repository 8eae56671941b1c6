// Argmax: one thread per output element scans the axis (x viewed as [outer, n, inner]), with the CPU's
// rule (opforge/functors/argmax.h): ties keep the first index, the first NaN wins.
#include "opforge/cuda.h"
#include "opforge/functors/argmax.h"

namespace opforge {
namespace cuda {

template <typename T, typename O>
__global__ void ArgMaxKernel(const T* x, O* y, int64_t outputs, int64_t n, int64_t inner) {
  OPF_GRID_STRIDE_LOOP(i, outputs) {
    const T* row = x + (i / inner) * n * inner + i % inner;
    compute_t<T> best = Load(row[0]);
    int64_t index = 0;
    for (int64_t k = 1; k < n; ++k) {
      const compute_t<T> v = Load(row[k * inner]);
      if (ArgMaxReplaces(v, best)) {
        best = v;
        index = k;
      }
    }
    y[i] = static_cast<O>(index);
  }
}

}  // namespace cuda
}  // namespace opforge
