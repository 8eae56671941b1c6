// The square-matrix linear algebra on the GPU, a block of kBlock threads per matrix (the CPU's is LAPACK's,
// csrc/kernels/cpu/linalg.cc): LU with partial pivoting (LuFactorKernel, LAPACK's getrf: the first largest
// |pivot|, 1-based pivots) feeds MatrixInverse (InverseFromLuKernel: a thread per column of the identity,
// forward then back substitution), MatrixSolve (SolveFromLuKernel: a thread per column of the right-hand
// side) and the determinants (DeterminantKernel: a thread per matrix); MatrixTriangularSolve by substitution
// (TriangularSolveKernel); Cholesky right-looking, column by column (CholeskyKernel). `info` per matrix: 0
// done, -1 a NaN or an infinity in it (its outputs are NaN, as on the CPU), k > 0 a zero pivot or a
// non-positive one at step k (the host raises for MatrixInverse, MatrixSolve, MatrixTriangularSolve and
// Cholesky). Instantiated by name (opforge/kernels/gpu/linalg.py).
#include "block.cuh"
#include "opforge/cuda.h"
#include "opforge/functors/linalg.h"
#include "opforge/limits.h"
#include "opforge/math.h"

namespace opforge {
namespace cuda {

// Whether every element of a[0, n) is finite, on every thread of the block.
template <typename T, int kBlock>
__device__ bool BlockAllFinite(const T* a, int64_t n, int* cells) {
  int bad = 0;
  for (int64_t i = threadIdx.x; i < n; i += kBlock) bad |= !(a[i] - a[i] == T(0));  // NaN and +-inf give NaN
  return BlockSum<int, kBlock>(bad, cells) == 0;
}

template <typename T, int kBlock>
__device__ void BlockFill(T* a, int64_t n, T value) {
  for (int64_t i = threadIdx.x; i < n; i += kBlock) a[i] = value;
}

// The row of the largest |a[i * n + k]| over i in [k, n), the first of equal ones: a tree over the block.
template <typename T, int kBlock>
__device__ int64_t BlockPivotRow(const T* a, int64_t n, int64_t k, T* values, int64_t* rows) {
  T best = T(-1);
  int64_t row = n;
  for (int64_t i = k + threadIdx.x; i < n; i += kBlock) {
    const T v = math::fabs(a[i * n + k]);
    if (v > best) {  // rows rise along a thread's strip: the first of equal values stays
      best = v;
      row = i;
    }
  }
  values[threadIdx.x] = best;
  rows[threadIdx.x] = row;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) {
      const T v = values[threadIdx.x + s];
      const int64_t r = rows[threadIdx.x + s];
      if (v > values[threadIdx.x] || (v == values[threadIdx.x] && r < rows[threadIdx.x])) {
        values[threadIdx.x] = v;
        rows[threadIdx.x] = r;
      }
    }
    __syncthreads();
  }
  const int64_t pivot = rows[0];
  __syncthreads();  // every thread has read rows[0] before the next call writes it
  return pivot;
}

// lu = P x, factored in place into unit-lower L and upper U; piv[k] = the 1-based row swapped with k.
template <typename T, int kBlock>
__global__ void LuFactorKernel(const T* x, T* lu, int* piv, int* info, int64_t batch, int64_t n) {
  __shared__ T values[kBlock];
  __shared__ int64_t rows[kBlock];
  __shared__ int cells[kBlock / 32 + 1];
  const int64_t size = n * n;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* xb = x + b * size;
    T* a = lu + b * size;
    for (int64_t i = threadIdx.x; i < size; i += kBlock) a[i] = xb[i];
    __syncthreads();
    if (!BlockAllFinite<T, kBlock>(a, size, cells)) {
      BlockFill<T, kBlock>(a, size, limits::QuietNaN<T>());
      if (threadIdx.x == 0) info[b] = -1;
      __syncthreads();
      continue;
    }
    int status = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t p = BlockPivotRow<T, kBlock>(a, n, k, values, rows);
      if (threadIdx.x == 0) piv[b * n + k] = static_cast<int>(p + 1);
      if (p != k) {
        for (int64_t j = threadIdx.x; j < n; j += kBlock) {
          const T t = a[k * n + j];
          a[k * n + j] = a[p * n + j];
          a[p * n + j] = t;
        }
      }
      __syncthreads();
      const T d = a[k * n + k];
      if (d != T(0)) {
        for (int64_t i = k + 1 + threadIdx.x; i < n; i += kBlock) a[i * n + k] /= d;
      } else if (status == 0) {
        status = static_cast<int>(k + 1);  // the whole column is zero: nothing to eliminate
      }
      __syncthreads();
      const int64_t m = n - k - 1;
      for (int64_t e = threadIdx.x; e < m * m; e += kBlock) {
        const int64_t i = k + 1 + e / m, j = k + 1 + e % m;
        a[i * n + j] -= a[i * n + k] * a[k * n + j];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) info[b] = status;
  }
}

