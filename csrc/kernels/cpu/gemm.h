// GEMM for the CPU kernels that are built on it (conv.cc, attention.cc): OpenBLAS's sgemm/dgemm through
// core/blas.h, row-major, alpha = 1; and BlasOneThread, for GEMMs issued from inside a parallel region.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/blas.h"

namespace opforge {

// c [m, n] = op(a) [m, k] @ op(b) [k, n] + beta * c, S float or double. Empty products are done here
// (BLAS refuses leading dimensions of 0): nothing for m or n == 0, c = beta * c for k == 0.
template <typename S>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const S* a, int64_t lda, const S* b, int64_t ldb, S beta,
          S* c, int64_t ldc) {
  static_assert(std::is_same_v<S, float> || std::is_same_v<S, double>, "GEMM takes float or double");
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == S(0) ? S(0) : beta * c[i * ldc + j];
    }
    return;
  }
  if constexpr (std::is_same_v<S, float>) {
    blas::Sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  } else {
    blas::Dgemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
  }
}

// OpenBLAS on one thread while it lives: each thread of a parallel region runs its own small GEMMs, so a
// call synchronises once instead of at every GEMM (which on busy cores costs more than it gains).
class BlasOneThread {
 public:
  BlasOneThread() : saved_(blas::GetNumThreads()) {
    if (saved_ > 1) blas::SetNumThreads(1);
  }
  ~BlasOneThread() {
    if (saved_ > 1) blas::SetNumThreads(saved_);
  }
  BlasOneThread(const BlasOneThread&) = delete;
  BlasOneThread& operator=(const BlasOneThread&) = delete;

 private:
  int saved_;
};

}  // namespace opforge
