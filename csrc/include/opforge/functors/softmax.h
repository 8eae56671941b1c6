// The per-row math of Softmax, LogSoftmax and the softmax cross-entropy losses, shared by the CPU
// kernels (csrc/kernels/cpu/loss.cc) and the CUDA kernels (csrc/kernels/cuda/softmax.cu, loss.cu):
//   m = max(x), s = sum(exp(x - m));  softmax = exp(x - m) / s;  log_softmax = (x - m) - log(s).
// Values are computed in compute_t<T> and the sums of exponentials in acc_t<T> (float for the half
// types). A row is n elements x[0], x[stride], ...; host and device, no standard library.
#pragma once

#include "opforge/functors/reduce.h"
#include "opforge/half.h"
#include "opforge/math.h"

namespace opforge {

template <typename T>
struct SoftmaxRowStats {
  compute_t<T> max;
  acc_t<T> sum;  // of exp(x - max)
};

// max and sum(exp(x - max)) of a row of n >= 1 elements. A NaN in x[0] stays the max; a later one
// makes the sum NaN: either way the row comes out NaN, as the NumPy formula gives.
template <typename T>
OPF_HD SoftmaxRowStats<T> SoftmaxStats(const T* x, int64_t n, int64_t stride) {
  using C = compute_t<T>;
  C m = Load(x[0]);
  for (int64_t k = 1; k < n; ++k) {
    const C v = Load(x[k * stride]);
    m = v > m ? v : m;
  }
  acc_t<T> s = 0;
  for (int64_t k = 0; k < n; ++k) s += static_cast<acc_t<T>>(math::exp(Load(x[k * stride]) - m));
  return {m, s};
}

// exp(v - max) / sum, given inv = 1 / sum.
template <typename T>
OPF_HD acc_t<T> SoftmaxOf(compute_t<T> v, const SoftmaxRowStats<T>& st, acc_t<T> inv) {
  return static_cast<acc_t<T>>(math::exp(v - st.max)) * inv;
}

// (v - max) - log(sum), given log_sum = log(sum).
template <typename T>
OPF_HD acc_t<T> LogSoftmaxOf(compute_t<T> v, const SoftmaxRowStats<T>& st, acc_t<T> log_sum) {
  using S = acc_t<T>;
  return (static_cast<S>(v) - static_cast<S>(st.max)) - log_sum;
}

}  // namespace opforge
