// Range's per-element math, shared by the CPU kernel (csrc/kernels/cpu/range.cc) and the CUDA kernel
// (csrc/kernels/cuda/range.cu): out[i] = start + i * delta, in int64 for integer outputs (exact) and
// in double for float outputs (rounded once to the output's type).
#pragma once

#include "opforge/portable.h"

namespace opforge {

template <typename T>
struct RangeOp {
  using A = conditional_t<IsIntegral<T>::value, int64_t, double>;
  A start, delta;

  OPF_HD T operator()(int64_t i) const { return static_cast<T>(start + static_cast<A>(i) * delta); }
};

}  // namespace opforge
