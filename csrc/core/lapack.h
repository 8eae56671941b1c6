// LAPACK, from the BLAS library blas::Load opened (scipy-openblas32 carries LAPACKE; and BLAS's triangular
// solve): the factorizations of
// the linear-algebra kernels (csrc/kernels/cpu/linalg.cc). Row-major matrices, float or double; each call
// returns LAPACK's info (0: done; > 0: the factorization failed at that step, e.g. a singular matrix).
#pragma once

#include <cstdint>
#include <string>

namespace opforge {
namespace lapack {

// Resolves the LAPACKE symbols (names with `prefix`) of the library at `handle`; blas::Load calls it.
void Load(void* handle, const std::string& prefix);

// LU with partial pivoting of an n x n matrix in place; ipiv (n, 1-based rows as LAPACK's).
template <typename T>
int Getrf(int64_t n, T* a, int32_t* ipiv);
// The inverse from Getrf's factors, in place.
template <typename T>
int Getri(int64_t n, T* a, const int32_t* ipiv);
// Cholesky of an n x n matrix in place: the lower (or upper) triangle; the other is left as it was.
template <typename T>
int Potrf(bool upper, int64_t n, T* a);
// SVD of an m x n matrix (destroyed): s (min(m, n)); with jobz 'A' or 'S', u (m x ucols) and vt (vrows x n).
template <typename T>
int Gesdd(char jobz, int64_t m, int64_t n, T* a, T* s, T* u, int64_t ldu, T* vt, int64_t ldvt);
// QR of an m x n matrix (lda its row length) in place: R above the diagonal, reflectors below and in tau.
template <typename T>
int Geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau);
// Q's first n columns (m x n, lda its row length) from Geqrf's k reflectors, in place.
template <typename T>
int Orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau);

// Solves a x = b (trans 'N') or a^T x = b ('T') from Getrf's factors of the n x n a; b (n x nrhs) in place.
template <typename T>
int Getrs(char trans, int64_t n, int64_t nrhs, const T* a, const int32_t* ipiv, T* b);
// Solves a x = b or a^T x = b (transpose) for the lower (or upper) triangle of the n x n a; b (n x nrhs) in
// place. BLAS's trsm (row-major natively: no copies), which does not check the diagonal: the caller does.
template <typename T>
void Trsm(bool lower, bool transpose, int64_t n, int64_t nrhs, const T* a, T* b);
// The eigenvalues (w, ascending) of a symmetric n x n matrix, read from its lower or upper triangle (uplo),
// and with jobz 'V' its eigenvectors, as the columns of a (in place).
template <typename T>
int Syevd(char jobz, char uplo, int64_t n, T* a, T* w);

}  // namespace lapack
}  // namespace opforge
