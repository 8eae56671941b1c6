// CTCLoss on the GPU: a thread per sequence, the math of functors/ctc.h (the CPU kernel's,
// csrc/kernels/cpu/ctc_loss.cc). The host reads the sparse labels back, checks them and lays them out
// densely ([B, max_labels], with each sequence's length, or -1 for one whose loss is 0 by
// ignore_longer_outputs_than_inputs), and gives each sequence its work rows in double (opforge/kernels/gpu/ctc_loss.py).
#include "opforge/cuda.h"
#include "opforge/functors/ctc.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void CtcLossKernel(const T* x, const int32_t* labels, const int64_t* label_lengths, const int32_t* seq_len,
                              T* loss, T* grad, double* y, double* alpha_in, double* beta, double* prev, double* acc,
                              int64_t batch,
                              int64_t classes, int64_t max_labels, int64_t max_time, int merge_repeated) {
  OPF_GRID_STRIDE_LOOP(b, batch) {
    const int64_t length = label_lengths[b];
    if (length < 0) {
      loss[b] = Store<T>(compute_t<T>(0));
      continue;
    }
    const CtcLabels l{labels + b * max_labels, length, static_cast<int32_t>(classes - 1), merge_repeated != 0};
    const int64_t states = 2 * max_labels + 1;
    const double nll = CtcSequence<T, double>(x + b * classes, batch * classes, classes, seq_len[b], l,
                                              y + b * max_time * classes, alpha_in + b * max_time * states,
                                              beta + b * max_time * states, prev + b * states, acc + b * classes,
                                              grad + b * classes);
    loss[b] = Store<T>(static_cast<compute_t<T>>(nll));
  }
}

}  // namespace cuda
}  // namespace opforge
