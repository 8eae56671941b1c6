// BLAS, loaded at run time from a packaged library (scipy-openblas32) so the extension has no
// link-time dependency on where Python installed it.
#pragma once

#include <cstdint>
#include <string>

namespace opforge {
namespace blas {

enum Order { kRowMajor = 101 };
enum Transpose { kNoTrans = 111, kTrans = 112 };

// Loads the library and resolves the symbols, whose names carry `prefix` (e.g. "scipy_").
void Load(const std::string& path, const std::string& prefix);
bool Loaded();
// The CPU kernels OpenBLAS chose (its core, e.g. "Haswell", "SkylakeX"; OPENBLAS_CORETYPE overrides it),
// or "" when the library cannot tell.
std::string CoreName();
void SetNumThreads(int n);
// OpenBLAS's thread count (0 when the library cannot tell).
int GetNumThreads();

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void Dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
           int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace blas
}  // namespace opforge
