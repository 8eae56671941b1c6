// The counter-based generator of Dropout and the random operators (Randn, RandExt, RandInt, RandGamma,
// RandPoisson), shared by the
// CPU kernels (csrc/kernels/cpu/cumsum.cc, random.cc) and the CUDA kernels (cumsum.cu, random.cu): draw j of
// a call with seeds (seed0, seed1) is
//   key = SplitMix64(SplitMix64(seed0) ^ seed1),  bits = SplitMix64(key ^ SplitMix64(j)),
//   U = (bits >> 11) * 2^-53 (a double in [0, 1) with 53 random bits),
// and SplitMix64 is Steele, Lea and Flood's finaliser (the one java.util.SplittableRandom uses). It is
// a pure function of (seeds, index), so the same seeds give the same values on every backend and thread
// split. Dropout keeps element i when U(key, i) < keep_prob. Host and device; no standard library but
// the math functions of opforge/math.h.
#pragma once

#include "opforge/limits.h"
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

// The draws of a rejection sampler for element i: a stream of its own (key_i = SplitMix64(key ^ SplitMix64(i))),
// draw j of it Uniform01(key_i, j), so element i's value depends on (seeds, i) alone however many draws
// it takes.
struct ElementStream {
  uint64_t key;
  int64_t next = 0;
  OPF_HD ElementStream(uint64_t launch_key, int64_t i) : key(RandomBits(launch_key, i)) {}
  OPF_HD double Uniform() { return Uniform01(key, next++); }
  // Uniform in (0, 1]: for logarithms.
  OPF_HD double UniformOpen() { return 1.0 - Uniform(); }
  OPF_HD double Normal() { return math::sqrt(-2.0 * math::log(UniformOpen())) * math::cos(6.283185307179586 * Uniform()); }
};

// A standard gamma value (shape alpha, scale 1) for element i, in double (Marsaglia and Tsang, 2000): with
// d = a - 1/3 and c = 1 / sqrt(9 d), draw x normal until v = (1 + c x)^3 > 0 and
// log(u) < x^2 / 2 + d - d v + d log(v) for u uniform (first by the squeeze u < 1 - 0.0331 x^4); the
// value is d v. For alpha < 1, the value for alpha + 1 times u^(1 / alpha). alpha <= 0 or NaN gives NaN,
// +inf gives +inf.
OPF_HD double StandardGammaAt(uint64_t key, int64_t i, double alpha) {
  if (!(alpha > 0.0)) return limits::QuietNaN<double>();
  if (alpha == limits::Infinity<double>()) return alpha;
  ElementStream stream(key, i);
  const double a = alpha < 1.0 ? alpha + 1.0 : alpha;
  const double d = a - 1.0 / 3.0, c = 1.0 / math::sqrt(9.0 * d);
  double value = 0.0;
  for (;;) {
    const double x = stream.Normal(), t = 1.0 + c * x;
    if (t <= 0.0) continue;
    const double v = t * t * t, u = stream.UniformOpen(), x2 = x * x;
    // the squeeze u < 1 - 0.0331 x^4 accepts most draws without the two logarithms
    if (u < 1.0 - 0.0331 * x2 * x2 || math::log(u) < 0.5 * x2 + d - d * v + d * math::log(v)) {
      value = d * v;
      break;
    }
  }
  if (alpha < 1.0) value *= math::exp(math::log(stream.UniformOpen()) / alpha);
  return value;
}

// log(k!) for k >= 0: a table to 9, Stirling's series beyond (error < 1e-10 there).
OPF_HD double LogFactorial(double k) {
  if (k < 10.0) {
    double f = 1.0;
    for (int j = 2; j <= static_cast<int>(k); ++j) f *= j;
    return math::log(f);
  }
  const double k1 = k + 1.0;
  return (k1 - 0.5) * math::log(k1) - k1 + 0.9189385332046728 + 1.0 / (12.0 * k1) - 1.0 / (360.0 * k1 * k1 * k1);
}

// A Poisson count of mean rate for element i, as a double: for rate < 10, the number of uniforms whose
// running product stays above exp(-rate) (Knuth); beyond, Hormann's transformed rejection (PTRS, 1993).
// rate < 0, +inf or NaN gives NaN (PoissonAs: -1 in an integer type); rate 0 gives 0.
OPF_HD double PoissonAt(uint64_t key, int64_t i, double rate) {
  if (!(rate >= 0.0) || rate == limits::Infinity<double>()) return limits::QuietNaN<double>();
  if (rate == 0.0) return 0.0;
  ElementStream stream(key, i);
  if (rate < 10.0) {
    const double limit = math::exp(-rate);
    double product = stream.Uniform(), count = 0.0;
    while (product > limit) {
      product *= stream.Uniform();
      count += 1.0;
    }
    return count;
  }
  const double log_rate = math::log(rate), b = 0.931 + 2.53 * math::sqrt(rate), a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), v_r = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = stream.Uniform() - 0.5, v = stream.UniformOpen();
    const double us = 0.5 - (u < 0.0 ? -u : u);
    const double k = math::floor((2.0 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (math::log(v) + math::log(inv_alpha) - math::log(a / (us * us) + b) <= -rate + k * log_rate - LogFactorial(k))
      return k;
  }
}

// PoissonAt's count stored as T: an integer type takes NaN (an invalid rate) as -1, which no count is, and
// a count past its range as its highest value.
template <typename T>
OPF_HD T PoissonAs(uint64_t key, int64_t i, double rate) {
  const double k = PoissonAt(key, i, rate);
  if constexpr (IsIntegral<compute_t<T>>::value) {  // (compute_t: the half types are floats)
    if (k != k) return T(-1);
    return k >= static_cast<double>(limits::Highest<T>()) ? limits::Highest<T>() : static_cast<T>(k);
  } else {
    return Store<T>(static_cast<compute_t<T>>(k));
  }
}

}  // namespace opforge
