// The counter-based generator of Dropout, shared by the CPU kernels (csrc/kernels/cpu/cumsum.cc) and
// the CUDA kernels (csrc/kernels/cuda/cumsum.cu): element i of a call with seeds (seed0, seed1) keeps
// its value when U(key, i) < keep_prob, where
//   key = SplitMix64(SplitMix64(seed0) ^ seed1),  bits = SplitMix64(key ^ SplitMix64(i)),
//   U = (bits >> 11) * 2^-53 (a double in [0, 1) with 53 random bits),
// and SplitMix64 is Steele, Lea and Flood's finaliser (the one java.util.SplittableRandom uses). It is
// a pure function of (seeds, index), so the same seeds give the same mask on every backend and thread
// split. Host and device; no standard library.
#pragma once

#include "opforge/portable.h"

namespace opforge {

OPF_HD uint64_t SplitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

OPF_HD uint64_t DropoutKey(int64_t seed0, int64_t seed1) {
  return SplitMix64(SplitMix64(static_cast<uint64_t>(seed0)) ^ static_cast<uint64_t>(seed1));
}

// Whether element i is kept.
OPF_HD bool DropoutKeep(uint64_t key, int64_t i, double keep_prob) {
  const uint64_t bits = SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(i)));
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0) < keep_prob;
}

}  // namespace opforge