// (sign, log|det|) (kLog) or det from the LU factors: a thread per matrix; 1 (and 0) for a 0 x 0 matrix.
template <typename T, bool kLog>
__global__ void DeterminantKernel(const T* lu, const int* piv, const int* info, T* first, T* second,
                                  int64_t batch, int64_t n) {
  OPF_GRID_STRIDE_LOOP(b, batch) {
    if (n > 0 && info[b] < 0) {
      first[b] = limits::QuietNaN<T>();
      if (kLog) second[b] = first[b];
      continue;
    }
    const T* a = lu + b * n * n;
    T sign = T(1), acc = kLog ? T(0) : T(1);
    for (int64_t k = 0; k < n; ++k) {
      const T d = a[k * n + k];
      if (piv[b * n + k] != k + 1) sign = -sign;
      if (kLog) {
        if (d < T(0)) sign = -sign;
        acc += math::log(math::fabs(d));
      } else {
        acc *= d;
      }
    }
    if (kLog) {
      if (acc < T(0) && acc - acc != T(0)) sign = T(0);  // log|0| = -inf: singular
      first[b] = sign;
      second[b] = acc;
    } else {
      first[b] = sign * acc;
    }
  }
}

// Solves M y = b in place for one column y[0], y[ld], ..., y[(n - 1) ld], M the lower (or upper) triangle of
// a (the other ignored; its diagonal taken as ones with `unit`), or that triangle's transpose: forward
// substitution where M is lower, backward where it is upper.
template <typename T>
__device__ void TriangularSolveColumn(const T* a, int64_t n, bool lower, bool transpose, bool unit, T* y, int64_t ld) {
  const bool forward = lower != transpose;  // M is lower triangular
  for (int64_t step = 0; step < n; ++step) {
    const int64_t i = forward ? step : n - 1 - step;
    T s = y[i * ld];
    const int64_t begin = forward ? 0 : i + 1, end = forward ? i : n;
    for (int64_t m = begin; m < end; ++m) s -= (transpose ? a[m * n + i] : a[i * n + m]) * y[m * ld];
    y[i * ld] = unit ? s : s / a[i * n + i];
  }
}

// The row swaps of Getrf's pivots applied to one column, in order (P b), or undone in reverse (P^T b).
template <typename T>
__device__ void SwapRows(const int* piv, int64_t n, T* y, int64_t ld, bool undo) {
  for (int64_t step = 0; step < n; ++step) {
    const int64_t k = undo ? n - 1 - step : step, p = piv[k] - 1;
    if (p != k) {
      const T t = y[k * ld];
      y[k * ld] = y[p * ld];
      y[p * ld] = t;
    }
  }
}

// Solves x y = b (or x^T y = b, transpose) in place for one column, from x = P^T L U (Getrf's factors in lu):
// L U y = P b, or U^T L^T (P y) = b.
template <typename T>
__device__ void LuSolveColumn(const T* lu, const int* piv, int64_t n, bool transpose, T* y, int64_t ld) {
  if (!transpose) {
    SwapRows(piv, n, y, ld, false);
    TriangularSolveColumn(lu, n, true, false, true, y, ld);
    TriangularSolveColumn(lu, n, false, false, false, y, ld);
  } else {
    TriangularSolveColumn(lu, n, false, true, false, y, ld);
    TriangularSolveColumn(lu, n, true, true, true, y, ld);
    SwapRows(piv, n, y, ld, true);
  }
}

