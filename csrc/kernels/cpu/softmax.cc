// Softmax and LogSoftmax along one axis (the attr "axis": an int or a 1-tuple), numerically stable:
//   m = max(x), s = sum(exp(x - m));  softmax = exp(x - m) / s;  log_softmax = (x - m) - log(s).
// -inf entries give exp 0; a row that is all -inf (or holds NaN or +inf) gives NaN, as the NumPy
// formula does. Independent rows run in parallel once there is enough work.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "opforge/kernel.h"
#include "opforge/parallel.h"
#include "opforge/functors/reduce.h"
#include "kernels/cpu/softmax_rows.h"

namespace opforge {
namespace {

template <typename T>
using sum_t = acc_t<T>;  // sums of exponentials

// Columns handled together when the axis is not innermost: the rows of a block are contiguous.
constexpr int64_t kBlock = 64;

// The input as [outer, n, inner] around the softmax axis.
struct AxisGeometry {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t numel() const { return outer * n * inner; }
};

AxisGeometry SoftmaxGeometry(const KernelContext& ctx) {
  const std::string& op = ctx.op_name();
  OPF_CHECK(ctx.num_inputs() == 1 && ctx.num_outputs() == 1,
            "For '" << op << "', the kernel takes 1 input and 1 output, but got " << ctx.num_inputs() << " and "
                    << ctx.num_outputs() << ".");
  const TensorMeta& x = ctx.input(0);
  const TensorMeta& y = ctx.output(0);
  OPF_CHECK(y.shape == x.shape && y.dtype == x.dtype,
            "For '" << op << "', the output must be " << TypeIdName(x.dtype) << ShapeToString(x.shape)
                    << " like 'logits', but got " << TypeIdName(y.dtype) << ShapeToString(y.shape) << ".");
  const std::vector<int64_t> axes = ctx.HasAttr("axis") ? ctx.GetInts("axis") : std::vector<int64_t>{-1};
  OPF_CHECK(axes.size() == 1, "For '" << op << "', the 'axis' must be one int, but got " << ShapeToString(axes) << ".");
  const int64_t nd = x.ndim();
  const int64_t range = std::max<int64_t>(nd, 1);  // a 0-d input is one row of one element
  int64_t axis = axes[0];
  OPF_CHECK(axis >= -range && axis < range, "For '" << op << "', the 'axis' must be in [" << -range << ", " << range
                                                    << ") for 'logits' of shape " << ShapeToString(x.shape)
                                                    << ", but got " << axis << ".");
  if (axis < 0) axis += range;
  AxisGeometry g;
  for (int64_t d = 0; d < nd; ++d) {
    if (d < axis) g.outer *= x.shape[d];
    if (d == axis) g.n = x.shape[d];
    if (d > axis) g.inner *= x.shape[d];
  }
  return g;
}

// The outputs of `rows` contiguous rows of n elements from SoftmaxRowsExp's scratch:
//   softmax = e * (1 / s);  log_softmax = (x - m) - log(s).
template <typename T, bool kLog>
OPF_VECTOR_CLONES void WriteRows(const T* x, T* y, int64_t rows, int64_t n, SoftmaxScratch<T>& sc) {
  using C = compute_t<T>;
  using S = sum_t<T>;
  // Per row, log(s) or 1 / s, in compute_t and for all the block's rows in one loop (float: vmath's log,
  // vectorised across rows, rather than libm's per row); per element in compute_t too (float32: 16 lanes,
  // no conversion to the double sums' type).
  C* per_row = sc.per_row.data();
  for (int64_t r = 0; r < rows; ++r) {
    per_row[r] = kLog ? math::log(static_cast<C>(sc.s[r])) : static_cast<C>(S(1) / sc.s[r]);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const C* e = sc.e.data() + r * n;
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const C m = sc.m[r], t = per_row[r];
    if constexpr (kLog) {
      for (int64_t k = 0; k < n; ++k) yr[k] = Store<T>((Load(xr[k]) - m) - t);
    } else {
      for (int64_t k = 0; k < n; ++k) yr[k] = Store<T>(e[k] * t);
    }
  }
}

// `width` columns of an [n, stride] block: row k of column j is x[k * stride + j].
template <typename T, bool kLog>
OPF_VECTOR_CLONES void Columns(const T* x, T* y, int64_t n, int64_t stride, int64_t width) {
  using C = compute_t<T>;
  using S = sum_t<T>;
  // For float and double, exp(x - m) is kept in the output between the passes; half types recompute it
  // rather than round it twice.
  constexpr bool kKeepExp = std::is_same_v<T, C>;
  C m[kBlock];
  S s[kBlock];
  for (int64_t j = 0; j < width; ++j) {
    m[j] = Load(x[j]);
    s[j] = 0;
  }
  for (int64_t k = 1; k < n; ++k) {
    const T* row = x + k * stride;
    for (int64_t j = 0; j < width; ++j) {
      const C v = Load(row[j]);
      m[j] = v > m[j] ? v : m[j];
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * stride;
    T* out = y + k * stride;
    for (int64_t j = 0; j < width; ++j) {
      const C e = math::exp(Load(row[j]) - m[j]);
      s[j] += static_cast<S>(e);
      if constexpr (!kLog && kKeepExp) out[j] = e;
    }
  }
  if constexpr (kLog) {
    for (int64_t j = 0; j < width; ++j) s[j] = math::log(s[j]);  // now log(s)
    for (int64_t k = 0; k < n; ++k) {
      const T* row = x + k * stride;
      T* out = y + k * stride;
      for (int64_t j = 0; j < width; ++j) {
        out[j] = Store<T>(static_cast<C>((static_cast<S>(Load(row[j])) - static_cast<S>(m[j])) - s[j]));
      }
    }
  } else {
    for (int64_t j = 0; j < width; ++j) s[j] = S(1) / s[j];  // now 1 / s
    for (int64_t k = 0; k < n; ++k) {
      const T* row = x + k * stride;
      T* out = y + k * stride;
      for (int64_t j = 0; j < width; ++j) {
        const C e = kKeepExp ? Load(out[j]) : math::exp(Load(row[j]) - m[j]);
        out[j] = Store<T>(static_cast<C>(static_cast<S>(e) * s[j]));
      }
    }
  }
}

template <typename T, bool kLog>
class SoftmaxCpuKernel : public CpuKernel {
  using C = compute_t<T>;
  using S = sum_t<T>;

 public:
  void Init(const KernelContext& ctx) override { g_ = SoftmaxGeometry(ctx); }

  void Launch(const KernelArgs& args) override {
    if (g_.numel() == 0) return;
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const AxisGeometry g = g_;
    if (g.inner == 1) {
      const int64_t grain = std::max<int64_t>(1, kParallelGrain / g.n);
      ParallelFor(g.outer, grain, [&](int64_t begin, int64_t end) {
        ForSoftmaxBlocks(x, g.n, begin, end, [&](int64_t r0, int64_t rows, SoftmaxScratch<T>& sc) {
          WriteRows<T, kLog>(x + r0 * g.n, y + r0 * g.n, rows, g.n, sc);
        });
      });
      return;
    }
    const int64_t blocks = (g.inner + kBlock - 1) / kBlock;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / (g.n * std::min(g.inner, kBlock)));
    ParallelFor(g.outer * blocks, grain, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / blocks, j0 = (t % blocks) * kBlock;
        const int64_t offset = o * g.n * g.inner + j0;
        Columns<T, kLog>(x + offset, y + offset, g.n, g.inner, std::min(kBlock, g.inner - j0));
      }
    });
  }

 private:
  AxisGeometry g_;
};

#define REG_SOFTMAX(OP, T, ID, LOG) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), SoftmaxCpuKernel<T, LOG>)

REG_SOFTMAX(Softmax, float16, kNumberTypeFloat16, false);
REG_SOFTMAX(Softmax, float, kNumberTypeFloat32, false);
REG_SOFTMAX(Softmax, double, kNumberTypeFloat64, false);
REG_SOFTMAX(LogSoftmax, float16, kNumberTypeFloat16, true);
REG_SOFTMAX(LogSoftmax, float, kNumberTypeFloat32, true);
REG_SOFTMAX(LogSoftmax, double, kNumberTypeFloat64, true);

}  // namespace
}  // namespace opforge
