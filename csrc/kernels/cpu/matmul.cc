// MatMul: out[M, N] = op(x1) @ op(x2), op = transpose when the attr "transpose_a" / "transpose_b" is set.
// FusedMatMulApplyGradientDescent(var, alpha, x1, x2): var -= alpha * op(x1) @ op(x2), one GEMM into var.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/blas.h"
#include "kernels/cpu/broadcast.h"

namespace opforge {
namespace {

// The GEMM problem of one MatMul, checked once in Init.
struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0;  // row lengths of x1 and x2 as stored (row-major)

  // x1 and x2 are inputs `first` and `first` + 1; the product [M, N] is output 0.
  void Init(const KernelContext& ctx, size_t first = 0) {
    const std::string& op = ctx.op_name();
    trans_a = ctx.HasAttr("transpose_a") && ctx.GetBool("transpose_a");
    trans_b = ctx.HasAttr("transpose_b") && ctx.GetBool("transpose_b");
    const auto& a = ctx.input(first).shape;
    const auto& b = ctx.input(first + 1).shape;
    OPF_CHECK(a.size() == 2 && b.size() == 2, "For '" << op << "', the inputs must be 2-D, but got x1 shape "
                                                      << ShapeToString(a) << " and x2 shape " << ShapeToString(b)
                                                      << ".");
    m = trans_a ? a[1] : a[0];
    k = trans_a ? a[0] : a[1];
    const int64_t k2 = trans_b ? b[1] : b[0];
    n = trans_b ? b[0] : b[1];
    OPF_CHECK(k == k2, "For '" << op << "', the inner dimensions of x1 and x2 must match (transpose_a="
                               << (trans_a ? "True" : "False") << ", transpose_b=" << (trans_b ? "True" : "False")
                               << "), but got " << k << " and " << k2 << " (x1 shape " << ShapeToString(a)
                               << ", x2 shape " << ShapeToString(b) << ").");
    const std::vector<int64_t> want{m, n};
    OPF_CHECK(ctx.output(0).shape == want, "For '" << op << "', the output shape must be " << ShapeToString(want)
                                                   << ", but got " << ShapeToString(ctx.output(0).shape) << ".");
    lda = a[1];
    ldb = b[1];
  }
  bool empty() const { return m == 0 || n == 0 || k == 0; }
};

// C = alpha * A @ B + beta * C through BLAS for float32 / float64.
template <typename T>
void Gemm(const GemmShape& g, const T* a, const T* b, T* c, T alpha = T(1), T beta = T(0)) {
  if constexpr (std::is_same_v<T, float>) {
    blas::Sgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb, beta, c, g.n);
  } else {
    blas::Dgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb, beta, c, g.n);
  }
}

template <typename T>
void Convert(const T* src, float* dst, int64_t n) {
  ParallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<float>(src[i]);
  });
}

template <typename T>
void Convert(const float* src, T* dst, int64_t n) {
  ParallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<T>(src[i]);
  });
}

// Integer GEMM: i-k-j order so the inner loop streams a row of B into a row of C.
// Products and sums wrap modulo 2^bits like NumPy's.
template <typename T>
void IntGemm(const GemmShape& g, const T* a, const T* b, T* c) {
  const int64_t m = g.m, n = g.n, k = g.k;
  std::vector<T> bt;
  if (g.trans_b) {  // make B [K, N] contiguous so the inner loop is unit-stride
    bt.resize(static_cast<size_t>(k * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) bt[p * n + j] = b[j * k + p];
    b = bt.data();
  }
  const AddOp add;
  const MulOp mul;
  const int64_t grain_rows = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, k * n));
  ParallelFor(m, grain_rows, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* ci = c + i * n;
      std::fill(ci, ci + n, T(0));
      for (int64_t p = 0; p < k; ++p) {
        const T aip = g.trans_a ? a[p * m + i] : a[i * k + p];
        const T* bp = b + p * n;
        for (int64_t j = 0; j < n; ++j) ci[j] = add(ci[j], mul(aip, bp[j]));
      }
    }
  });
}

