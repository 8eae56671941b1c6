// Index math of the array (data-movement) operators, shared by the CPU kernels (csrc/kernels/cpu/
// array.cc) and the CUDA kernels (csrc/kernels/cuda/array.cu): elements move as raw bytes, so the
// math is only about offsets.
//
// StridedIndex: the input offset of output element i for Slice, StridedSlice, ReverseV2 and Tile. The
// output's dims (after merging) each walk the input with a stride (negative: reversed) and wrap
// modulo `mod` (Tile: the input dim; otherwise the output dim, so no wrap):
//     offset(i) = base + sum_d (i_d % mod_d) * stride_d,  i = (i_0, ..., i_{n-1}) the output index.
// Concat and Split move rows: the arrays are viewed as [outer, cols], an input's row at a column
// offset in the output's row (ConcatOffset).
#pragma once

#include "opforge/portable.h"

namespace opforge {

constexpr int kMaxIndexDims = 8;

struct StridedIndex {
  int64_t ndim;
  int64_t base;
  int64_t size[kMaxIndexDims];
  int64_t mod[kMaxIndexDims];
  int64_t stride[kMaxIndexDims];

  OPF_HD int64_t Offset(int64_t i) const {
    int64_t offset = base;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const int64_t k = i % size[d];
      i /= size[d];
      offset += (k % mod[d]) * stride[d];
    }
    return offset;
  }
};

// The offset in the [outer, out_cols] output of element i of a [outer, in_cols] part placed at
// column `col0` (Concat writes x[i] there; Split reads y[i] from there).
OPF_HD int64_t ConcatOffset(int64_t i, int64_t in_cols, int64_t out_cols, int64_t col0) {
  return (i / in_cols) * out_cols + col0 + i % in_cols;
}

}  // namespace opforge
