// The linear algebra of square and rectangular matrices in the last two dims, a batch in the leading ones,
// through LAPACK (core/lapack.h): MatrixInverse(adjoint)(x), MatrixDeterminant()(x),
// LogMatrixDeterminant()(x) -> (sign, log|det|), Cholesky(upper)(x), Qr(full_matrices)(x) -> (q, r),
// Svd(full_matrices, compute_uv)(x) -> (s, u, v), Eigh(compute_eigenvectors, lower)(x) -> (w, v),
// Lu()(x) -> (lu, pivots, permutation),
// MatrixSolve(adjoint)(matrix, rhs) and MatrixTriangularSolve(lower, adjoint)(matrix, rhs) (BLAS's trsm). float32 and
// float64. The matrices of a batch split over
// threads; a singular matrix (MatrixInverse) or one not positive definite (Cholesky) is an error naming its
// position in the batch. A matrix holding a NaN or an infinity gives NaN outputs (LAPACK's results for it
// are not defined).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/lapack.h"
#include "opforge/functors/linalg.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// The batch and matrix dims of x [..., rows, cols].
struct MatrixBatch {
  int64_t batch = 1, rows = 0, cols = 0;

  void Init(const std::string& op, const std::vector<int64_t>& shape, bool square) {
    OPF_CHECK(shape.size() >= 2, "For '" << op << "', the input must have at least 2 dims (a matrix), but got shape "
                                         << ShapeToString(shape) << ".");
    rows = shape[shape.size() - 2];
    cols = shape.back();
    OPF_CHECK(!square || rows == cols, "For '" << op << "', the matrices must be square, but got shape "
                                               << ShapeToString(shape) << ".");
    batch = 1;
    for (size_t d = 0; d + 2 < shape.size(); ++d) batch *= shape[d];
  }
  int64_t size() const { return rows * cols; }
};

// Runs body(b) on every matrix of the batch across threads; the first b where it returned false (LAPACK's
// info > 0) is returned, else -1.
template <typename F>
int64_t ForEachMatrix(int64_t batch, int64_t matrix_work, F&& body) {
  std::atomic<int64_t> failed{batch};
  ParallelFor(batch, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(matrix_work, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t b = begin; b < end; ++b) {
                  if (!body(b)) {
                    int64_t seen = failed.load();
                    while (b < seen && !failed.compare_exchange_weak(seen, b)) {
                    }
                  }
                }
              });
  return failed.load() == batch ? -1 : failed.load();
}

template <typename T>
bool AllFinite(const T* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i])) return false;
  }
  return true;
}

template <typename T>
void FillNan(T* a, int64_t n) {
  std::fill(a, a + n, std::numeric_limits<T>::quiet_NaN());
}

// The matrix src copied into dst for LAPACK to work in place; false (dst all NaN) when it holds a NaN or an
// infinity, LAPACK's result for which is not defined.
template <typename T>
bool CopyFinite(const T* src, T* dst, int64_t size) {
  if (!AllFinite(src, size)) {
    FillNan(dst, size);
    return false;
  }
  std::memcpy(dst, src, static_cast<size_t>(size) * sizeof(T));
  return true;
}

int64_t Cube(const MatrixBatch& m) { return m.rows * m.cols * std::max(m.rows, m.cols); }

template <typename T>
void TransposeSquare(T* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) std::swap(a[i * n + j], a[j * n + i]);
  }
}

// MatrixInverse: getrf then getri per matrix, into the output; adjoint: the inverse's transpose.
template <typename T>
class MatrixInverseCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    m_.Init(op_, ctx.input(0).shape, true);
    adjoint_ = ctx.GetBool("adjoint");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const int64_t n = m_.rows, size = m_.size();
    if (size == 0) return;
    const int64_t bad = ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      std::vector<int32_t> ipiv(static_cast<size_t>(n));
      T* a = y + b * size;
      if (!CopyFinite(x + b * size, a, size)) return true;
      if (lapack::Getrf(n, a, ipiv.data()) != 0 || lapack::Getri(n, a, ipiv.data()) != 0) return false;
      if (adjoint_) TransposeSquare(a, n);
      return true;
    });
    OPF_CHECK(bad < 0, "For '" << op_ << "', the matrix at batch index " << bad
                               << " is singular: it has no inverse.");
  }

 private:
  std::string op_;
  MatrixBatch m_;
  bool adjoint_ = false;
};

