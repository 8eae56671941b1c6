// OneHot: the output viewed as [outer, depth, inner]; out = on where indices[outer, inner] == d, else
// off (an index outside [0, depth) gives an all-off row). on and off are 0-d device tensors; the values
// are only copied, so T is the unsigned type of their size.
#include "opforge/cuda.h"

namespace opforge {
namespace cuda {

template <typename I, typename T>
__global__ void OneHotKernel(const I* indices, const T* on, const T* off, T* out, int64_t n, int64_t depth,
                             int64_t inner) {
  const T on_value = on[0], off_value = off[0];
  OPF_GRID_STRIDE_LOOP(i, n) {
    const int64_t in = i % inner, row = i / inner;
    const int64_t d = row % depth, o = row / depth;
    out[i] = static_cast<int64_t>(indices[o * inner + in]) == d ? on_value : off_value;
  }
}

}  // namespace cuda
}  // namespace opforge
