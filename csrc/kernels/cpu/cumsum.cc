// CumSum and CumProd (exclusive, reverse)(x, axis), Cummax(axis)(x) and Cummin(axis)(x) -> (values, indices),
// Dropout(keep_prob, Seed0, Seed1)(x) -> (output, mask),
// DropoutExt(p)(x, seed, offset) -> (output, mask) and DropoutGrad(keep_prob)(dy, mask), with the math of
// opforge/functors/scan.h and random.h (shared with csrc/kernels/cuda/cumsum.cu).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/functors/random.h"
#include "opforge/functors/reduce.h"
#include "opforge/functors/scan.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// CumSum (R = SumReducer<T>) and CumProd (ProdReducer<T>).
template <typename T, typename R>
class CumScanCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const TensorMeta& x = ctx.input(0);
    OPF_CHECK(ctx.output(0).shape == x.shape, "For '" << op << "', the output shape must be "
                                                      << ShapeToString(x.shape) << ", but got "
                                                      << ShapeToString(ctx.output(0).shape) << ".");
    const int64_t nd = x.ndim(), range = std::max<int64_t>(nd, 1);
    std::vector<int64_t> axes = ctx.GetInts("axis");
    OPF_CHECK(axes.size() == 1, "For '" << op << "', the 'axis' must be one int, but got " << ShapeToString(axes)
                                        << ".");
    int64_t axis = axes[0];
    OPF_CHECK(axis >= -range && axis < range, "For '" << op << "', the 'axis' must be in [" << -range << ", "
                                                      << range << ") for input shape " << ShapeToString(x.shape)
                                                      << ", but got " << axis << ".");
    if (axis < 0) axis += range;
    outer_ = n_ = inner_ = 1;
    for (int64_t d = 0; d < nd; ++d) (d < axis ? outer_ : d == axis ? n_ : inner_) *= x.shape[d];
    exclusive_ = ctx.HasAttr("exclusive") && ctx.GetBool("exclusive");
    reverse_ = ctx.HasAttr("reverse") && ctx.GetBool("reverse");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const int64_t outer = outer_, n = n_, inner = inner_;
    if (outer * inner == 0 || n == 0) return;
    const bool exclusive = exclusive_, reverse = reverse_;
    if (inner == 1) {
      ParallelFor(outer, std::max<int64_t>(kRows, kParallelGrain / n), [&](int64_t begin, int64_t end) {
        ScanRows(x, y, n, begin, end, exclusive, reverse);
      });
      return;
    }
    const int64_t blocks = (inner + kColumns - 1) / kColumns;  // of columns, per outer index
    ParallelFor(outer * blocks, std::max<int64_t>(1, kParallelGrain / (n * kColumns)), [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t o = u / blocks, c = (u % blocks) * kColumns, base = o * n * inner + c;
        ScanColumns(x + base, y + base, n, inner, std::min(kColumns, inner - c), exclusive, reverse);
      }
    });
  }

 private:
  using A = typename R::A;
  static constexpr int64_t kRows = 8, kColumns = 64;

  // Rows [r0, r1) of n contiguous elements: kRows rows at a time, their running sums (products) independent
  // chains (one chain waits on its add's latency; eight overlap), the rest one by one (ScanLine).
  static void ScanRows(const T* x, T* y, int64_t n, int64_t r0, int64_t r1, bool exclusive, bool reverse) {
    int64_t r = r0;
    for (; r + kRows <= r1; r += kRows) {
      A acc[kRows];
      for (A& a : acc) a = R::Identity();
      for (int64_t t = 0; t < n; ++t) {
        const int64_t k = r * n + (reverse ? n - 1 - t : t);
        for (int64_t g = 0; g < kRows; ++g) {
          const A v = R::Widen(x[k + g * n]);
          if (!exclusive) acc[g] = R::Combine(acc[g], v);
          y[k + g * n] = R::Finish(acc[g], 1);
          if (exclusive) acc[g] = R::Combine(acc[g], v);
        }
      }
    }
    for (; r < r1; ++r) ScanLine<R>(x + r * n, y + r * n, n, int64_t{1}, exclusive, reverse);
  }

  // m <= kColumns neighbouring lines (columns `inner` apart along the scanned dim): each step of the scan
  // one contiguous, vectorised pass over the m running sums (products).
  static void ScanColumns(const T* x, T* y, int64_t n, int64_t inner, int64_t m, bool exclusive, bool reverse) {
    A acc[kColumns];
    for (A& a : acc) a = R::Identity();
    for (int64_t t = 0; t < n; ++t) {
      const int64_t k = (reverse ? n - 1 - t : t) * inner;
      const T* xs = x + k;
      T* ys = y + k;
      if (exclusive) {
        for (int64_t j = 0; j < m; ++j) {
          const A v = R::Widen(xs[j]);
          ys[j] = R::Finish(acc[j], 1);
          acc[j] = R::Combine(acc[j], v);
        }
      } else {
        for (int64_t j = 0; j < m; ++j) {
          acc[j] = R::Combine(acc[j], R::Widen(xs[j]));
          ys[j] = R::Finish(acc[j], 1);
        }
      }
    }
  }

  int64_t outer_ = 1, n_ = 1, inner_ = 1;
  bool exclusive_ = false, reverse_ = false;
};