// det = prod(diag(U)) * (-1)^(row swaps) of the LU factors (0 for a singular matrix: a zero pivot).
template <typename T>
void LuDeterminant(const T* x, int64_t n, T* sign, T* value, bool logarithm) {
  std::vector<T> a(x, x + n * n);
  std::vector<int32_t> ipiv(static_cast<size_t>(n));
  lapack::Getrf(n, a.data(), ipiv.data());
  T s = T(1), acc = logarithm ? T(0) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    const T d = a[static_cast<size_t>(i * n + i)];
    if (ipiv[static_cast<size_t>(i)] != i + 1) s = -s;
    if (logarithm) {
      if (d < T(0)) s = -s;
      acc += std::log(std::abs(d));
    } else {
      acc *= d;
    }
  }
  if (logarithm && std::isinf(acc) && acc < T(0)) s = T(0);  // log|0|: a singular matrix, sign 0
  if (sign != nullptr) *sign = s;
  *value = logarithm ? acc : s * acc;
}

// MatrixDeterminant (kLog false) -> det; LogMatrixDeterminant -> (sign, log|det|).
template <typename T, bool kLog>
class DeterminantCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override { m_.Init(ctx.op_name(), ctx.input(0).shape, true); }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* first = args.output<T>(0);
    T* second = kLog ? args.output<T>(1) : nullptr;
    const int64_t n = m_.rows, size = m_.size();
    ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      if (n == 0) {  // the empty product: det 1
        if (kLog) {
          first[b] = T(1);
          second[b] = T(0);
        } else {
          first[b] = T(1);
        }
        return true;
      }
      if (!AllFinite(x + b * size, size)) {
        first[b] = std::numeric_limits<T>::quiet_NaN();
        if (kLog) second[b] = first[b];
        return true;
      }
      if (kLog) {
        LuDeterminant(x + b * size, n, first + b, second + b, true);
      } else {
        LuDeterminant<T>(x + b * size, n, nullptr, first + b, false);
      }
      return true;
    });
  }

 private:
  MatrixBatch m_;
};

// Cholesky: x = L L^T (lower) or U^T U (upper), the other triangle zero.
template <typename T>
class CholeskyCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    m_.Init(op_, ctx.input(0).shape, true);
    upper_ = ctx.GetBool("upper");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const int64_t n = m_.rows, size = m_.size();
    if (size == 0) return;
    const int64_t bad = ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      T* a = y + b * size;
      if (!CopyFinite(x + b * size, a, size)) return true;
      if (lapack::Potrf(upper_, n, a) != 0) return false;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (upper_ ? j < i : j > i) a[i * n + j] = T(0);
        }
      }
      return true;
    });
    OPF_CHECK(bad < 0, "For '" << op_ << "', the matrix at batch index " << bad
                               << " is not positive definite: it has no Cholesky factor.");
  }

 private:
  std::string op_;
  MatrixBatch m_;
  bool upper_ = false;
};

