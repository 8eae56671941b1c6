// CTCLoss(preprocess_collapse_repeated, ctc_merge_repeated, ignore_longer_outputs_than_inputs)(x,
// labels_indices, labels_values, sequence_length) -> (loss [B], gradient [T, B, C]): x holds the logits of
// max_time T frames of B sequences over C classes, the last class the blank; the labels are a sparse
// [B, *] matrix (indices (batch, position), int64; values int32 in [0, C - 1), values at or above C - 1 padding
// the end of a row). float16 computes in double as the others. The math of one sequence
// is functors/ctc.h (shared with csrc/kernels/cuda/ctc_loss.cu); sequences split over threads.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/functors/ctc.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// Each sequence's labels, read from the sparse (indices, values) pair and checked: positions 0, 1, ... of
// every batch row, values >= 0; a value at or above the blank is padding that ends its row (MindSpore's
// kernels read it so: the model zoo pads every row with the blank), a label after it an error; collapsed
// (preprocess_collapse_repeated) when asked.
std::vector<std::vector<int32_t>> DenseLabels(const std::string& op, const int64_t* indices, const int32_t* values,
                                              int64_t n, int64_t batch, int32_t blank, bool collapse) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> rows(static_cast<size_t>(batch));  // (position, i)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = indices[2 * i], pos = indices[2 * i + 1];
    OPF_CHECK(b >= 0 && b < batch, "For '" << op << "', labels_indices[" << i << "] names batch " << b
                                           << ", but the batch has " << batch << " sequences.");
    OPF_CHECK(values[i] >= 0, "For '" << op << "', labels_values[" << i << "] must be in [0, " << blank
                                      << ") (the last class, " << blank << ", is the blank; values at or above it "
                                      << "pad the end of a row), but got " << values[i] << ".");
    rows[static_cast<size_t>(b)].emplace_back(pos, i);
  }
  std::vector<std::vector<int32_t>> labels(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    auto& row = rows[static_cast<size_t>(b)];
    std::sort(row.begin(), row.end());
    int64_t padding_from = -1;  // the position where the row's padding starts
    for (size_t k = 0; k < row.size(); ++k) {
      const int64_t pos = row[k].first, i = row[k].second;
      OPF_CHECK(pos == static_cast<int64_t>(k),
                "For '" << op << "', the labels of batch " << b << " must sit at positions 0, 1, ..., "
                        << row.size() - 1 << " of labels_indices, but position " << pos << " is there.");
      if (values[i] >= blank) {
        if (padding_from < 0) padding_from = pos;
        continue;
      }
      OPF_CHECK(padding_from < 0, "For '" << op << "', labels_values[" << i << "] = " << values[i] << " (batch " << b
                                          << ", position " << pos << ") follows the padding of its row (a value at "
                                          << "or above the blank, " << blank << ", at position " << padding_from
                                          << "): such values may only end a row's labels.");
      auto& out = labels[static_cast<size_t>(b)];
      if (!collapse || out.empty() || out.back() != values[i]) out.push_back(values[i]);
    }
  }
  return labels;
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
    const auto labels =
        DenseLabels(op_, args.input<int64_t>(1), args.input<int32_t>(2), labels_, batch_, blank, collapse_);
    std::vector<char> skip(static_cast<size_t>(batch_), 0);
    for (int64_t b = 0; b < batch_; ++b) {
      OPF_CHECK(seq_len[b] >= 0 && seq_len[b] <= time_, "For '" << op_ << "', sequence_length[" << b
                                                                << "] must be in [0, " << time_ << "], but got "
                                                                << seq_len[b] << ".");
      const auto& l = labels[static_cast<size_t>(b)];
      const CtcLabels cl{l.data(), static_cast<int64_t>(l.size()), blank, merge_};
      if (cl.RequiredFrames() > seq_len[b]) {
        OPF_CHECK(ignore_longer_, "For '" << op_ << "', the labels of batch " << b << " need "
                                          << cl.RequiredFrames() << " frames, but sequence_length[" << b << "] is "
                                          << seq_len[b] << " (ignore_longer_outputs_than_inputs=True gives them loss 0).");
        skip[static_cast<size_t>(b)] = 1;
      }
    }
    std::fill(grad, grad + time_ * batch_ * classes_, Store<T>(compute_t<T>(0)));
    const int64_t stride = batch_ * classes_;
    ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> y, alpha_in, beta, prev, acc(static_cast<size_t>(classes_));
      for (int64_t b = begin; b < end; ++b) {
        if (skip[static_cast<size_t>(b)]) {
          loss[b] = Store<T>(compute_t<T>(0));
          continue;
        }
        const auto& l = labels[static_cast<size_t>(b)];
        const CtcLabels cl{l.data(), static_cast<int64_t>(l.size()), blank, merge_};
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
