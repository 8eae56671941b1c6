// Randn, RandExt, RandInt, RandGamma and RandPoisson on the GPU (the CPU's csrc/kernels/cpu/random.cc): one thread per element, each
// value a pure function of (seed, offset, i) (functors/random.h). The seed and offset are one int64 each in
// device memory (a counter a trace moves on between replays), so each thread makes the key itself.
#include "opforge/cuda.h"
#include "opforge/functors/random.h"
#include "opforge/half.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void RandnKernel(const int64_t* seed, const int64_t* offset, T* out, int64_t n) {
  const uint64_t key = DropoutKey(*seed, *offset);
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = Store<T>(StandardNormalAt<compute_t<T>>(key, i)); }
}

template <typename T>
__global__ void RandExtKernel(const int64_t* seed, const int64_t* offset, T* out, int64_t n) {
  const uint64_t key = DropoutKey(*seed, *offset);
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = Store<T>(static_cast<compute_t<T>>(Uniform01(key, i))); }
}

template <typename T>
__global__ void RandIntKernel(const int64_t* seed, const int64_t* offset, T* out, int64_t n, int64_t low,
                              uint64_t range) {
  const uint64_t key = DropoutKey(*seed, *offset);
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = static_cast<T>(UniformIntAt(key, i, low, range)); }
}

// The distributions' parameters come first, then the seed and offset (the CPU kernels' input order).
template <typename T>
__global__ void RandGammaKernel(const T* alpha, const int64_t* seed, const int64_t* offset, T* out, int64_t n) {
  const uint64_t key = DropoutKey(*seed, *offset);
  OPF_GRID_STRIDE_LOOP(i, n) {
    out[i] = Store<T>(static_cast<compute_t<T>>(StandardGammaAt(key, i, static_cast<double>(Load(alpha[i])))));
  }
}

template <typename R, typename Out>
__global__ void RandPoissonKernel(const R* rate, const int64_t* seed, const int64_t* offset, Out* out, int64_t n) {
  const uint64_t key = DropoutKey(*seed, *offset);
  OPF_GRID_STRIDE_LOOP(i, n) { out[i] = PoissonAs<Out>(key, i, static_cast<double>(Load(rate[i]))); }
}

}  // namespace cuda
}  // namespace opforge