// Qr: x [m, n] = q r; reduced (full_matrices false): q [m, k], r [k, n], k = min(m, n); full: q [m, m], r [m, n].
template <typename T>
class QrCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    m_.Init(ctx.op_name(), ctx.input(0).shape, false);
    full_ = ctx.GetBool("full_matrices");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* q = args.output<T>(0);
    T* r = args.output<T>(1);
    const int64_t m = m_.rows, n = m_.cols, k = std::min(m, n), qcols = full_ ? m : k, rrows = full_ ? m : k;
    ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      T* qb = q + b * m * qcols;
      T* rb = r + b * rrows * n;
      std::fill(rb, rb + rrows * n, T(0));
      if (m == 0 || n == 0) {  // q: the identity's first columns
        std::fill(qb, qb + m * qcols, T(0));
        for (int64_t i = 0; i < std::min(m, qcols); ++i) qb[i * qcols + i] = T(1);
        return true;
      }
      if (!AllFinite(x + b * m * n, m * n)) {
        FillNan(qb, m * qcols);
        FillNan(rb, rrows * n);
        return true;
      }
      // A work matrix [m, max(n, qcols)]: x in the first n columns; Q's columns formed in place.
      const int64_t w = std::max(n, qcols);
      std::vector<T> a(static_cast<size_t>(m * w), T(0)), tau(static_cast<size_t>(k));
      for (int64_t i = 0; i < m; ++i) std::copy(x + b * m * n + i * n, x + b * m * n + (i + 1) * n, &a[i * w]);
      lapack::Geqrf(m, n, a.data(), w, tau.data());
      for (int64_t i = 0; i < std::min(rrows, m); ++i) {
        for (int64_t j = i; j < n; ++j) rb[i * n + j] = a[static_cast<size_t>(i * w + j)];
      }
      lapack::Orgqr(m, qcols, k, a.data(), w, tau.data());
      for (int64_t i = 0; i < m; ++i) std::copy(&a[i * w], &a[i * w] + qcols, qb + i * qcols);
      return true;
    });
  }

 private:
  MatrixBatch m_;
  bool full_ = false;
};

// The permutation of getrf's 1-based row swaps ipiv (swap rows k and ipiv[k] - 1, in order): perm [n, n] with
// x = perm @ L @ U, i.e. perm[r_i][i] = 1 where r is 0..n-1 with the swaps applied; pivots the 0-based swaps.
inline void PermutationOfSwaps(const int32_t* ipiv, int64_t n, int32_t* pivots, int32_t* perm) {
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  for (int64_t k = 0; k < n; ++k) {
    pivots[k] = ipiv[k] - 1;
    std::swap(rows[static_cast<size_t>(k)], rows[static_cast<size_t>(ipiv[k] - 1)]);
  }
  std::fill(perm, perm + n * n, 0);
  for (int64_t i = 0; i < n; ++i) perm[rows[static_cast<size_t>(i)] * n + i] = 1;
}

// Lu: x = perm @ L @ U by getrf: lu (U on and above the diagonal, L's below it, its unit diagonal not
// stored), pivots (0-based: row k was swapped with row pivots[k]) and perm. A singular matrix has an LU too
// (a zero on U's diagonal); a matrix holding a NaN or an infinity gives a NaN lu and no swaps.
template <typename T>
class LuCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override { m_.Init(ctx.op_name(), ctx.input(0).shape, true); }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* lu = args.output<T>(0);
    int32_t* pivots = args.output<int32_t>(1);
    int32_t* perm = args.output<int32_t>(2);
    const int64_t n = m_.rows, size = m_.size();
    if (size == 0) return;
    ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      std::vector<int32_t> ipiv(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) ipiv[static_cast<size_t>(i)] = static_cast<int32_t>(i + 1);
      T* a = lu + b * size;
      if (CopyFinite(x + b * size, a, size)) lapack::Getrf(n, a, ipiv.data());
      PermutationOfSwaps(ipiv.data(), n, pivots + b * n, perm + b * size);
      return true;
    });
  }

 private:
  MatrixBatch m_;
};

