// Softmax and LogSoftmax along one axis, the input seen as [outer, n, inner] around it: one thread
// per row (outer * inner rows of n elements, neighbouring threads on neighbouring columns), looping
// over the row three times (max, sum of exponentials, write) with the math of
// opforge/functors/softmax.h. Correct for any n, and without shared memory, so the tests' host
// emulation runs it. Instantiated by name (opforge/kernels/gpu/softmax.py registers which).
#include "opforge/cuda.h"
#include "opforge/functors/softmax.h"

namespace opforge {
namespace cuda {

template <typename T, bool kLog>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  OPF_GRID_STRIDE_LOOP(r, outer * inner) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    const T* xr = x + base;
    T* yr = y + base;
    const SoftmaxRowStats<T> st = SoftmaxStats(xr, n, inner);
    // kLog: log(s), else 1 / s
    const S scale = kLog ? S(math::log(st.sum)) : S(1) / st.sum;
    for (int64_t k = 0; k < n; ++k) {
      const C v = Load(xr[k * inner]);
      yr[k * inner] = Store<T>(static_cast<C>(kLog ? LogSoftmaxOf(v, st, scale) : SoftmaxOf(v, st, scale)));
    }
  }
}

}  // namespace cuda
}  // namespace opforge