// The inverse from the LU factors: thread j solves L U y_j = P e_j into column j of y (neighbouring threads,
// neighbouring columns: coalesced rows); adjoint transposes it after.
template <typename T, int kBlock>
__global__ void InverseFromLuKernel(const T* lu, const int* piv, const int* info, T* y, int64_t batch, int64_t n,
                                    int adjoint) {
  const int64_t size = n * n;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* a = lu + b * size;
    T* yb = y + b * size;
    if (info[b] < 0) {
      BlockFill<T, kBlock>(yb, size, limits::QuietNaN<T>());
      continue;
    }
    for (int64_t j = threadIdx.x; j < n; j += kBlock) {
      for (int64_t i = 0; i < n; ++i) yb[i * n + j] = T(i == j);
      LuSolveColumn(a, piv + b * n, n, false, yb + j, n);
    }
    __syncthreads();
    if (adjoint) {
      for (int64_t e = threadIdx.x; e < size; e += kBlock) {
        const int64_t i = e / n, j = e % n;
        if (i < j) {
          const T t = yb[i * n + j];
          yb[i * n + j] = yb[j * n + i];
          yb[j * n + i] = t;
        }
      }
    }
    __syncthreads();
  }
}

// MatrixSolve from the LU factors: y [batch, n, k] = the solutions of x y = rhs (x^T y = rhs with adjoint),
// thread j of a matrix's block taking column j; all NaN where x (info < 0) or that rhs is not finite.
template <typename T, int kBlock>
__global__ void SolveFromLuKernel(const T* lu, const int* piv, const int* info, const T* rhs, T* y, int64_t batch,
                                  int64_t n, int64_t k, int adjoint) {
  __shared__ int cells[kBlock / 32 + 1];
  const int64_t size = n * n, rsize = n * k;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    T* yb = y + b * rsize;
    for (int64_t e = threadIdx.x; e < rsize; e += kBlock) yb[e] = rhs[b * rsize + e];
    __syncthreads();
    if (info[b] < 0 || !BlockAllFinite<T, kBlock>(yb, rsize, cells)) {
      BlockFill<T, kBlock>(yb, rsize, limits::QuietNaN<T>());
      __syncthreads();
      continue;
    }
    for (int64_t j = threadIdx.x; j < k; j += kBlock) {
      LuSolveColumn(lu + b * size, piv + b * n, n, adjoint != 0, yb + j, k);
    }
    __syncthreads();
  }
}

// MatrixTriangularSolve: y = the solutions of M y = rhs, M x's lower (or upper) triangle or, with adjoint, its
// transpose; thread j of a matrix's block takes column j. info[b] = i + 1 at the first zero on the
// diagonal (no solution: the host raises); all NaN where the triangle read or the rhs is not finite.
template <typename T, int kBlock>
__global__ void TriangularSolveKernel(const T* x, const T* rhs, T* y, int* info, int64_t batch, int64_t n, int64_t k,
                                      int lower, int adjoint) {
  __shared__ int cells[kBlock / 32 + 1];
  const int64_t size = n * n, rsize = n * k;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* a = x + b * size;
    T* yb = y + b * rsize;
    for (int64_t e = threadIdx.x; e < rsize; e += kBlock) yb[e] = rhs[b * rsize + e];
    int bad = 0, zero = 0;
    for (int64_t e = threadIdx.x; e < size; e += kBlock) {
      const int64_t i = e / n, j = e % n;
      if (lower ? j <= i : j >= i) bad |= !(a[e] - a[e] == T(0));
      if (i == j && a[e] == T(0) && (zero == 0 || i + 1 < zero)) zero = static_cast<int>(i + 1);
    }
    __syncthreads();
    bad = BlockSum<int, kBlock>(bad, cells);
    const bool finite = bad == 0 && BlockAllFinite<T, kBlock>(yb, rsize, cells);
    // the first zero on the diagonal: the smallest nonzero `zero` of the threads (each took rising rows)
    const int first = BlockMax<int, kBlock>(zero == 0 ? 0 : static_cast<int>(n) + 1 - zero, cells);
    if (threadIdx.x == 0) info[b] = finite && first > 0 ? static_cast<int>(n) + 1 - first : 0;
    if (!finite || first > 0) {
      BlockFill<T, kBlock>(yb, rsize, limits::QuietNaN<T>());
      __syncthreads();
      continue;
    }
    for (int64_t j = threadIdx.x; j < k; j += kBlock) {
      TriangularSolveColumn(a, n, lower != 0, adjoint != 0, false, yb + j, k);
    }
    __syncthreads();
  }
}