// Each pair (u_j, v_j), j < k, of singular vectors flipped together so that v_j's component of largest
// magnitude (the first of equals) is positive: they are defined up to a shared sign, and this fixes one
// whatever the algorithm (the GPU's Jacobi rotations give the same). The extra columns of full factors are
// left as they are (any orthonormal completion).
template <typename T>
void SignSingularVectors(T* u, int64_t m, int64_t ucols, T* v, int64_t n, int64_t vcols, int64_t k) {
  for (int64_t j = 0; j < k; ++j) {
    int64_t top = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (std::abs(v[i * vcols + j]) > std::abs(v[top * vcols + j])) top = i;
    }
    if (v[top * vcols + j] >= T(0)) continue;
    for (int64_t i = 0; i < n; ++i) v[i * vcols + j] = -v[i * vcols + j];
    for (int64_t i = 0; i < m; ++i) u[i * ucols + j] = -u[i * ucols + j];
  }
}

// Svd: x [m, n] = u diag(s) v^T, s descending; u [m, k] and v [n, k] (k = min(m, n)), or [m, m] and [n, n]
// (full_matrices: the extra columns completed by CompleteColumn), the pairs of singular vectors signed by
// SignSingularVectors; without compute_uv, u and v are zeros of those shapes (MindSpore's outputs).
template <typename T>
class SvdCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    m_.Init(op_, ctx.input(0).shape, false);
    full_ = ctx.GetBool("full_matrices");
    compute_uv_ = ctx.GetBool("compute_uv");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* s = args.output<T>(0);
    T* u = args.output<T>(1);
    T* v = args.output<T>(2);
    const int64_t m = m_.rows, n = m_.cols, k = std::min(m, n);
    const int64_t ucols = full_ ? m : k, vcols = full_ ? n : k;
    const int64_t bad = ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      T* ub = u + b * m * ucols;
      T* vb = v + b * n * vcols;
      std::fill(ub, ub + m * ucols, T(0));
      std::fill(vb, vb + n * vcols, T(0));
      if (k == 0) {  // no singular values; u and v: the identity's first columns
        for (int64_t i = 0; compute_uv_ && i < std::min(m, ucols); ++i) ub[i * ucols + i] = T(1);
        for (int64_t i = 0; compute_uv_ && i < std::min(n, vcols); ++i) vb[i * vcols + i] = T(1);
        return true;
      }
      if (!AllFinite(x + b * m * n, m * n)) {
        FillNan(s + b * k, k);
        if (compute_uv_) {
          FillNan(ub, m * ucols);
          FillNan(vb, n * vcols);
        }
        return true;
      }
      std::vector<T> a(x + b * m * n, x + (b + 1) * m * n);
      std::vector<T> vt(compute_uv_ ? static_cast<size_t>(vcols * n) : 1);
      const char jobz = !compute_uv_ ? 'N' : full_ ? 'A' : 'S';
      if (lapack::Gesdd(jobz, m, n, a.data(), s + b * k, compute_uv_ ? ub : nullptr, std::max<int64_t>(ucols, 1),
                        compute_uv_ ? vt.data() : nullptr, std::max<int64_t>(n, 1)) != 0) {
        return false;
      }
      for (int64_t i = 0; compute_uv_ && i < vcols; ++i) {  // v = vt^T
        for (int64_t j = 0; j < n; ++j) vb[j * vcols + i] = vt[static_cast<size_t>(i * n + j)];
      }
      if (compute_uv_) SignSingularVectors(ub, m, ucols, vb, n, vcols, k);
      for (int64_t c = k; compute_uv_ && c < ucols; ++c) CompleteColumn(ub, m, ucols, c);
      for (int64_t c = k; compute_uv_ && c < vcols; ++c) CompleteColumn(vb, n, vcols, c);
      return true;
    });
    OPF_CHECK(bad < 0, "For '" << op_ << "', the SVD of the matrix at batch index " << bad << " did not converge.");
  }

 private:
  std::string op_;
  MatrixBatch m_;
  bool full_ = false, compute_uv_ = true;
};

// Each column of the n x n matrix v flipped so that its component of largest magnitude (the first of
// equals) is positive: eigenvectors are defined up to their sign, and this fixes one whatever the LAPACK
// build or the precision.
template <typename T>
void PositiveLargestComponents(T* v, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    int64_t top = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (std::abs(v[i * n + j]) > std::abs(v[top * n + j])) top = i;
    }
    if (v[top * n + j] < T(0)) {
      for (int64_t i = 0; i < n; ++i) v[i * n + j] = -v[i * n + j];
    }
  }
}

