// Softmax cross-entropy losses over logits [N, C] (rows are independent and run in parallel):
//   SoftmaxCrossEntropyWithLogits(logits, labels [N, C]) -> (loss [N], backprop [N, C]),
//     loss = -sum(labels * log_softmax(logits), axis=1), backprop = softmax(logits) - labels;
//   SparseSoftmaxCrossEntropyWithLogits(logits, labels [N] int) with the attr "is_grad":
//     false: mean(-log_softmax(logits)[i, labels[i]]) as a 0-d tensor (NaN when N = 0),
//     true:  (softmax(logits) - onehot(labels)) / N, the gradient of that mean.
// Labels outside [0, C) are an error, checked at every launch before anything is read.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "opforge/kernel.h"
#include "opforge/parallel.h"
#include "opforge/functors/softmax.h"
#include "kernels/cpu/softmax_rows.h"

namespace opforge {
namespace {

template <typename T>
using sum_t = acc_t<T>;  // sums of exponentials

// logits must be 2-D [N, C]; returns {N, C}.
std::vector<int64_t> CheckLogits(const KernelContext& ctx) {
  const TensorMeta& logits = ctx.input(0);
  OPF_CHECK(logits.ndim() == 2, "For '" << ctx.op_name() << "', the 'logits' must be 2-D [N, C], but got shape "
                                         << ShapeToString(logits.shape) << ".");
  return logits.shape;
}

void CheckOutput(const KernelContext& ctx, size_t i, const char* name, const std::vector<int64_t>& shape) {
  const TensorMeta& in = ctx.input(0);
  const TensorMeta& out = ctx.output(i);
  OPF_CHECK(out.shape == shape && out.dtype == in.dtype,
            "For '" << ctx.op_name() << "', the '" << name << "' output must be " << TypeIdName(in.dtype)
                    << ShapeToString(shape) << ", but got " << TypeIdName(out.dtype) << ShapeToString(out.shape)
                    << ".");
}

template <typename T>
class SoftmaxCrossEntropyCpuKernel : public CpuKernel {
  using C = compute_t<T>;
  using S = sum_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.num_inputs() == 2 && ctx.num_outputs() == 2,
              "For '" << ctx.op_name() << "', the kernel takes 2 inputs and 2 outputs, but got " << ctx.num_inputs()
                      << " and " << ctx.num_outputs() << ".");
    const std::vector<int64_t> shape = CheckLogits(ctx);
    const TensorMeta& labels = ctx.input(1);
    OPF_CHECK(labels.shape == shape && labels.dtype == ctx.input(0).dtype,
              "For '" << ctx.op_name() << "', the 'labels' must be " << TypeIdName(ctx.input(0).dtype)
                      << ShapeToString(shape) << " like 'logits', but got " << TypeIdName(labels.dtype)
                      << ShapeToString(labels.shape) << ".");
    CheckOutput(ctx, 0, "loss", {shape[0]});
    CheckOutput(ctx, 1, "backprop", shape);
    n_ = shape[0];
    c_ = shape[1];
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* labels = args.input<T>(1);
    T* loss = args.output<T>(0);
    T* backprop = args.output<T>(1);
    const int64_t c = c_;
    if (c == 0) {  // an empty sum: the loss is 0 and there is nothing to differentiate
      std::fill(loss, loss + n_, Store<T>(C(0)));
      return;
    }
    ParallelFor(n_, std::max<int64_t>(1, kParallelGrain / c), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        loss[i] = Store<T>(SoftmaxCrossEntropyRow(x + i * c, labels + i * c, backprop + i * c, c));
      }
    });
  }

 private:
  int64_t n_ = 0, c_ = 0;
};

// The gradient rows of SparseSoftmaxCrossEntropyWithLogits from SoftmaxRowsExp's scratch:
//   g = (softmax(x) - onehot(label)) * scale.
template <typename T, typename L>
OPF_VECTOR_CLONES void SparseGradRows(const L* labels, T* g, int64_t rows, int64_t c, acc_t<T> scale,
                                      const SoftmaxScratch<T>& sc) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const C* e = sc.e.data() + r * c;
    T* gr = g + r * c;
    const C inv = static_cast<C>(S(1) / sc.s[r]), step = static_cast<C>(scale);  // in compute_t, as Softmax
    for (int64_t j = 0; j < c; ++j) gr[j] = Store<T>((e[j] * inv) * step);
    const int64_t label = static_cast<int64_t>(labels[r]);
    gr[label] = Store<T>((e[label] * inv - C(1)) * step);
  }
}

