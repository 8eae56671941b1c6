// The softmax cross-entropy losses over logits [N, C], one thread per row, with the math of
// opforge/functors/softmax.h (as csrc/kernels/cpu/loss.cc):
//   SoftmaxCrossEntropyKernel: loss[i] = -sum(labels * log_softmax), backprop = softmax - labels;
//   SparseSoftmaxCrossEntropyGradKernel: (softmax - onehot(labels)) / N;
//   SparseSoftmaxCrossEntropyLossKernel: each row's -log_softmax[label] in double, whose mean the
//   passes of reduce.cuh take with RowLossMean (NaN for no rows).
// The host checked the labels are in [0, C); a row whose label is not gets NaN, never a stray read.
// Instantiated by name (opforge/kernels/gpu/loss.py registers which).
#include "opforge/cuda.h"
#include "opforge/functors/softmax.h"
#include "reduce.cuh"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void SoftmaxCrossEntropyKernel(const T* x, const T* labels, T* loss, T* backprop, int64_t n, int64_t c) {
  using C = compute_t<T>;
  OPF_GRID_STRIDE_LOOP(i, n) {
    if (c == 0) {  // an empty sum: the loss is 0 and there is nothing to differentiate
      loss[i] = Store<T>(C(0));
      continue;
    }
    loss[i] = Store<T>(SoftmaxCrossEntropyRow(x + i * c, labels + i * c, backprop + i * c, c));
  }
}

template <typename L>
OPF_HD bool ValidLabel(L label, int64_t c) {
  return static_cast<int64_t>(label) >= 0 && static_cast<int64_t>(label) < c;
}

template <typename T, typename L>
__global__ void SparseSoftmaxCrossEntropyGradKernel(const T* x, const L* labels, T* grad, int64_t n, int64_t c) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  const S scale = S(1) / static_cast<S>(n);  // n > 0: a launch has rows
  OPF_GRID_STRIDE_LOOP(i, n) {
    const T* xi = x + i * c;
    T* gi = grad + i * c;
    const int64_t label = static_cast<int64_t>(labels[i]);
    if (!ValidLabel(labels[i], c)) {
      for (int64_t j = 0; j < c; ++j) gi[j] = Store<T>(limits::QuietNaN<C>());
      continue;
    }
    const SoftmaxRowStats<T> st = SoftmaxStats(xi, c, 1);
    const S inv = S(1) / st.sum;
    for (int64_t j = 0; j < c; ++j) {
      const S p = SoftmaxOf(Load(xi[j]), st, inv);
      gi[j] = Store<T>(static_cast<C>((p - (j == label ? S(1) : S(0))) * scale));
    }
  }
}

template <typename T, typename L>
__global__ void SparseSoftmaxCrossEntropyLossKernel(const T* x, const L* labels, double* row_loss, int64_t n,
                                                    int64_t c) {
  using S = acc_t<T>;
  OPF_GRID_STRIDE_LOOP(i, n) {
    if (!ValidLabel(labels[i], c)) {
      row_loss[i] = limits::QuietNaN<double>();
      continue;
    }
    const T* xi = x + i * c;
    const SoftmaxRowStats<T> st = SoftmaxStats(xi, c, 1);
    // -log_softmax[label] = log(s) + max - x[label]
    const S loss = (math::log(st.sum) + static_cast<S>(st.max)) - static_cast<S>(Load(xi[labels[i]]));
    row_loss[i] = static_cast<double>(loss);
  }
}

// The mean of the row losses (doubles) as T: a reducer for the passes of reduce.cuh.
template <typename T>
struct RowLossMean {
  using A = double;
  static OPF_HD A Identity() { return 0.0; }
  static OPF_HD A Widen(double v) { return v; }
  static OPF_HD A Combine(A a, A b) { return a + b; }
  static OPF_HD T Finish(A total, int64_t n) {
    return Store<T>(static_cast<compute_t<T>>(total / static_cast<double>(n)));
  }
  static OPF_HD T Empty() { return Store<T>(limits::QuietNaN<compute_t<T>>()); }
};

}  // namespace cuda
}  // namespace opforge