// Eigh: the eigenvalues w (ascending) and eigenvectors v (columns, each with its largest component
// positive) of each symmetric matrix, read from its lower (or upper) triangle: x = v diag(w) v^T. Without
// compute_eigenvectors, v is zeros.
template <typename T>
class EighCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    m_.Init(op_, ctx.input(0).shape, true);
    vectors_ = ctx.GetBool("compute_eigenvectors");
    lower_ = ctx.GetBool("lower");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* w = args.output<T>(0);
    T* v = args.output<T>(1);
    const int64_t n = m_.rows, size = m_.size();
    if (size == 0) return;
    const int64_t bad = ForEachMatrix(m_.batch, Cube(m_), [&](int64_t b) {
      std::vector<T> a(static_cast<size_t>(size));
      T* vb = v + b * size;
      if (!CopyFinite(x + b * size, a.data(), size)) {
        FillNan(w + b * n, n);
        FillNan(vb, size);
        return true;
      }
      if (lapack::Syevd(vectors_ ? 'V' : 'N', lower_ ? 'L' : 'U', n, a.data(), w + b * n) != 0) return false;
      if (vectors_) {
        PositiveLargestComponents(a.data(), n);
        std::copy(a.begin(), a.end(), vb);
      } else {
        std::fill(vb, vb + size, T(0));
      }
      return true;
    });
    OPF_CHECK(bad < 0, "For '" << op_ << "', the eigendecomposition of the matrix at batch index " << bad
                               << " did not converge.");
  }

 private:
  std::string op_;
  MatrixBatch m_;
  bool vectors_ = true, lower_ = true;
};

// The matrices [..., m, m] and right-hand sides [..., m, k] of a solve, with the same batch.
struct SolveBatch {
  MatrixBatch a;
  int64_t k = 0;

  void Init(const std::string& op, const std::vector<int64_t>& matrix, const std::vector<int64_t>& rhs) {
    a.Init(op, matrix, true);
    OPF_CHECK(rhs.size() == matrix.size() && std::equal(matrix.begin(), matrix.end() - 1, rhs.begin()),
              "For '" << op << "', the 'rhs' must have shape [..., " << a.rows << ", K] with the batch of 'matrix' "
                      << ShapeToString(matrix) << ", but got " << ShapeToString(rhs) << ".");
    k = rhs.back();
  }
  int64_t rhs_size() const { return a.rows * k; }
};

// The frame of the solves: matrix [..., m, m] and rhs [..., m, k] in, x like rhs out, the matrices of the
// batch split over threads. A batch whose matrix (the part the solve reads) or rhs is not finite gives NaN;
// Solve(matrix, x) solves in place into x (holding rhs) and returns false where the matrix is singular.
template <typename T>
class SolveCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = ctx.op_name();
    s_.Init(op_, ctx.input(0).shape, ctx.input(1).shape);
    adjoint_ = ctx.GetBool("adjoint");
    InitAttrs(ctx);
  }

  void Launch(const KernelArgs& args) override {
    const T* matrix = args.input<T>(0);
    const T* rhs = args.input<T>(1);
    T* out = args.output<T>(0);
    const int64_t size = s_.a.size(), rsize = s_.rhs_size();
    if (rsize == 0) return;
    const int64_t bad = ForEachMatrix(s_.a.batch, Cube(s_.a) + size * s_.k, [&](int64_t b) {
      T* x = out + b * rsize;
      if (!MatrixFinite(matrix + b * size) || !CopyFinite(rhs + b * rsize, x, rsize)) {
        FillNan(x, rsize);
        return true;
      }
      return Solve(matrix + b * size, x);
    });
    OPF_CHECK(bad < 0, "For '" << op_ << "', the matrix at batch index " << bad << Singular());
  }

 protected:
  virtual void InitAttrs(const KernelContext&) {}
  virtual bool MatrixFinite(const T* a) const { return AllFinite(a, s_.a.size()); }
  virtual bool Solve(const T* a, T* x) const = 0;
  virtual const char* Singular() const = 0;

  std::string op_;
  SolveBatch s_;
  bool adjoint_ = false;
};