// Cummax (kMax) and Cummin: each line along the axis scanned by ExtremeScanLine, lines split over threads.
template <typename T, bool kMax>
class ExtremeScanCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const TensorMeta& x = ctx.input(0);
    for (int o = 0; o < 2; ++o) {
      OPF_CHECK(ctx.output(o).shape == x.shape, "For '" << op << "', output " << o << " must have the shape "
                                                        << ShapeToString(x.shape) << ", but got "
                                                        << ShapeToString(ctx.output(o).shape) << ".");
    }
    const int64_t nd = x.ndim();
    OPF_CHECK(nd >= 1, "For '" << op << "', the 'input' must have at least 1 dim, but got a 0-d tensor.");
    int64_t axis = ctx.GetInt("axis");
    OPF_CHECK(axis >= -nd && axis < nd, "For '" << op << "', the 'axis' must be in [" << -nd << ", " << nd
                                                << "), but got " << axis << ".");
    if (axis < 0) axis += nd;
    outer_ = n_ = inner_ = 1;
    for (int64_t d = 0; d < nd; ++d) (d < axis ? outer_ : d == axis ? n_ : inner_) *= x.shape[d];
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    int64_t* index = args.output<int64_t>(1);
    const int64_t n = n_, inner = inner_;
    if (n == 0) return;
    ParallelFor(outer_ * inner, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
      for (int64_t l = begin; l < end; ++l) {
        const int64_t base = (l / inner) * n * inner + l % inner;
        ExtremeScanLine<kMax>(x + base, y + base, index + base, n, inner);
      }
    });
  }

 private:
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
};

// Dropout's element loop for a key (DropoutKey of the seeds).
template <typename T>
void DropoutApply(const T* x, T* out, T* mask, int64_t n, uint64_t key, double keep_prob) {
  using C = compute_t<T>;
  const C scale = static_cast<C>(1.0 / keep_prob);
  ParallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const bool keep = DropoutKeep(key, i, keep_prob);
      mask[i] = Store<T>(keep ? C(1) : C(0));
      out[i] = Store<T>(keep ? Load(x[i]) * scale : C(0));
    }
  });
}

void CheckDropoutOutputs(const KernelContext& ctx) {
  const TensorMeta& x = ctx.input(0);
  for (int o = 0; o < 2; ++o) {
    OPF_CHECK(ctx.output(o).shape == x.shape, "For '" << ctx.op_name() << "', output " << o << " must have shape "
                                                      << ShapeToString(x.shape) << ", but got "
                                                      << ShapeToString(ctx.output(o).shape) << ".");
  }
}

// Dropout(keep_prob, Seed0, Seed1)(x): the seeds are attrs, the key made once.
template <typename T>
class DropoutCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckDropoutOutputs(ctx);
    n_ = ctx.input(0).numel();
    keep_prob_ = ctx.GetFloat("keep_prob");
    key_ = DropoutKey(ctx.GetInt("Seed0"), ctx.GetInt("Seed1"));
  }

  void Launch(const KernelArgs& args) override {
    DropoutApply(args.input<T>(0), args.output<T>(0), args.output<T>(1), n_, key_, keep_prob_);
  }

 private:
  int64_t n_ = 0;
  double keep_prob_ = 0.5;
  uint64_t key_ = 0;
};

