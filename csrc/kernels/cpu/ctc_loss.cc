// CTCLoss(preprocess_collapse_repeated, ctc_merge_repeated, ignore_longer_outputs_than_inputs)(x,
// labels_indices, labels_values, sequence_length) -> (loss [B], gradient [T, B, C]): x holds the logits of
// max_time T frames of B sequences over C classes, the last class the blank; the labels are a sparse
// [B, *] matrix (indices (batch, position), int64; values int32 in [0, C - 1), values at or above C - 1 padding
// the end of a row). float16 computes in double as the others. The math of one sequence
// is functors/ctc.h (shared with csrc/kernels/cuda/ctc_loss.cu); sequences split over threads.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "opforge/functors/ctc.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// CtcLayout's error as the KernelError of the operator `op`.
[[noreturn]] void RaiseCtcError(const std::string& op, const CtcLayoutError& e, const CtcLayoutArgs& a) {
  const int32_t blank = a.blank;
  std::ostringstream m;
  m << "For '" << op << "', ";
  switch (e.kind) {
    case kCtcBatch:
      m << "labels_indices[" << e.index << "] names batch " << e.batch << ", but the batch has " << a.batch
        << " sequences.";
      break;
    case kCtcNegative:
      m << "labels_values[" << e.index << "] must be in [0, " << blank << ") (the last class, " << blank
        << ", is the blank; values at or above it pad the end of a row), but got " << e.value << ".";
      break;
    case kCtcPosition:
      m << "the labels of batch " << e.batch << " must sit at positions 0, 1, ..., " << e.other - 1
        << " of labels_indices, but position " << e.position << " is there.";
      break;
    case kCtcAfterPadding:
      m << "labels_values[" << e.index << "] = " << e.value << " (batch " << e.batch << ", position " << e.position
        << ") follows the padding of its row (a value at or above the blank, " << blank << ", at position "
        << e.other << "): such values may only end a row's labels.";
      break;
    case kCtcSeqLen:
      m << "sequence_length[" << e.batch << "] must be in [0, " << a.time << "], but got " << e.value << ".";
      break;
    default:  // kCtcTooLong
      m << "the labels of batch " << e.batch << " need " << e.value << " frames, but sequence_length[" << e.batch
        << "] is " << e.other << " (ignore_longer_outputs_than_inputs=True gives them loss 0).";
  }
  throw KernelError(m.str());
}

template <typename T>
class CtcLossCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    const auto& x = ctx.input(0).shape;
    OPF_CHECK(x.size() == 3, "For '" << op_ << "', the 'x' must be 3-D [max_time, batch, num_classes], but got shape "
                                     << ShapeToString(x) << ".");
    time_ = x[0];
    batch_ = x[1];
    classes_ = x[2];
    OPF_CHECK(classes_ >= 1, "For '" << op_ << "', the 'x' needs at least 1 class (the blank), but got shape "
                                     << ShapeToString(x) << ".");
    labels_ = ctx.input(2).shape.empty() ? 0 : ctx.input(2).shape[0];
    collapse_ = ctx.GetBool("preprocess_collapse_repeated");
    merge_ = ctx.GetBool("ctc_merge_repeated");
    ignore_longer_ = ctx.GetBool("ignore_longer_outputs_than_inputs");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const int32_t* seq_len = args.input<int32_t>(3);
    T* loss = args.output<T>(0);
    T* grad = args.output<T>(1);
    const int32_t blank = static_cast<int32_t>(classes_ - 1);
    const CtcLayoutArgs layout{args.input<int64_t>(1), args.input<int32_t>(2), seq_len, labels_, batch_, time_,
                               blank, collapse_, merge_, ignore_longer_};
    std::vector<int32_t> labels(static_cast<size_t>(labels_));
    std::vector<int64_t> start(static_cast<size_t>(batch_)), length(start.size()), states(start.size() + 1);
    const CtcLayoutError error = CtcLayout(layout, labels.data(), start.data(), length.data(), states.data());
    if (error.kind != kCtcFine) RaiseCtcError(op_, error, layout);
    std::fill(grad, grad + time_ * batch_ * classes_, Store<T>(compute_t<T>(0)));
    const int64_t stride = batch_ * classes_;
    ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> y, alpha_in, beta, prev, acc(static_cast<size_t>(classes_));
      for (int64_t b = begin; b < end; ++b) {
        if (length[b] < 0) {
          loss[b] = Store<T>(compute_t<T>(0));
          continue;
        }
        const CtcLabels cl{labels.data() + start[b], length[b], blank, merge_};
        const int64_t steps = seq_len[b];
        y.resize(static_cast<size_t>(std::max<int64_t>(steps, 1) * classes_));
        alpha_in.resize(static_cast<size_t>(std::max<int64_t>(steps, 1) * cl.states()));
        beta.resize(alpha_in.size());
        prev.resize(static_cast<size_t>(cl.states()));
        const double nll = CtcSequence<T, double>(x + b * classes_, stride, classes_, steps, cl, y.data(),
                                                  alpha_in.data(), beta.data(), prev.data(), acc.data(),
                                                  grad + b * classes_);
        loss[b] = Store<T>(static_cast<compute_t<T>>(nll));
      }
    });
  }

 private:
  std::string op_;
  int64_t time_ = 0, batch_ = 0, classes_ = 0, labels_ = 0;
  bool collapse_ = false, merge_ = true, ignore_longer_ = false;
};

#define REG_CTC_LOSS(T, ID)                                                                                \
  MS_REG_CPU_KERNEL(CTCLoss,                                                                               \
                    KernelAttr()                                                                           \
                        .AddInputAttr(ID)                                                                  \
                        .AddInputAttr(kNumberTypeInt64)                                                    \
                        .AddInputAttr(kNumberTypeInt32)                                                    \
                        .AddInputAttr(kNumberTypeInt32)                                                    \
                        .AddOutputAttr(ID)                                                                 \
                        .AddOutputAttr(ID),                                                                \
                    CtcLossCpuKernel<T>)

REG_CTC_LOSS(float16, kNumberTypeFloat16);
REG_CTC_LOSS(float, kNumberTypeFloat32);
REG_CTC_LOSS(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
