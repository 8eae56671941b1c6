// CTCLoss on the GPU, launched from C with no read-back: CtcLayoutKernel (one thread) checks the sparse labels
// and the sequence lengths and lays them out row after row (functors/ctc.h's CtcLayout, the CPU kernel's first
// step), flagging a bad call for the host to raise the CPU's error after the launches; CtcLossKernel takes a
// thread per sequence with the CPU's math (CtcSequence), its work rows in double at the row's offsets.
#include "opforge/cuda.h"
#include "opforge/functors/ctc.h"

namespace opforge {
namespace cuda {

// `flag` gets 0 where the call is bad (it holds 1, none, to begin with: range_check.py's flag word).
__global__ void CtcLayoutKernel(const int64_t* indices, const int32_t* values, const int32_t* seq_len,
                                int32_t* labels, int64_t* start, int64_t* length, int64_t* states, uint64_t* flag,
                                int64_t n, int64_t batch, int64_t time, int32_t blank, int collapse, int merge,
                                int ignore_longer) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const CtcLayoutArgs a{indices, values, seq_len, n, batch, time, blank, collapse != 0, merge != 0,
                        ignore_longer != 0};
  if (CtcLayout(a, labels, start, length, states).kind == kCtcFine) return;
  for (int64_t b = 0; b < batch; ++b) length[b] = -1;  // nothing computed: the host raises
  *flag = 0;
}

// Sequence b: its labels at labels + start[b] (length[b] of them, -1: loss 0), its states at states[b] of
// the rows' 2 n + batch (alpha_in and beta: max_time rows of them each).
template <typename T>
__global__ void CtcLossKernel(const T* x, const int32_t* labels, const int64_t* start, const int64_t* length,
                              const int64_t* states, const int32_t* seq_len, T* loss, T* grad, double* y,
                              double* alpha_in, double* beta, double* prev, double* acc, int64_t batch,
                              int64_t classes, int64_t max_time, int merge_repeated) {
  OPF_GRID_STRIDE_LOOP(b, batch) {
    if (length[b] < 0) {
      loss[b] = Store<T>(compute_t<T>(0));
      continue;
    }
    const CtcLabels l{labels + start[b], length[b], static_cast<int32_t>(classes - 1), merge_repeated != 0};
    const int64_t rows = max_time * states[b];
    const double nll = CtcSequence<T, double>(x + b * classes, batch * classes, classes, seq_len[b], l,
                                              y + b * max_time * classes, alpha_in + rows, beta + rows,
                                              prev + states[b], acc + b * classes, grad + b * classes);
    loss[b] = Store<T>(static_cast<compute_t<T>>(nll));
  }
}

}  // namespace cuda
}  // namespace opforge
