// Argmax's and Argmin's rules for the best value along the axis (np.argmax), shared by the CPU kernels
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

// Argmin's rule (np.argmin): strictly smaller replaces (ties keep the first); the first NaN wins.
template <typename C>
OPF_HD bool ArgMinReplaces(C v, C best) {
  return !math::IsNan(best) && (v < best || math::IsNan(v));
}

// The rule of ArgMax (kMin false) or Argmin (kMin true).
template <bool kMin, typename C>
OPF_HD bool ArgReplaces(C v, C best) {
  if constexpr (kMin) {
    return ArgMinReplaces(v, best);
  } else {
    return ArgMaxReplaces(v, best);
  }
}

// Of the winners (v, i) and (best, best_i) of two disjoint parts of the axis, whether (v, i) wins: it
// replaces by the rule, or neither replaces the other (equal values, or both NaN) and it comes first.
// Merging the parts' winners in any order gives the sequential scan's index (the GPU's block trees).
template <bool kMin, typename C>
OPF_HD bool ArgBeats(C v, int64_t i, C best, int64_t best_i) {
  if (ArgReplaces<kMin>(v, best)) return true;
  if (ArgReplaces<kMin>(best, v)) return false;
  return i < best_i;
}

}  // namespace opforge
