// The order of Sort and TopK, of the CUDA kernels (csrc/kernels/cuda/sort.cu) and of the CPU kernels'
// integer keys (csrc/kernels/cpu/sort.cc, OrderKey): values ascending (or descending), NaN greater than every number (last when
// ascending, first when descending, as NumPy / PyTorch), ties broken by the smaller index first (stable).
#pragma once

#include "opforge/half.h"
#include "opforge/portable.h"

namespace opforge {

template <typename T>
OPF_HD bool SortsBefore(T a_, int64_t ia, T b_, int64_t ib, bool descending) {
  const compute_t<T> a = Load(a_), b = Load(b_);
  const bool a_nan = !(a == a), b_nan = !(b == b);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return ia < ib;
    return descending ? a_nan : b_nan;
  }
  if (a == b) return ia < ib;
  return descending ? b < a : a < b;
}

// The position element j of a row (n elements `stride` apart) takes in the sorted row: the number of
// elements that sort before it. The CUDA kernels place each element by it (one thread per element).
template <typename T>
OPF_HD int64_t RankInRow(const T* row, int64_t n, int64_t stride, int64_t j, bool descending) {
  const T v = row[j * stride];
  int64_t rank = 0;
  for (int64_t m = 0; m < n; ++m) {
    if (m != j && SortsBefore(row[m * stride], m, v, j, descending)) ++rank;
  }
  return rank;
}

}  // namespace opforge
