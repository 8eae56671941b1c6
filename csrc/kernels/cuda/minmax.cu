// MaximumGrad, MinimumGrad(x, y, dout) -> (dx, dy): dout goes to the input the forward op picked
// (PicksX of opforge/functors/arithmetic.h, NumPy's rule), the other gets 0; x and y broadcast to
// dout's shape. (Maximum and Minimum themselves are in arithmetic.cu.)
#include "elementwise.cuh"
#include "opforge/functors/arithmetic.h"

namespace opforge {
namespace cuda {

template <typename T, bool kMax>
__global__ void MinMaxGradKernel(const T* x, const T* y, const T* dout, T* dx, T* dy, int64_t n,
                                 BroadcastIndex index, uint8_t grad_x, uint8_t grad_y) {
  const T zero = Store<T>(compute_t<T>(0));
  const bool narrow = FitsIn32Bits(n);
  OPF_GRID_STRIDE_LOOP(i, n) {
    int64_t ix, iy;
    index.Offsets(i, narrow, &ix, &iy);
    const bool to_x = PicksX<kMax>(Load(x[ix]), Load(y[iy]));
    dx[i] = (to_x && grad_x) ? dout[i] : zero;
    dy[i] = (!to_x && grad_y) ? dout[i] : zero;
  }
}

}  // namespace cuda
}  // namespace opforge
