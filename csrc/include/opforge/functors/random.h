// The counter-based generator of Dropout and the random operators (Randn, RandExt, RandInt), shared by the
// CPU kernels (csrc/kernels/cpu/cumsum.cc, random.cc) and the CUDA kernels (cumsum.cu, random.cu): draw j of
// a call with seeds (seed0, seed1) is
//   key = SplitMix64(SplitMix64(seed0) ^ seed1),  bits = SplitMix64(key ^ SplitMix64(j)),
//   U = (bits >> 11) * 2^-53 (a double in [0, 1) with 53 random bits),
// and SplitMix64 is Steele, Lea and Flood's finaliser (the one java.util.SplittableRandom uses). It is
// a pure function of (seeds, index), so the same seeds give the same values on every backend and thread
// split. Dropout keeps element i when U(key, i) < keep_prob. Host and device; no standard library but
// the math functions of opforge/math.h.
#pragma once

#include "opforge/math.h"
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

OPF_HD uint64_t RandomBits(uint64_t key, int64_t j) { return SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(j))); }

// Uniform in [0, 1), 53 random bits.
OPF_HD double Uniform01(uint64_t key, int64_t j) {
  return static_cast<double>(RandomBits(key, j) >> 11) * (1.0 / 9007199254740992.0);
}

// Whether element i is kept.
OPF_HD bool DropoutKeep(uint64_t key, int64_t i, double keep_prob) { return Uniform01(key, i) < keep_prob; }

// Standard normal values by Box-Muller in C (float or double): elements 2k and 2k + 1 are r cos(t) and
// r sin(t) of pair k, r = sqrt(-2 ln(1 - u_2k)), t = 2 pi u_2k+1 (1 - u is in (0, 1], so the log is finite).
template <typename C>
struct NormalPair {
  C r, t;
  OPF_HD NormalPair(uint64_t key, int64_t k)
      : r(math::sqrt(C(-2) * math::log(static_cast<C>(1.0 - Uniform01(key, 2 * k))))),
        t(C(6.283185307179586) * static_cast<C>(Uniform01(key, 2 * k + 1))) {}
  OPF_HD C First() const { return r * math::cos(t); }
  OPF_HD C Second() const { return r * math::sin(t); }
};

template <typename C>
OPF_HD C StandardNormalAt(uint64_t key, int64_t i) {
  const NormalPair<C> pair(key, i >> 1);
  return (i & 1) ? pair.Second() : pair.First();
}

// An integer in [low, low + range) for element i, range >= 1: the high 64 bits of bits * range
// (Lemire's multiply-shift; each value's probability within range / 2^64 of uniform).
OPF_HD int64_t UniformIntAt(uint64_t key, int64_t i, int64_t low, uint64_t range) {
  const uint64_t bits = RandomBits(key, i);
#if defined(__CUDA_ARCH__)
  const uint64_t high = __umul64hi(bits, range);
#else
  const uint64_t high = static_cast<uint64_t>((static_cast<unsigned __int128>(bits) * range) >> 64);
#endif
  return static_cast<int64_t>(static_cast<uint64_t>(low) + high);
}

}  // namespace opforge
