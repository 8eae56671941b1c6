// The softmax cross-entropy losses over logits [N, C] with the math of opforge/functors/softmax.h (as
// csrc/kernels/cpu/loss.cc): one thread per row, or for rows of many classes a block per row (the *Rows
// kernels: online max and sum merged by warp shuffles and shared memory, softmax.cuh):
//   SoftmaxCrossEntropyKernel: loss[i] = -sum(labels * log_softmax), backprop = softmax - labels;
//   SparseSoftmaxCrossEntropyGradKernel: (softmax - onehot(labels)) / N;
//   SparseSoftmaxCrossEntropyLossKernel: each row's -log_softmax[label] in double, whose mean the
//   passes of reduce.cuh take with RowLossMean (NaN for no rows).
// The host checked the labels are in [0, C); a row whose label is not gets NaN, never a stray read.
// Instantiated by name (opforge/kernels/gpu/loss.py registers which).
#include "opforge/cuda.h"
#include "opforge/functors/softmax.h"
#include "reduce.cuh"
#include "softmax.cuh"

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

// SoftmaxCrossEntropyKernel with a block of kBlock threads per row of c >= 1 classes.
template <typename T, int kBlock>
__global__ void SoftmaxCrossEntropyRowsKernel(const T* x, const T* labels, T* loss, T* backprop, int64_t n,
                                              int64_t c) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  __shared__ S cells[SoftmaxCells(kBlock)];
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const T* xr = x + r * c;
    const T* lr = labels + r * c;
    T* br = backprop + r * c;
    const SoftmaxRowStats<T> st = BlockSoftmaxStats<T, kBlock>(xr, c, cells);
    const S log_sum = math::log(st.sum), inv = S(1) / st.sum;
    S acc = 0;
    for (int64_t j = threadIdx.x; j < c; j += kBlock) {
      const C v = Load(xr[j]);
      const S label = static_cast<S>(Load(lr[j]));
      acc += label * LogSoftmaxOf(v, st, log_sum);
      br[j] = Store<T>(static_cast<C>(SoftmaxOf(v, st, inv) - label));
    }
    acc = BlockSum<S, kBlock>(acc, cells);
    if (threadIdx.x == 0) loss[r] = Store<T>(static_cast<C>(-acc));
    __syncthreads();  // the shared cells are the next row's
  }
}

// SparseSoftmaxCrossEntropyGradKernel with a block per row of c >= 1 classes.
template <typename T, typename L, int kBlock>
__global__ void SparseSoftmaxCrossEntropyGradRowsKernel(const T* x, const L* labels, T* grad, int64_t n, int64_t c) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  __shared__ S cells[SoftmaxCells(kBlock)];
  const S scale = S(1) / static_cast<S>(n);
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const T* xr = x + r * c;
    T* gr = grad + r * c;
    if (!ValidLabel(labels[r], c)) {  // the same for the whole block: no barrier is skipped by some only
      for (int64_t j = threadIdx.x; j < c; j += kBlock) gr[j] = Store<T>(limits::QuietNaN<C>());
      continue;
    }
    const int64_t label = static_cast<int64_t>(labels[r]);
    const SoftmaxRowStats<T> st = BlockSoftmaxStats<T, kBlock>(xr, c, cells);
    const S inv = S(1) / st.sum;
    for (int64_t j = threadIdx.x; j < c; j += kBlock) {
      const S p = SoftmaxOf(Load(xr[j]), st, inv);
      gr[j] = Store<T>(static_cast<C>((p - (j == label ? S(1) : S(0))) * scale));
    }
    __syncthreads();
  }
}

// SparseSoftmaxCrossEntropyLossKernel with a block per row of c >= 1 classes.
template <typename T, typename L, int kBlock>
__global__ void SparseSoftmaxCrossEntropyLossRowsKernel(const T* x, const L* labels, double* row_loss, int64_t n,
                                                        int64_t c) {
  using S = acc_t<T>;
  __shared__ S cells[SoftmaxCells(kBlock)];
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    if (!ValidLabel(labels[r], c)) {  // the same for the whole block
      if (threadIdx.x == 0) row_loss[r] = limits::QuietNaN<double>();
      continue;
    }
    const T* xr = x + r * c;
    const SoftmaxRowStats<T> st = BlockSoftmaxStats<T, kBlock>(xr, c, cells);
    if (threadIdx.x == 0) {
      const S loss = (math::log(st.sum) + static_cast<S>(st.max)) - static_cast<S>(Load(xr[labels[r]]));
      row_loss[r] = static_cast<double>(loss);
    }
    __syncthreads();
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