// x = L L^T from x's lower triangle (upper: x = U^T U from its upper one, computed as the lower factor of
// x^T and written transposed); the other triangle zero. info[b] = k + 1 at the first pivot not > 0.
template <typename T, int kBlock>
__global__ void CholeskyKernel(const T* x, T* y, int* info, int64_t batch, int64_t n, int upper) {
  __shared__ int cells[kBlock / 32 + 1];
  const int64_t size = n * n;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* xb = x + b * size;
    T* a = y + b * size;
    if (!BlockAllFinite<T, kBlock>(xb, size, cells)) {
      BlockFill<T, kBlock>(a, size, limits::QuietNaN<T>());
      if (threadIdx.x == 0) info[b] = -1;
      __syncthreads();
      continue;
    }
    for (int64_t e = threadIdx.x; e < size; e += kBlock) {
      const int64_t i = e / n, j = e % n;
      a[e] = j > i ? T(0) : upper ? xb[j * n + i] : xb[e];
    }
    __syncthreads();
    int status = 0;
    for (int64_t k = 0; k < n && status == 0; ++k) {
      const T d = a[k * n + k];
      __syncthreads();  // every thread has read the pivot before thread 0 replaces it
      if (!(d > T(0))) {
        status = static_cast<int>(k + 1);
        break;
      }
      const T s = math::sqrt(d);
      if (threadIdx.x == 0) a[k * n + k] = s;
      for (int64_t i = k + 1 + threadIdx.x; i < n; i += kBlock) a[i * n + k] /= s;
      __syncthreads();
      const int64_t m = n - k - 1;
      for (int64_t e = threadIdx.x; e < m * m; e += kBlock) {
        const int64_t i = k + 1 + e / m, j = k + 1 + e % m;
        if (j <= i) a[i * n + j] -= a[i * n + k] * a[j * n + k];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) info[b] = status;
    if (upper) {
      for (int64_t e = threadIdx.x; e < size; e += kBlock) {
        const int64_t i = e / n, j = e % n;
        if (i < j) {
          a[i * n + j] = a[j * n + i];
          a[j * n + i] = T(0);
        }
      }
    }
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace opforge

namespace opforge {
namespace cuda {

// Eigh by cyclic Jacobi rotations (Golub and Van Loan 8.5), a block per matrix: a (the work matrix [n, n],
// symmetric, built from x's lower or upper triangle) is rotated pair by pair, (p, q) zeroing a_pq, until a
// sweep finds every a_pq below eps sqrt(|a_pp a_qq|) (the rounding of its pair); v accumulates the
// rotations. Then w ascending (order: the permutation, a thread's selection) and v's columns in that order,
// each signed so its largest component (the first of equals) is positive, as the CPU's. info[b] = 1 when 60 sweeps did not converge; a
// matrix that is not finite (either triangle, as the CPU's) gives NaN outputs. Without `vectors`, v is zeros.
template <typename T, int kBlock>
__global__ void EighJacobiKernel(const T* x, T* work, int* order, T* w, T* v, int* info, int64_t batch, int64_t n,
                                 int lower, int vectors) {
  __shared__ T rotation[2];
  __shared__ int rotated[1];
  __shared__ int cells[kBlock / 32 + 1];
  const int64_t size = n * n;
  const T eps = sizeof(T) == 4 ? T(1.1920929e-07) : T(2.220446049250313e-16);
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* xb = x + b * size;
    T* a = work + b * size;
    T* vb = v + b * size;
    int bad = 0;
    for (int64_t e = threadIdx.x; e < size; e += kBlock) {
      const int64_t i = e / n, j = e % n;
      const bool read = lower ? j <= i : j >= i;
      const T value = read ? xb[e] : xb[j * n + i];  // the triangle read, mirrored
      bad |= !(xb[e] - xb[e] == T(0));  // the whole matrix checked, as the CPU's
      a[e] = value;
      vb[e] = T(i == j);
    }
    if (BlockSum<int, kBlock>(bad, cells) != 0) {
      BlockFill<T, kBlock>(w + b * n, n, limits::QuietNaN<T>());
      BlockFill<T, kBlock>(vb, size, limits::QuietNaN<T>());
      if (threadIdx.x == 0) info[b] = 0;
      __syncthreads();
      continue;
    }
    int converged = 0;
    for (int sweep = 0; sweep < 60 && !converged; ++sweep) {
      if (threadIdx.x == 0) rotated[0] = 0;
      __syncthreads();
      for (int64_t p = 0; p + 1 < n; ++p) {
        for (int64_t q = p + 1; q < n; ++q) {
          if (threadIdx.x == 0) {
            // a_pq below the rounding of its diagonal pair is zero already (the classical threshold)
            const T apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
            T c = T(1), s = T(0);
            if (apq != T(0) && math::fabs(apq) > eps * math::sqrt(math::fabs(app * aqq))) {
              const T tau = (aqq - app) / (T(2) * apq);
              const T t = (tau >= T(0) ? T(1) : T(-1)) / (math::fabs(tau) + math::sqrt(T(1) + tau * tau));
              c = T(1) / math::sqrt(T(1) + t * t);
              s = t * c;
              rotated[0] = 1;
            }
            rotation[0] = c;
            rotation[1] = s;
          }
          __syncthreads();
          const T c = rotation[0], s = rotation[1];
          if (s != T(0)) {
            for (int64_t k = threadIdx.x; k < n; k += kBlock) {  // columns p and q: a J
              const T akp = a[k * n + p], akq = a[k * n + q];
              a[k * n + p] = c * akp - s * akq;
              a[k * n + q] = s * akp + c * akq;
              const T vkp = vb[k * n + p], vkq = vb[k * n + q];
              vb[k * n + p] = c * vkp - s * vkq;
              vb[k * n + q] = s * vkp + c * vkq;
            }
            __syncthreads();
            for (int64_t k = threadIdx.x; k < n; k += kBlock) {  // rows p and q: J^T (a J)
              const T apk = a[p * n + k], aqk = a[q * n + k];
              a[p * n + k] = c * apk - s * aqk;
              a[q * n + k] = s * apk + c * aqk;
            }
          }
          __syncthreads();
        }
      }
      converged = rotated[0] == 0;  // a sweep without a rotation
      __syncthreads();  // every thread has read the flag before thread 0 resets it
    }
    // the eigenvalues ascending: thread 0 orders them (the first of equal values first)
    int* ob = order + b * n;
    if (threadIdx.x == 0) {
      for (int64_t i = 0; i < n; ++i) ob[i] = static_cast<int>(i);
      for (int64_t i = 0; i < n; ++i) {
        int64_t best = i;
        for (int64_t j = i + 1; j < n; ++j) {
          if (a[ob[j] * (n + 1)] < a[ob[best] * (n + 1)]) best = j;
        }
        const int t = ob[i];
        ob[i] = ob[best];
        ob[best] = t;
      }
      info[b] = converged ? 0 : 1;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < n; i += kBlock) w[b * n + i] = a[ob[i] * (n + 1)];
    __syncthreads();
    // v's columns in that order, through the work matrix (free now), each signed
    for (int64_t e = threadIdx.x; e < size; e += kBlock) a[e] = vb[e];
    __syncthreads();
    for (int64_t j = threadIdx.x; j < n; j += kBlock) {
      const int64_t from = ob[j];
      int64_t top = 0;
      for (int64_t i = 1; i < n; ++i) {
        if (math::fabs(a[i * n + from]) > math::fabs(a[top * n + from])) top = i;
      }
      const T sign = a[top * n + from] < T(0) ? T(-1) : T(1);
      for (int64_t i = 0; i < n; ++i) vb[i * n + j] = vectors ? sign * a[i * n + from] : T(0);
    }
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace opforge

namespace opforge {
namespace cuda {

// Qr by Householder reflections, a block per matrix, with LAPACK's conventions (geqrf's dlarfg: the
// reflector of column j maps it onto beta e_j with beta = -sign(alpha) |x|, tau = (beta - alpha) / beta, and
// tau = 0 where the column below the diagonal is already zero; then orgqr), so the factors, signs included,
// are the CPU's: work [m, n] is factored in place (reflectors below the diagonal, R on and above it), then
// r [rrows, n] (R; rows past min(m, n) zero) and q [m, qcols] = H_0 ... H_{k-1} applied to the identity's
// first qcols columns, a thread per column. A matrix holding a NaN or an infinity gives NaN factors.
template <typename T, int kBlock>
__global__ void QrKernel(const T* x, T* work, T* tau, T* q, T* r, int64_t batch, int64_t m, int64_t n, int full) {
  __shared__ T cells[kBlock / 32 + 1];
  __shared__ int finite_cells[kBlock / 32 + 1];
  const int64_t k = m < n ? m : n, qcols = full ? m : k, rrows = full ? m : k, size = m * n;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    T* a = work + b * size;
    T* tb = tau + b * (k > 0 ? k : 1);
    T* qb = q + b * m * qcols;
    T* rb = r + b * rrows * n;
    for (int64_t e = threadIdx.x; e < size; e += kBlock) a[e] = x[b * size + e];
    __syncthreads();
    if (!BlockAllFinite<T, kBlock>(a, size, finite_cells)) {
      BlockFill<T, kBlock>(qb, m * qcols, limits::QuietNaN<T>());
      BlockFill<T, kBlock>(rb, rrows * n, limits::QuietNaN<T>());
      __syncthreads();
      continue;
    }
    for (int64_t j = 0; j < k; ++j) {
      T part = T(0);
      for (int64_t i = j + 1 + threadIdx.x; i < m; i += kBlock) part += a[i * n + j] * a[i * n + j];
      const T xnorm2 = BlockSum<T, kBlock>(part, cells);
      const T alpha = a[j * n + j];
      T t = T(0), scale = T(0), beta = alpha;
      if (xnorm2 > T(0)) {
        const T norm = math::sqrt(alpha * alpha + xnorm2);
        beta = -math::copysign(norm, alpha);  // -sign(alpha) |(alpha, x)|, by alpha's sign bit as LAPACK's
        t = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
      }
      __syncthreads();  // every thread has read alpha before it is overwritten
      if (t != T(0)) {
        for (int64_t i = j + 1 + threadIdx.x; i < m; i += kBlock) a[i * n + j] *= scale;  // v (v_j = 1)
      }
      if (threadIdx.x == 0) {
        a[j * n + j] = beta;
        tb[j] = t;
      }
      __syncthreads();
      if (t != T(0)) {
        for (int64_t c = j + 1 + threadIdx.x; c < n; c += kBlock) {  // H applied to column c
          T w = a[j * n + c];
          for (int64_t i = j + 1; i < m; ++i) w += a[i * n + j] * a[i * n + c];
          a[j * n + c] -= t * w;
          for (int64_t i = j + 1; i < m; ++i) a[i * n + c] -= t * a[i * n + j] * w;
        }
      }
      __syncthreads();
    }
    for (int64_t e = threadIdx.x; e < rrows * n; e += kBlock) {
      const int64_t i = e / n, c = e % n;
      rb[e] = i < k && c >= i ? a[i * n + c] : T(0);
    }
    for (int64_t c = threadIdx.x; c < qcols; c += kBlock) {  // column c of H_0 ... H_{k-1} e_c
      for (int64_t i = 0; i < m; ++i) qb[i * qcols + c] = T(i == c);
      for (int64_t j = k - 1; j >= 0; --j) {
        const T t = tb[j];
        if (t == T(0)) continue;
        T w = qb[j * qcols + c];
        for (int64_t i = j + 1; i < m; ++i) w += a[i * n + j] * qb[i * qcols + c];
        qb[j * qcols + c] -= t * w;
        for (int64_t i = j + 1; i < m; ++i) qb[i * qcols + c] -= t * a[i * n + j] * w;
      }
    }
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace opforge

namespace opforge {
namespace cuda {

// Svd by one-sided Jacobi rotations (Hestenes), a block per matrix: the columns of w, x (or x^T when
// m < n, so that w is tall: R = max(m, n) rows, k = min(m, n) columns) are rotated pair by pair until
// orthogonal, vp accumulating the rotations: then x = w vp^T with w's column norms the singular values.
// The outputs: s descending (order: the permutation), the tall factor (u, or v when m < n) w's normalised
// columns, completed to an orthonormal basis where a singular value is 0 and with full_matrices, the square
// one vp's columns; each pair (u_j, v_j) signed as the CPU's (v_j's largest component positive). info[b] = 1
// when 60 sweeps did not converge. A matrix holding a NaN or an infinity gives NaN outputs.
template <typename T, int kBlock>
__global__ void SvdJacobiKernel(const T* x, T* work, T* vp, int* order, T* s, T* u, T* v, int* info, int64_t batch,
                                int64_t m, int64_t n, int full, int compute_uv) {
  __shared__ T sums[3 * kBlock];
  __shared__ int cells[kBlock / 32 + 1];
  const bool wide = m < n;
  const int64_t rows = wide ? n : m, k = wide ? m : n, size = m * n;
  const int64_t tcols = full ? rows : k;  // the tall output's columns
  const T eps = sizeof(T) == 4 ? T(1.1920929e-07) : T(2.220446049250313e-16);
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* xb = x + b * size;
    T* w = work + b * rows * k;
    T* vb = vp + b * k * k;
    int* ob = order + b * k;
    T* tall = (wide ? v + b * n * (full ? n : k) : u + b * m * (full ? m : k));
    T* square = (wide ? u + b * m * m : v + b * n * n);
    int bad = 0;
    for (int64_t e = threadIdx.x; e < size; e += kBlock) {
      const int64_t i = e / n, j = e % n;
      bad |= !(xb[e] - xb[e] == T(0));
      if (wide) {
        w[j * k + i] = xb[e];
      } else {
        w[i * k + j] = xb[e];
      }
    }
    for (int64_t e = threadIdx.x; e < k * k; e += kBlock) vb[e] = T(e / k == e % k);
    if (!compute_uv) {  // u and v zeros, as the CPU's
      BlockFill<T, kBlock>(tall, rows * tcols, T(0));
      BlockFill<T, kBlock>(square, k * k, T(0));
    }
    if (BlockSum<int, kBlock>(bad, cells) != 0) {
      BlockFill<T, kBlock>(s + b * k, k, limits::QuietNaN<T>());
      if (compute_uv) {
        BlockFill<T, kBlock>(tall, rows * tcols, limits::QuietNaN<T>());
        BlockFill<T, kBlock>(square, k * k, limits::QuietNaN<T>());
      }
      if (threadIdx.x == 0) info[b] = 0;
      __syncthreads();
      continue;
    }
    int converged = 0;
    for (int sweep = 0; sweep < 60 && !converged; ++sweep) {
      converged = 1;
      for (int64_t p = 0; p + 1 < k; ++p) {
        for (int64_t q = p + 1; q < k; ++q) {
          T alpha = T(0), beta = T(0), gamma = T(0);
          for (int64_t i = threadIdx.x; i < rows; i += kBlock) {
            const T a = w[i * k + p], c = w[i * k + q];
            alpha += a * a;
            beta += c * c;
            gamma += a * c;
          }
          sums[threadIdx.x] = alpha;
          sums[kBlock + threadIdx.x] = beta;
          sums[2 * kBlock + threadIdx.x] = gamma;
          __syncthreads();
          for (int h = kBlock / 2; h > 0; h >>= 1) {
            if (static_cast<int>(threadIdx.x) < h) {
              for (int r = 0; r < 3; ++r) sums[r * kBlock + threadIdx.x] += sums[r * kBlock + threadIdx.x + h];
            }
            __syncthreads();
          }
          alpha = sums[0];
          beta = sums[kBlock];
          gamma = sums[2 * kBlock];
          __syncthreads();
          if (gamma == T(0) || math::fabs(gamma) <= eps * math::sqrt(alpha * beta)) continue;
          converged = 0;
          const T zeta = (beta - alpha) / (T(2) * gamma);
          const T t = (zeta >= T(0) ? T(1) : T(-1)) / (math::fabs(zeta) + math::sqrt(T(1) + zeta * zeta));
          const T c = T(1) / math::sqrt(T(1) + t * t), sn = c * t;
          for (int64_t i = threadIdx.x; i < rows; i += kBlock) {
            const T a = w[i * k + p], d = w[i * k + q];
            w[i * k + p] = c * a - sn * d;
            w[i * k + q] = sn * a + c * d;
          }
          for (int64_t i = threadIdx.x; i < k; i += kBlock) {
            const T a = vb[i * k + p], d = vb[i * k + q];
            vb[i * k + p] = c * a - sn * d;
            vb[i * k + q] = sn * a + c * d;
          }
          __syncthreads();
        }
      }
    }
    // the singular values, descending: thread 0 sorts them with the permutation (the first of equals first)
    T* sb = s + b * k;
    if (threadIdx.x == 0) {
      for (int64_t j = 0; j < k; ++j) {
        T norm = T(0);
        for (int64_t i = 0; i < rows; ++i) norm += w[i * k + j] * w[i * k + j];
        sb[j] = math::sqrt(norm);
        ob[j] = static_cast<int>(j);
      }
      for (int64_t i = 0; i < k; ++i) {
        int64_t best = i;
        for (int64_t j = i + 1; j < k; ++j) {
          if (sb[j] > sb[best]) best = j;
        }
        const T sv = sb[i];
        sb[i] = sb[best];
        sb[best] = sv;
        const int so = ob[i];
        ob[i] = ob[best];
        ob[best] = so;
      }
      info[b] = converged ? 0 : 1;
    }
    __syncthreads();
    // the factors: column j from w's (normalised) and vp's column order[j]
    if (compute_uv) {
      for (int64_t j = threadIdx.x; j < tcols; j += kBlock) {
        const T sigma = j < k ? sb[j] : T(0);
        for (int64_t i = 0; i < rows; ++i) tall[i * tcols + j] = sigma > T(0) ? w[i * k + ob[j]] / sigma : T(0);
      }
      for (int64_t j = threadIdx.x; j < k; j += kBlock) {
        for (int64_t i = 0; i < k; ++i) square[i * k + j] = vb[i * k + ob[j]];
      }
    } else {
      BlockFill<T, kBlock>(tall, rows * tcols, T(0));
      BlockFill<T, kBlock>(square, k * k, T(0));
    }
    __syncthreads();
    if (compute_uv && threadIdx.x == 0) {
      for (int64_t j = 0; j < tcols; ++j) {
        if (j >= k || !(sb[j] > T(0))) CompleteColumn(tall, rows, tcols, j);
      }
      // the pairs' signs: v_j's largest component positive (v: the square factor, or the tall one when m < n)
      T* vf = wide ? tall : square;
      T* uf = wide ? square : tall;
      const int64_t vcols = wide ? tcols : k, ucols = wide ? k : tcols;
      const int64_t vrows = wide ? rows : k, urows = wide ? k : rows;
      for (int64_t j = 0; j < k; ++j) {
        int64_t top = 0;
        for (int64_t i = 1; i < vrows; ++i) {
          if (math::fabs(vf[i * vcols + j]) > math::fabs(vf[top * vcols + j])) top = i;
        }
        if (vf[top * vcols + j] >= T(0)) continue;
        for (int64_t i = 0; i < vrows; ++i) vf[i * vcols + j] = -vf[i * vcols + j];
        for (int64_t i = 0; i < urows; ++i) uf[i * ucols + j] = -uf[i * ucols + j];
      }
    }
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace opforge

namespace opforge {
namespace cuda {

// y: a batch of rows x cols matrices (total elements), each the identity's first rows and columns, or zeros
// (ones = 0): an SVD's u and v where there are no singular values (a zero-size matrix), as the CPU's.
template <typename T>
__global__ void EyeKernel(T* y, int64_t total, int64_t rows, int64_t cols, int ones) {
  OPF_GRID_STRIDE_LOOP(e, total) {
    const int64_t within = e % (rows * cols);
    y[e] = (ones && within / cols == within % cols) ? T(1) : T(0);
  }
}

// Lu's integer outputs from LuFactorKernel's 1-based swaps (a thread per matrix; rows: its scratch [batch, n]):
// pivots the 0-based swaps, perm [n, n] the matrix P of x = P L U (perm[r_i][i] = 1, r: 0..n-1 with the
// swaps applied); a matrix that was not finite (info < 0) has no swaps.
__global__ void LuPermutationKernel(const int* piv, const int* info, int* pivots, int* perm, int* rows, int64_t batch,
                                    int64_t n) {
  OPF_GRID_STRIDE_LOOP(b, batch) {
    int* r = rows + b * n;
    for (int64_t i = 0; i < n; ++i) r[i] = static_cast<int>(i);
    for (int64_t k = 0; k < n; ++k) {
      const int p = info[b] < 0 ? static_cast<int>(k) : piv[b * n + k] - 1;
      pivots[b * n + k] = p;
      const int t = r[k];
      r[k] = r[p];
      r[p] = t;
    }
    int* pb = perm + b * n * n;
    for (int64_t e = 0; e < n * n; ++e) pb[e] = 0;
    for (int64_t i = 0; i < n; ++i) pb[r[i] * n + i] = 1;
  }
}

}  // namespace cuda
}  // namespace opforge
