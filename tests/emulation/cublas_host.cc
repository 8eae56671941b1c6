// The emulation's cuBLAS GEMMs, with the signatures of cublasGemmEx and cublasGemmStridedBatchedEx, so that
// a MatMul launched from C (_C.DeviceLaunch's GEMM steps) passes them the arguments a GPU's cuBLAS gets:
// column-major operands, leading dimensions, batch strides, the data and compute types as cuBLAS's enums.
// Plain loops in the compute type (float for float16 and float32, double for float64), as cuBLAS's
// CUBLAS_COMPUTE_32F / 64F sum; another type is refused as cuBLAS refuses it (status 15, not supported).
#include <cstdint>

#include "opforge/half.h"

namespace {

constexpr int kOpN = 0;
constexpr int kR32F = 0, kR64F = 1, kR16F = 2;
constexpr int kCompute32F = 68, kCompute64F = 70;
constexpr int kNotSupported = 15;

template <typename T, typename C>
void Gemm(int op_a, int op_b, int m, int n, int k, C alpha, const T* a, int lda, long long stride_a, const T* b,
          int ldb, long long stride_b, C beta, T* c, int ldc, long long stride_c, int batch) {
  for (int p = 0; p < batch; ++p) {
    const T* ap = a + p * stride_a;
    const T* bp = b + p * stride_b;
    T* cp = c + p * stride_c;
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        C sum = C(0);
        for (int l = 0; l < k; ++l) {
          const T x = op_a == kOpN ? ap[i + static_cast<int64_t>(l) * lda] : ap[l + static_cast<int64_t>(i) * lda];
          const T y = op_b == kOpN ? bp[l + static_cast<int64_t>(j) * ldb] : bp[j + static_cast<int64_t>(l) * ldb];
          sum += static_cast<C>(x) * static_cast<C>(y);
        }
        T& out = cp[i + static_cast<int64_t>(j) * ldc];
        out = static_cast<T>(alpha * sum + (beta == C(0) ? C(0) : beta * static_cast<C>(out)));
      }
    }
  }
}

int Dispatch(int op_a, int op_b, int m, int n, int k, const void* alpha, const void* a, int a_type, int lda,
             long long stride_a, const void* b, int b_type, int ldb, long long stride_b, const void* beta, void* c,
             int c_type, int ldc, long long stride_c, int batch, int compute) {
  if (a_type != b_type || a_type != c_type || m < 0 || n < 0 || k < 0 || batch < 0) return kNotSupported;
  if (a_type == kR64F && compute == kCompute64F) {
    Gemm(op_a, op_b, m, n, k, *static_cast<const double*>(alpha), static_cast<const double*>(a), lda, stride_a,
         static_cast<const double*>(b), ldb, stride_b, *static_cast<const double*>(beta), static_cast<double*>(c),
         ldc, stride_c, batch);
    return 0;
  }
  if (compute != kCompute32F) return kNotSupported;
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  if (a_type == kR32F) {
    Gemm(op_a, op_b, m, n, k, al, static_cast<const float*>(a), lda, stride_a, static_cast<const float*>(b), ldb,
         stride_b, be, static_cast<float*>(c), ldc, stride_c, batch);
    return 0;
  }
  if (a_type == kR16F) {
    using opforge::float16;
    Gemm(op_a, op_b, m, n, k, al, static_cast<const float16*>(a), lda, stride_a, static_cast<const float16*>(b),
         ldb, stride_b, be, static_cast<float16*>(c), ldc, stride_c, batch);
    return 0;
  }
  return kNotSupported;
}

}  // namespace

extern "C" int opf_emu_gemm_ex(void* /*handle*/, int op_a, int op_b, int m, int n, int k, const void* alpha,
                               const void* a, int a_type, int lda, const void* b, int b_type, int ldb,
                               const void* beta, void* c, int c_type, int ldc, int compute, int /*algo*/) {
  return Dispatch(op_a, op_b, m, n, k, alpha, a, a_type, lda, 0, b, b_type, ldb, 0, beta, c, c_type, ldc, 0, 1,
                  compute);
}

extern "C" int opf_emu_gemm_strided_batched_ex(void* /*handle*/, int op_a, int op_b, int m, int n, int k,
                                               const void* alpha, const void* a, int a_type, int lda,
                                               long long stride_a, const void* b, int b_type, int ldb,
                                               long long stride_b, const void* beta, void* c, int c_type, int ldc,
                                               long long stride_c, int batch, int compute, int /*algo*/) {
  return Dispatch(op_a, op_b, m, n, k, alpha, a, a_type, lda, stride_a, b, b_type, ldb, stride_b, beta, c, c_type,
                  ldc, stride_c, batch, compute);
}