template <typename T>
class MatMulCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override { g_.Init(ctx); }

  void Launch(const KernelArgs& args) override {
    const T* a = args.input<T>(0);
    const T* b = args.input<T>(1);
    T* c = args.output<T>(0);
    if (g_.empty()) {  // BLAS rejects zero leading dims; an empty sum (K = 0) is zero
      std::fill(c, c + g_.m * g_.n, Store<T>(compute_t<T>(0)));
      return;
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      Gemm(g_, a, b, c);
    } else if constexpr (std::is_integral_v<T>) {
      IntGemm(g_, a, b, c);
    } else {  // half types: widen to float32, Sgemm, round back
      std::vector<float> fa(static_cast<size_t>(g_.m * g_.k)), fb(static_cast<size_t>(g_.k * g_.n)),
          fc(static_cast<size_t>(g_.m * g_.n));
      Convert(a, fa.data(), g_.m * g_.k);
      Convert(b, fb.data(), g_.k * g_.n);
      Gemm(g_, fa.data(), fb.data(), fc.data());
      Convert(fc.data(), c, g_.m * g_.n);
    }
  }

 private:
  GemmShape g_;
};

// var -= alpha * op(x1) @ op(x2): BLAS accumulating into var (beta 1), so the product never reaches memory.
template <typename T>
class FusedMatMulApplyGradientDescentCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.num_inputs() == 4 && ctx.num_outputs() == 1,
              "For '" << ctx.op_name() << "', the kernel takes 4 inputs and 1 output, but got " << ctx.num_inputs()
                      << " and " << ctx.num_outputs() << ".");
    g_.Init(ctx, 2);
    const TensorMeta& var = ctx.input(0);
    OPF_CHECK(var.shape == ctx.output(0).shape,
              "For '" << ctx.op_name() << "', the 'var' must have the product's shape "
                      << ShapeToString(ctx.output(0).shape) << ", but got " << ShapeToString(var.shape) << ".");
    const TensorMeta& alpha = ctx.input(1);
    OPF_CHECK(alpha.numel() == 1, "For '" << ctx.op_name() << "', the 'alpha' must be a scalar, but got shape "
                                          << ShapeToString(alpha.shape) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    const T alpha = args.input<T>(1)[0];
    const T* a = args.input<T>(2);
    const T* b = args.input<T>(3);
    T* out = args.output<T>(0);
    const int64_t size = g_.m * g_.n;
    if (g_.empty()) {  // nothing subtracted (an empty sum is zero)
      if (out != var) std::copy(var, var + size, out);
      return;
    }
    // var an operand too (var -= alpha * x @ var), or alpha 0 (BLAS would skip the product, and a NaN or an
    // infinity in it with it): the product first, as the unfused pair computes it
    if (alpha == T(0) || Overlaps(out, size, a, g_.m * g_.k) || Overlaps(out, size, b, g_.k * g_.n)) {
      std::vector<T> product(static_cast<size_t>(size));
      Gemm(g_, a, b, product.data());
      for (int64_t i = 0; i < size; ++i) out[i] = var[i] - alpha * product[static_cast<size_t>(i)];
      return;
    }
    if (out != var) std::copy(var, var + size, out);
    Gemm(g_, a, b, out, static_cast<T>(-alpha), T(1));
  }

 private:
  static bool Overlaps(const T* p, int64_t n, const T* q, int64_t m) {
    const auto lo = [](const T* x) { return reinterpret_cast<std::uintptr_t>(x); };
    return lo(p) < lo(q + m) && lo(q) < lo(p + n);
  }

  GemmShape g_;
};

