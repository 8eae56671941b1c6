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

// Softmax statistics built online, in pieces merged in any tree (a GPU block's threads and warps): a
// piece is (max, sum of exp(x - max)); sum == 0 marks an empty piece (a non-empty one has sum >= 1, or
// NaN). Merging gives the same row result as SoftmaxStats: NaN and +inf make the row NaN, -inf elements
// add 0 (a piece of only -inf counts them, so a row of only -inf is NaN as the formula gives).
template <typename S>
struct SoftmaxPiece {
  S max;
  S sum;
};

template <typename S>
OPF_HD SoftmaxPiece<S> SoftmaxMerge(SoftmaxPiece<S> a, SoftmaxPiece<S> b) {
  if (a.sum == S(0)) return b;
  if (b.sum == S(0)) return a;
  const S neg_inf = -limits::Infinity<S>();
  if (a.max == neg_inf && b.max == neg_inf) return {neg_inf, a.sum + b.sum};  // counted, weighed later
  const S m = b.max > a.max ? b.max : a.max;  // a NaN max stays (and makes the sum NaN)
  return {m, a.sum * static_cast<S>(math::exp(a.max - m)) + b.sum * static_cast<S>(math::exp(b.max - m))};
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

// The same two in one type C throughout (the GPU's register kernel keeps float32 rows in float: its
// sums of exp alone are widened, once per thread), given max, inv = 1 / sum or log_sum = log(sum).
template <typename C>
OPF_HD C SoftmaxOf(C v, C max, C inv) {
  return math::exp(v - max) * inv;
}

template <typename C>
OPF_HD C LogSoftmaxOf(C v, C max, C log_sum) {
  return (v - max) - log_sum;
}

// One row of SoftmaxCrossEntropyWithLogits: returns -sum(labels * log_softmax(x)) and writes
// backprop = softmax(x) - labels; c >= 1 elements, contiguous.
template <typename T>
OPF_HD compute_t<T> SoftmaxCrossEntropyRow(const T* x, const T* labels, T* backprop, int64_t c) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  const SoftmaxRowStats<T> st = SoftmaxStats(x, c, 1);
  const S log_sum = math::log(st.sum), inv = S(1) / st.sum;
  S acc = 0;
  for (int64_t j = 0; j < c; ++j) {
    const C v = Load(x[j]);
    const S label = static_cast<S>(Load(labels[j]));
    acc += label * LogSoftmaxOf(v, st, log_sum);
    backprop[j] = Store<T>(static_cast<C>(SoftmaxOf(v, st, inv) - label));
  }
  return static_cast<C>(-acc);
}

}  // namespace opforge
