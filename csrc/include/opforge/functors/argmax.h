// Argmax's rule for the best value along the axis (np.argmax), shared by the CPU kernels
// (csrc/kernels/cpu/argmax.cc) and the CUDA kernels (csrc/kernels/cuda/argmax.cu).
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// Whether v replaces the best so far: strictly larger (so ties keep the first), or the first NaN
// (NaN counts as the largest value).
template <typename C>
OPF_HD bool ArgMaxReplaces(C v, C best) {
  return !math::IsNan(best) && (v > best || math::IsNan(v));
}

}  // namespace opforge
