// The linear-algebra math the CPU kernels (csrc/kernels/cpu/linalg.cc) and the CUDA kernels
// (csrc/kernels/cuda/linalg.cu) share. Host and device; no standard library but opforge/math.h.
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// Column c of the rows x cols row-major matrix a made a unit vector orthogonal to its columns [0, c) (which
// are orthonormal): the first unit vector e_i whose part orthogonal to them has a squared norm above 1/4
// (Gram-Schmidt, twice for accuracy). The completion of full singular factors and of the singular vectors
// of zero singular values: any orthonormal completion is valid, and this one is the same on both backends.
template <typename T>
OPF_HD void CompleteColumn(T* a, int64_t rows, int64_t cols, int64_t c) {
  for (int64_t e = 0; e < rows; ++e) {
    for (int64_t i = 0; i < rows; ++i) a[i * cols + c] = T(i == e);
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t p = 0; p < c; ++p) {
        T dot = T(0);
        for (int64_t i = 0; i < rows; ++i) dot += a[i * cols + p] * a[i * cols + c];
        for (int64_t i = 0; i < rows; ++i) a[i * cols + c] -= dot * a[i * cols + p];
      }
    }
    T norm = T(0);
    for (int64_t i = 0; i < rows; ++i) norm += a[i * cols + c] * a[i * cols + c];
    if (norm > T(0.25)) {
      norm = math::sqrt(norm);
      for (int64_t i = 0; i < rows; ++i) a[i * cols + c] /= norm;
      return;
    }
  }
}

}  // namespace opforge
