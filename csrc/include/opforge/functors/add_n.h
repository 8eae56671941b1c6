// AddN's per-element math, shared by the CPU kernel (csrc/kernels/cpu/add_n.cc) and the CUDA kernel
// (csrc/kernels/cuda/array.cu): out[i] = xs[0][i] + xs[1][i] + ..., summed left to right in the
// compute type (float for the half types, rounded once), integers wrapping as Add's.
#pragma once

#include "opforge/functors/arithmetic.h"
#include "opforge/half.h"

namespace opforge {

template <typename T>
OPF_HD T AddNAt(const T* const* xs, int64_t k, int64_t i) {
  const AddOp add;
  compute_t<T> acc = Load(xs[0][i]);
  for (int64_t j = 1; j < k; ++j) acc = add(acc, Load(xs[j][i]));
  return Store<T>(acc);
}

}  // namespace opforge