// BatchMatMul: out[b] = op(x[bx]) @ op(y[by]) for every batch index b of the broadcast batch dims; each
// product is MatMul's (BLAS for float32/float64, float32 BLAS for the half types, wrapping integers).
template <typename T>
class BatchMatMulCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    g_.trans_a = ctx.HasAttr("transpose_a") && ctx.GetBool("transpose_a");
    g_.trans_b = ctx.HasAttr("transpose_b") && ctx.GetBool("transpose_b");
    const auto& a = ctx.input(0).shape;
    const auto& b = ctx.input(1).shape;
    const auto& c = ctx.output(0).shape;
    OPF_CHECK(a.size() >= 2 && b.size() >= 2 && c.size() >= 2,
              "For '" << op << "', the inputs must have at least 2 dims, but got " << ShapeToString(a) << " and "
                      << ShapeToString(b) << ".");
    const size_t na = a.size(), nb = b.size(), nc = c.size();
    g_.m = g_.trans_a ? a[na - 1] : a[na - 2];
    g_.k = g_.trans_a ? a[na - 2] : a[na - 1];
    const int64_t k2 = g_.trans_b ? b[nb - 1] : b[nb - 2];
    g_.n = g_.trans_b ? b[nb - 2] : b[nb - 1];
    OPF_CHECK(g_.k == k2 && c[nc - 2] == g_.m && c[nc - 1] == g_.n,
              "For '" << op << "', the shapes " << ShapeToString(a) << " and " << ShapeToString(b)
                      << " do not give the output " << ShapeToString(c) << ".");
    g_.lda = a[na - 1];
    g_.ldb = b[nb - 1];
    // Batch offsets (in matrices) of x and y for each output batch index, broadcasting from the right.
    const size_t nd = nc - 2;
    int64_t batches = 1;
    for (size_t d = 0; d < nd; ++d) batches *= c[d];
    a_off_.assign(static_cast<size_t>(batches), 0);
    b_off_.assign(static_cast<size_t>(batches), 0);
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t rem = bi, sa = 1, sb = 1, oa = 0, ob = 0;
      for (size_t d = nd; d-- > 0;) {
        const int64_t idx = rem % c[d];
        rem /= c[d];
        const size_t back = nd - d;  // 1 for the innermost batch dim
        if (back <= na - 2) {
          const int64_t da = a[na - 2 - back];
          OPF_CHECK(da == 1 || da == c[d], "For '" << op << "', the batch dims of 'x' " << ShapeToString(a)
                                                   << " do not broadcast to " << ShapeToString(c) << ".");
          if (da != 1) oa += idx * sa;
          sa *= da;
        }
        if (back <= nb - 2) {
          const int64_t db = b[nb - 2 - back];
          OPF_CHECK(db == 1 || db == c[d], "For '" << op << "', the batch dims of 'y' " << ShapeToString(b)
                                                   << " do not broadcast to " << ShapeToString(c) << ".");
          if (db != 1) ob += idx * sb;
          sb *= db;
        }
      }
      a_off_[bi] = oa;
      b_off_[bi] = ob;
    }
  }

  void Launch(const KernelArgs& args) override {
    const T* a = args.input<T>(0);
    const T* b = args.input<T>(1);
    T* c = args.output<T>(0);
    const int64_t a_size = g_.m * g_.k, b_size = g_.k * g_.n, c_size = g_.m * g_.n;
    const int64_t batches = static_cast<int64_t>(a_off_.size());
    if (g_.empty()) {
      std::fill(c, c + batches * c_size, Store<T>(compute_t<T>(0)));
      return;
    }
    std::vector<float> fa, fb, fc;
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double> && !std::is_integral_v<T>) {
      fa.resize(static_cast<size_t>(a_size));
      fb.resize(static_cast<size_t>(b_size));
      fc.resize(static_cast<size_t>(c_size));
    }
    for (int64_t bi = 0; bi < batches; ++bi) {
      const T* ab = a + a_off_[bi] * a_size;
      const T* bb = b + b_off_[bi] * b_size;
      T* cb = c + bi * c_size;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        Gemm(g_, ab, bb, cb);
      } else if constexpr (std::is_integral_v<T>) {
        IntGemm(g_, ab, bb, cb);
      } else {
        Convert(ab, fa.data(), a_size);
        Convert(bb, fb.data(), b_size);
        Gemm(g_, fa.data(), fb.data(), fc.data());
        Convert(fc.data(), cb, c_size);
      }
    }
  }

 private:
  GemmShape g_;
  std::vector<int64_t> a_off_, b_off_;
};

#define REG_BATCH_MATMUL(T, ID)                                                                  \
  MS_REG_CPU_KERNEL(BatchMatMul, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    BatchMatMulCpuKernel<T>)

REG_BATCH_MATMUL(float16, kNumberTypeFloat16);
REG_BATCH_MATMUL(bfloat16, kNumberTypeBFloat16);
REG_BATCH_MATMUL(float, kNumberTypeFloat32);
REG_BATCH_MATMUL(double, kNumberTypeFloat64);
REG_BATCH_MATMUL(int32_t, kNumberTypeInt32);
REG_BATCH_MATMUL(int64_t, kNumberTypeInt64);

#define REG_MATMUL(T, ID) \
  MS_REG_CPU_KERNEL(MatMul, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), MatMulCpuKernel<T>)

REG_MATMUL(float16, kNumberTypeFloat16);
REG_MATMUL(bfloat16, kNumberTypeBFloat16);
REG_MATMUL(float, kNumberTypeFloat32);
REG_MATMUL(double, kNumberTypeFloat64);
REG_MATMUL(int32_t, kNumberTypeInt32);
REG_MATMUL(int64_t, kNumberTypeInt64);

#define REG_FUSED_MATMUL_GD(T, ID)                                                                            \
  MS_REG_CPU_KERNEL(FusedMatMulApplyGradientDescent,                                                          \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    FusedMatMulApplyGradientDescentCpuKernel<T>)

REG_FUSED_MATMUL_GD(float, kNumberTypeFloat32);
REG_FUSED_MATMUL_GD(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