// DropoutExt(p)(input, seed, offset): the seeds are one-element int64 inputs, read at each launch.
template <typename T>
class DropoutExtCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckDropoutOutputs(ctx);
    for (int i = 1; i <= 2; ++i) {
      OPF_CHECK(ctx.input(i).numel() == 1, "For '" << ctx.op_name() << "', the '" << (i == 1 ? "seed" : "offset")
                                                   << "' must hold one int64, but got shape "
                                                   << ShapeToString(ctx.input(i).shape) << ".");
    }
    n_ = ctx.input(0).numel();
    keep_prob_ = 1.0 - ctx.GetFloat("p");
  }

  void Launch(const KernelArgs& args) override {
    const uint64_t key = DropoutKey(*args.input<int64_t>(1), *args.input<int64_t>(2));
    DropoutApply(args.input<T>(0), args.output<T>(0), args.output<T>(1), n_, key, keep_prob_);
  }

 private:
  int64_t n_ = 0;
  double keep_prob_ = 0.5;
};

template <typename T>
class DropoutGradCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.input(1).shape == ctx.input(0).shape,
              "For '" << ctx.op_name() << "', the 'mask' must have the shape of 'dy' "
                      << ShapeToString(ctx.input(0).shape) << ", but got " << ShapeToString(ctx.input(1).shape)
                      << ".");
    n_ = ctx.input(0).numel();
    keep_prob_ = ctx.GetFloat("keep_prob");
  }

  void Launch(const KernelArgs& args) override {
    const T* dy = args.input<T>(0);
    const T* mask = args.input<T>(1);
    T* dx = args.output<T>(0);
    const C scale = static_cast<C>(1.0 / keep_prob_);
    ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dx[i] = Store<T>(Load(dy[i]) * Load(mask[i]) * scale);
    });
  }

 private:
  int64_t n_ = 0;
  double keep_prob_ = 0.5;
};

#define REG_CUMSUM(T, ID)                                                                                     \
  MS_REG_CPU_KERNEL(CumSum, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), CumScanCpuKernel<T, SumReducer<T>>); \
  MS_REG_CPU_KERNEL(CumProd, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), CumScanCpuKernel<T, ProdReducer<T>>); \
  MS_REG_CPU_KERNEL(Cummax, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt64),     \
                    ExtremeScanCpuKernel<T, true>);                                                             \
  MS_REG_CPU_KERNEL(Cummin, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt64),     \
                    ExtremeScanCpuKernel<T, false>)
#define REG_DROPOUT(T, ID)                                                                                         \
  MS_REG_CPU_KERNEL(Dropout, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), DropoutCpuKernel<T>); \
  MS_REG_CPU_KERNEL(DropoutExt,                                                                                    \
                    KernelAttr()                                                                                   \
                        .AddInputAttr(ID)                                                                          \
                        .AddInputAttr(kNumberTypeInt64)                                                            \
                        .AddInputAttr(kNumberTypeInt64)                                                            \
                        .AddOutputAttr(ID)                                                                         \
                        .AddOutputAttr(ID),                                                                        \
                    DropoutExtCpuKernel<T>);                                                                       \
  MS_REG_CPU_KERNEL(DropoutGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),                \
                    DropoutGradCpuKernel<T>)

REG_CUMSUM(float16, kNumberTypeFloat16);
REG_CUMSUM(bfloat16, kNumberTypeBFloat16);
REG_CUMSUM(float, kNumberTypeFloat32);
REG_CUMSUM(double, kNumberTypeFloat64);
REG_CUMSUM(int32_t, kNumberTypeInt32);
REG_CUMSUM(int64_t, kNumberTypeInt64);
REG_DROPOUT(float16, kNumberTypeFloat16);
REG_DROPOUT(bfloat16, kNumberTypeBFloat16);
REG_DROPOUT(float, kNumberTypeFloat32);
REG_DROPOUT(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
