// BroadcastTo: x repeated along its broadcast dims to the output's shape (np.broadcast_to), elements
// moved as raw bytes. The index is the CPU kernels' BroadcastPlan of (x, out) onto out.
#include "copy.cuh"
#include "elementwise.cuh"

namespace opforge {
namespace cuda {

template <typename E>
__global__ void BroadcastToKernel(const E* x, E* y, int64_t n, BroadcastIndex index) {
  const bool narrow = FitsIn32Bits(n);
  OPF_GRID_STRIDE_LOOP(i, n) {
    int64_t ix, iy;
    index.Offsets(i, narrow, &ix, &iy);
    y[i] = x[ix];
  }
}

}  // namespace cuda
}  // namespace opforge
