// The softmax statistics of contiguous rows for the CPU kernels (Softmax, LogSoftmax, the softmax
// cross-entropy losses), vectorised: the formula of opforge/functors/softmax.h,
//   m = max(x), e = exp(x - m), s = sum(e),
// with exp computed once per element over a whole block of rows (short rows, like 10 classes, fill the
// vector lanes too) and the max and the sum kept in 16 lanes. A NaN or +inf makes its row NaN, and a
// row of -inf is NaN, as the plain formula gives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "opforge/functors/reduce.h"
#include "opforge/math.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/lanes.h"

namespace opforge {

// Elements of one block of rows: the exponentials stay in L1 between the passes.
constexpr int64_t kSoftmaxBlockElems = 4096;

namespace softmax_rows {

constexpr int kLanes = lanes::kLanes;

template <typename C>
inline C Max(C a, C b) {
  return b > a ? b : a;  // a NaN a stays; a NaN b is dropped here and makes the sum NaN instead
}

// max of x[0..n), n >= 1.
template <typename T, typename C = compute_t<T>>
inline C RowMax(const T* x, int64_t n) {
  if (n < kLanes) {
    C m = Load(x[0]);
    for (int64_t k = 1; k < n; ++k) m = Max(m, Load(x[k]));
    return m;
  }
  C acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = Load(x[j]);
  int64_t k = kLanes;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] = Max(acc[j], Load(x[k + j]));
  }
  C m = acc[0];
  for (int j = 1; j < kLanes; ++j) m = Max(m, acc[j]);
  for (; k < n; ++k) m = Max(m, Load(x[k]));
  return m;
}

// sum of e[0..n), as S.
template <typename S, typename C>
inline S RowSum(const C* e, int64_t n) {
  return lanes::Sum<S>(n, [e](int64_t k) { return static_cast<S>(e[k]); });
}

}  // namespace softmax_rows

// Rows at least this long fill the vector lanes on their own: exp runs row by row.
constexpr int64_t kSoftmaxLongRow = 512;

// For `rows` contiguous rows of c >= 1 elements from x: m[r] = max of row r, e[r * c + k] =
// exp(x - m[r]), s[r] = sum of row r's e. e holds rows * c values (a block: rows * c <= kSoftmaxBlockElems
// unless rows == 1).
template <typename T>
OPF_VECTOR_CLONES void SoftmaxRowsExp(const T* x, int64_t rows, int64_t c, compute_t<T>* e, compute_t<T>* m,
                                      acc_t<T>* s) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  if (c >= kSoftmaxLongRow) {
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * c;
      C* er = e + r * c;
      const C mr = softmax_rows::RowMax(xr, c);  // a local: er might alias m as far as the vectoriser knows
      m[r] = mr;
      for (int64_t k = 0; k < c; ++k) er[k] = math::exp(Load(xr[k]) - mr);
      s[r] = softmax_rows::RowSum<S>(er, c);
    }
    return;
  }
  // Short rows: the row's max element by element, so that exp runs as one flat loop over the block.
  for (int64_t r = 0; r < rows; ++r) {
    m[r] = softmax_rows::RowMax(x + r * c, c);
    std::fill(e + r * c, e + (r + 1) * c, m[r]);
  }
  const int64_t total = rows * c;
  for (int64_t i = 0; i < total; ++i) e[i] = math::exp(Load(x[i]) - e[i]);
  for (int64_t r = 0; r < rows; ++r) s[r] = softmax_rows::RowSum<S>(e + r * c, c);
}

// Scratch for SoftmaxRowsExp over blocks of rows of c elements: rows_per_block rows at a time.
template <typename T>
struct SoftmaxScratch {
  using C = compute_t<T>;
  explicit SoftmaxScratch(int64_t c)
      : rows_per_block(std::max<int64_t>(1, kSoftmaxBlockElems / std::max<int64_t>(c, 1))),
        e(static_cast<size_t>(rows_per_block * c)),
        m(static_cast<size_t>(rows_per_block)),
        s(static_cast<size_t>(rows_per_block)),
        per_row(static_cast<size_t>(rows_per_block)) {}
  int64_t rows_per_block;
  std::vector<C> e, m;
  std::vector<acc_t<T>> s;
  std::vector<C> per_row;  // free for the caller: a value per row (log(s), 1 / s)
};

// Calls block(r0, rows, scratch) for the rows [begin, end) of x ([*, c], c >= 1), block by block, after
// SoftmaxRowsExp filled the scratch for rows r0 .. r0 + rows.
template <typename T, typename Block>
void ForSoftmaxBlocks(const T* x, int64_t c, int64_t begin, int64_t end, Block block) {
  SoftmaxScratch<T> scratch(c);
  for (int64_t r0 = begin; r0 < end; r0 += scratch.rows_per_block) {
    const int64_t rows = std::min(scratch.rows_per_block, end - r0);
    SoftmaxRowsExp(x + r0 * c, rows, c, scratch.e.data(), scratch.m.data(), scratch.s.data());
    block(r0, rows, scratch);
  }
}

}  // namespace opforge
