// CumSum, Dropout and DropoutGrad on the GPU with the math of opforge/functors/scan.h and random.h
// (shared with csrc/kernels/cpu/cumsum.cc): one thread per line for CumSum (x viewed as
// [outer, n, inner]), one per element for Dropout (the counter-based generator gives every backend the
// same mask for the same seeds). Instantiated by name (opforge/kernels/gpu/cumsum.py).
#include "opforge/cuda.h"
#include "opforge/functors/random.h"
#include "opforge/functors/scan.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void CumSumKernel(const T* x, T* y, int64_t lines, int64_t n, int64_t inner, int exclusive, int reverse) {
  OPF_GRID_STRIDE_LOOP(l, lines) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    CumSumLine(x + base, y + base, n, inner, exclusive != 0, reverse != 0);
  }
}

template <typename T>
__global__ void DropoutKernel(const T* x, T* out, T* mask, int64_t n, uint64_t key, double keep_prob) {
  using C = compute_t<T>;
  const C scale = static_cast<C>(1.0 / keep_prob);
  OPF_GRID_STRIDE_LOOP(i, n) {
    const bool keep = DropoutKeep(key, i, keep_prob);
    mask[i] = Store<T>(keep ? C(1) : C(0));
    out[i] = Store<T>(keep ? Load(x[i]) * scale : C(0));
  }
}

template <typename T>
__global__ void DropoutGradKernel(const T* dy, const T* mask, T* dx, int64_t n, double keep_prob) {
  using C = compute_t<T>;
  const C scale = static_cast<C>(1.0 / keep_prob);
  OPF_GRID_STRIDE_LOOP(i, n) { dx[i] = Store<T>(Load(dy[i]) * Load(mask[i]) * scale); }
}

}  // namespace cuda
}  // namespace opforge