template <typename T, typename L>
class SparseSoftmaxCrossEntropyCpuKernel : public CpuKernel {
  using C = compute_t<T>;
  using S = sum_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.num_inputs() == 2 && ctx.num_outputs() == 1,
              "For '" << ctx.op_name() << "', the kernel takes 2 inputs and 1 output, but got " << ctx.num_inputs()
                      << " and " << ctx.num_outputs() << ".");
    const std::vector<int64_t> shape = CheckLogits(ctx);
    const TensorMeta& labels = ctx.input(1);
    OPF_CHECK(labels.shape == std::vector<int64_t>{shape[0]},
              "For '" << ctx.op_name() << "', the 'labels' must have shape [" << shape[0]
                      << "] (one class index per row of 'logits' " << ShapeToString(shape) << "), but got "
                      << ShapeToString(labels.shape) << ".");
    is_grad_ = ctx.HasAttr("is_grad") && ctx.GetBool("is_grad");
    CheckOutput(ctx, 0, is_grad_ ? "grad" : "loss", is_grad_ ? shape : std::vector<int64_t>{});
    n_ = shape[0];
    c_ = shape[1];
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const L* labels = args.input<L>(1);
    T* out = args.output<T>(0);
    const int64_t n = n_, c = c_;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t label = static_cast<int64_t>(labels[i]);
      OPF_CHECK(label >= 0 && label < c, "For 'SparseSoftmaxCrossEntropyWithLogits', every 'labels' value must be a "
                                         "class index in [0, "
                                             << c << "), but got labels[" << i << "] = " << label << ".");
    }
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(c, 1));
    if (c == 0) {  // no class to pick: only an empty batch gets here (labels were checked)
      if (!is_grad_) out[0] = Store<T>(static_cast<C>(std::numeric_limits<double>::quiet_NaN()));
      return;
    }
    if (is_grad_) {
      const S scale = n > 0 ? S(1) / static_cast<S>(n) : S(0);
      ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
        ForSoftmaxBlocks(x, c, begin, end, [&](int64_t r0, int64_t rows, const SoftmaxScratch<T>& sc) {
          SparseGradRows(labels + r0, out + r0 * c, rows, c, scale, sc);
        });
      });
      return;
    }
    // Row losses first (in parallel), then their mean, summed in order so it is reproducible.
    std::vector<double> row_loss(static_cast<size_t>(n));
    ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
      ForSoftmaxBlocks(x, c, begin, end, [&](int64_t r0, int64_t rows, const SoftmaxScratch<T>& sc) {
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = r0 + r;
          const int64_t label = static_cast<int64_t>(labels[i]);
          // -log_softmax[label] = log(s) + max - x[label]
          const S loss = (std::log(sc.s[r]) + static_cast<S>(sc.m[r])) - static_cast<S>(Load(x[i * c + label]));
          row_loss[i] = static_cast<double>(loss);
        }
      });
    });
    double total = 0;
    for (double l : row_loss) total += l;
    const double mean = n > 0 ? total / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
    out[0] = Store<T>(static_cast<C>(mean));
  }

 private:
  bool is_grad_ = false;
  int64_t n_ = 0, c_ = 0;
};

#define REG_SCE(T, ID)                                                                              \
  MS_REG_CPU_KERNEL(SoftmaxCrossEntropyWithLogits,                                                  \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), \
                    SoftmaxCrossEntropyCpuKernel<T>)
#define REG_SPARSE_SCE(T, ID, L, LID)                                                          \
  MS_REG_CPU_KERNEL(SparseSoftmaxCrossEntropyWithLogits,                                       \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(LID).AddOutputAttr(ID), \
                    SparseSoftmaxCrossEntropyCpuKernel<T, L>)

REG_SCE(float16, kNumberTypeFloat16);
REG_SCE(float, kNumberTypeFloat32);
REG_SCE(double, kNumberTypeFloat64);

REG_SPARSE_SCE(float16, kNumberTypeFloat16, int32_t, kNumberTypeInt32);
REG_SPARSE_SCE(float16, kNumberTypeFloat16, int64_t, kNumberTypeInt64);
REG_SPARSE_SCE(float, kNumberTypeFloat32, int32_t, kNumberTypeInt32);
REG_SPARSE_SCE(float, kNumberTypeFloat32, int64_t, kNumberTypeInt64);
REG_SPARSE_SCE(double, kNumberTypeFloat64, int32_t, kNumberTypeInt32);
REG_SPARSE_SCE(double, kNumberTypeFloat64, int64_t, kNumberTypeInt64);

}  // namespace
}  // namespace opforge
