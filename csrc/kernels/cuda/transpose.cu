// Transpose(x, perm) (np.transpose): y[i] = x[offset of i], elements moved as raw bytes. The host
// merges the output dims that stay neighbours in the input (opforge/kernels/gpu/transpose.py).
#include "copy.cuh"

namespace opforge {
namespace cuda {

constexpr int kMaxTransposeDims = 8;

// The output's (merged) dims and the input stride each walks.
struct TransposeIndex {
  int64_t ndim;
  int64_t size[kMaxTransposeDims];
  int64_t stride[kMaxTransposeDims];

  OPF_HD int64_t InputOffset(int64_t i) const {
    int64_t offset = 0;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      offset += (i % size[d]) * stride[d];
      i /= size[d];
    }
    return offset;
  }
};

template <typename E>
__global__ void TransposeKernel(const E* x, E* y, int64_t n, TransposeIndex index) {
  OPF_GRID_STRIDE_LOOP(i, n) { y[i] = x[index.InputOffset(i)]; }
}

}  // namespace cuda
}  // namespace opforge