// MatrixSolve: x with matrix x = rhs (or matrix^T x = rhs, adjoint), by getrf then getrs per matrix.
template <typename T>
class MatrixSolveCpuKernel : public SolveCpuKernel<T> {
 protected:
  bool Solve(const T* matrix, T* x) const override {
    const int64_t m = this->s_.a.rows;
    std::vector<T> a(matrix, matrix + m * m);
    std::vector<int32_t> ipiv(static_cast<size_t>(m));
    if (lapack::Getrf(m, a.data(), ipiv.data()) != 0) return false;
    lapack::Getrs(this->adjoint_ ? 'T' : 'N', m, this->s_.k, a.data(), ipiv.data(), x);
    return true;
  }
  const char* Singular() const override { return " is singular: the system has no unique solution."; }
};

// MatrixTriangularSolve: x with matrix x = rhs (or matrix^T x = rhs, adjoint), matrix's lower (or upper)
// triangle read and the other ignored, by substitution (BLAS's trsm); a zero on the diagonal is an error.
template <typename T>
class MatrixTriangularSolveCpuKernel : public SolveCpuKernel<T> {
 protected:
  void InitAttrs(const KernelContext& ctx) override { lower_ = ctx.GetBool("lower"); }
  bool MatrixFinite(const T* a) const override {  // the triangle read
    const int64_t n = this->s_.a.rows;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t begin = lower_ ? 0 : i, end = lower_ ? i + 1 : n;
      if (!AllFinite(a + i * n + begin, end - begin)) return false;
    }
    return true;
  }
  bool Solve(const T* a, T* x) const override {
    const int64_t n = this->s_.a.rows;
    for (int64_t i = 0; i < n; ++i) {
      if (a[i * n + i] == T(0)) return false;
    }
    lapack::Trsm(lower_, this->adjoint_, n, this->s_.k, a, x);
    return true;
  }
  const char* Singular() const override { return " has a zero on its diagonal: it is singular."; }

 private:
  bool lower_ = true;
};

#define REG_LINALG(T, ID)                                                                                      \
  MS_REG_CPU_KERNEL(MatrixInverse, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), MatrixInverseCpuKernel<T>); \
  MS_REG_CPU_KERNEL(MatrixDeterminant, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID),                       \
                    DeterminantCpuKernel<T, false>);                                                           \
  MS_REG_CPU_KERNEL(LogMatrixDeterminant, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID),  \
                    DeterminantCpuKernel<T, true>);                                                            \
  MS_REG_CPU_KERNEL(Cholesky, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), CholeskyCpuKernel<T>);          \
  MS_REG_CPU_KERNEL(Qr, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), QrCpuKernel<T>);    \
  MS_REG_CPU_KERNEL(Svd, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), \
                    SvdCpuKernel<T>);                                                                          \
  MS_REG_CPU_KERNEL(Eigh, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(ID), EighCpuKernel<T>);  \
  MS_REG_CPU_KERNEL(Lu,                                                                                        \
                    KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt32).AddOutputAttr( \
                        kNumberTypeInt32),                                                                     \
                    LuCpuKernel<T>);                                                                           \
  MS_REG_CPU_KERNEL(MatrixSolve, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),             \
                    MatrixSolveCpuKernel<T>);                                                                  \
  MS_REG_CPU_KERNEL(MatrixTriangularSolve, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),   \
                    MatrixTriangularSolveCpuKernel<T>)

REG_LINALG(float, kNumberTypeFloat32);
REG_LINALG(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
