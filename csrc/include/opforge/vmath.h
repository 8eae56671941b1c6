// float32 elementary functions for the CPU written branch-free (selects, integer bit tricks,
// polynomials), so that GCC vectorises an elementwise loop around them at -O3 (AVX-512, AVX2 and the
// baseline x86-64; Pow needs AVX2 for its double arithmetic to vectorise). glibc's scalar expf/tanhf/...
// stop the vectoriser (a call per element): Tanh on 1M floats took 40 ms with them.
//
// Accuracy against a float64 reference over 2^20 random float32 bit patterns, dense [-10, 10] and the
// specials (tests/test_vmath.py asserts the bounds; docs/benchmarks.md lists the measured maxima):
//   Exp 1 ulp, Expm1 2, Log 1, Log1p 2, Tanh 3, Sigmoid 3, Erf 4, Erfc 3, Sin 3, Cos 3, Tan 4 (|x| <= 6000;
//   beyond, C's), Atan 3, Asin 3, Acos 2, Atan2 3, Sinh 3, Cosh 2, Asinh 2, Acosh 3, Atanh 2, Pow 1.
// double stays on C's functions (the CPU's float64 kernels call libm; not vectorised).
// Specials follow C: NaN in, NaN out; exp(-inf) = 0, exp(inf) = inf; log(0) = -inf, log(x < 0) = NaN;
// -0.0 keeps its sign where C keeps it. Denormal inputs and outputs are handled (no flush to zero).
//
// Host only: the device keeps CUDA's math library (opforge/math.h picks).
#pragma once

#if !defined(__CUDACC_RTC__) && !defined(__CUDA_ARCH__)

#include <cstdint>
#include <cstring>

namespace opforge {
namespace vmath {

// Forced inline: in a kernel file with many instantiations GCC's inliner gave up on the larger ones
// (Asinh's Log1p and Log), and a call in the loop body stops the vectoriser.
#define OPF_VINLINE inline __attribute__((always_inline))

OPF_VINLINE uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

OPF_VINLINE float FromBits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// c ? a : b with both already computed, as bit masks: GCC does not if-convert a ?: whose arms do
// floating-point work (it could trap), and the loop would not vectorise. Even a float clamp with plain
// arms (9.1f < a ? 9.1f : a) stayed a branch in the AVX2 clone (the AVX-512 one masked it).
OPF_VINLINE float Select(bool c, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return FromBits((Bits(a) & mask) | (Bits(b) & ~mask));
}

OPF_VINLINE double SelectD(bool c, double a, double b) {
  const uint64_t mask = 0ull - static_cast<uint64_t>(c);
  uint64_t ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  const uint64_t u = (ua & mask) | (ub & ~mask);
  double r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

OPF_VINLINE float Abs(float x) { return FromBits(Bits(x) & 0x7fffffffu); }
OPF_VINLINE float CopySign(float mag, float sign) { return FromBits((Bits(mag) & 0x7fffffffu) | (Bits(sign) & 0x80000000u)); }

// Round to the nearest integer (ties to even) for |x| < 2^22, by the 1.5 * 2^23 trick (no SSE4.1 needed).
OPF_VINLINE float RoundSmall(float x) {
  constexpr float kMagic = 12582912.0f;
  return (x + kMagic) - kMagic;
}

// 2^k for integer k in [-126, 127], from its bits.
OPF_VINLINE float Pow2i(int32_t k) { return FromBits(static_cast<uint32_t>(k + 127) << 23); }

// e^r - 1 for |r| <= ln2 / 2 (Taylor to r^8: the truncation error is below 2^-32 relative).
OPF_VINLINE float Expm1Reduced(float r) {
  float p = 1.0f / 40320;
  p = p * r + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  return r + r * r * p;
}

// x = k ln2 + r, |r| <= ln2 / 2, for |x| < 2^21; ln2 in two parts so k * kLn2Hi is exact.
OPF_VINLINE float ReduceLn2(float x, int32_t* k) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // 11 significant bits
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  // (a NaN, which callers let through their clamps, takes k = 0: no float-to-int conversion of NaN, and
  // no overflow in the exponent arithmetic after; the NaN stays in the returned r)
  const float kf = RoundSmall(Select(x == x, x, 0.0f) * kLog2e);
  *k = static_cast<int32_t>(kf);
  return (x - kf * kLn2Hi) - kf * kLn2Lo;
}

// e^x, 1 ulp. Scaled by 2^k in two halves so results down to the denormals and up to inf come out.
OPF_VINLINE float Exp(float x) {
  const float xc = Select(x < -104.0f, -104.0f, Select(x > 89.0f, 89.0f, x));  // NaN passes through
  int32_t k;
  const float r = ReduceLn2(xc, &k);
  const float p = Expm1Reduced(r) + 1.0f;
  const int32_t k1 = k >> 1;
  return p * Pow2i(k1) * Pow2i(k - k1);  // NaN stays NaN through the clamp and the polynomial
}

// e^x - 1, 2 ulp: (2^k - 1) + 2^k expm1(r); r = x exactly for |x| <= ln2 / 2.
OPF_VINLINE float Expm1(float x) {
  const float xc = Select(x < -18.0f, -18.0f, Select(x > 88.8f, 88.8f, x));
  int32_t k;
  const float r = ReduceLn2(xc, &k);
  const int32_t kc = k > 127 ? 127 : k;  // integer ?: vectorises
  const float t = Pow2i(kc);
  const float p = Expm1Reduced(r);
  // k = 128 (x near 88.7): 2^127 (1 + p) then doubled. NaN stays NaN.
  const float y = Select(k == 0, p, ((t - 1.0f) + t * p) * Pow2i(k - kc));
  // x = -0: the polynomial gives +0; expm1(-0) is -0.
  return Select(x > 88.8f, __builtin_inff(), Select(x < -18.0f, -1.0f, Select(x == 0.0f, x, y)));
}

// log(1 + f) for sqrt(1/2) - 1 <= f < sqrt(2) - 1: f - f^2/2 + f^3 P(f), a least-squares fit near
// minimax (P within 3e-7), no division.
OPF_VINLINE float LogReduced(float f) {
  float p = 0.06717745214700699f;
  p = p * f - 0.12033456563949585f;
  p = p * f + 0.1204051747918129f;
  p = p * f - 0.12367486208677292f;
  p = p * f + 0.1420617252588272f;
  p = p * f - 0.16669142246246338f;
  p = p * f + 0.20002056658267975f;
  p = p * f - 0.24999994039535522f;
  p = p * f + 0.33333325386047363f;
  return f + f * f * (f * p - 0.5f);
}

// log of a positive finite normal-or-denormal x (x = 2^e (1 + f), sqrt(1/2) <= 1 + f < sqrt(2)); the
// result is log(1 + f), e is returned.
OPF_VINLINE float LogPositive(float x, float* e_out) {
  const bool denormal = x < 1.17549435e-38f;
  const float xs = Select(denormal, x * 8388608.0f, x);  // 2^23
  const uint32_t u = Bits(xs);
  // Subtracting the bits of sqrt(1/2) puts 1 + f in [sqrt(1/2), sqrt(2)).
  const uint32_t shifted = u - 0x3f3504f3u;
  const int32_t e = static_cast<int32_t>(shifted) >> 23;
  const float m = FromBits((shifted & 0x007fffffu) + 0x3f3504f3u);
  *e_out = static_cast<float>(e - (denormal ? 23 : 0));
  return LogReduced(m - 1.0f);
}

OPF_VINLINE float Log(float x) {
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  float e;
  const float lm = LogPositive(x, &e);
  const float y = e * kLn2Hi + (lm + e * kLn2Lo);
  const float inf = __builtin_inff();
  return Select(x < 0.0f, __builtin_nanf(""), Select(x == 0.0f, -inf, Select(x == inf, inf, Select(x != x, x, y))));
}

// log(1 + t) + k ln2 for finite t > -1 with 1 + t < 2^126, 1.5 ulp (without k), no special cases: a NaN
// t gives NaN, other t outside the domain garbage. With 1 + t = 2^e m rounded, m in [sqrt(1/2), sqrt(2)),
// the exact m - 1 = t 2^-e + (2^-e - 1) is a float (for e <= 24; beyond, its rounding is far below an ulp
// of the result): the rounding of 1 + t needs no correction (a division). k = 0 keeps a -0 t's sign only
// to f (the callers copy signs themselves).
OPF_VINLINE float Log1pScaled(float t, int32_t k) {
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  const int32_t e = static_cast<int32_t>(Bits(1.0f + t) - 0x3f3504f3u) >> 23;
  const float s = FromBits(static_cast<uint32_t>(127 - e) << 23);  // 2^-e (unsigned: a NaN's e is garbage)
  const float f = t * s - (1.0f - s);
  const float ek = static_cast<float>(e + k);
  return ek * kLn2Hi + (LogReduced(f) + ek * kLn2Lo);
}

// log(1 + x), 2 ulp: Log1pScaled; beyond 2^24 (1 + x must stay below 2^126) log x = log1p(x / 256 - 1)
// + 8 log 2 (x / 256 - 1 is exact there, and log(1 + 1/x) below 2^-28 of the result).
OPF_VINLINE float Log1p(float x) {
  const bool large = x > 16777216.0f;
  const float y = Log1pScaled(Select(large, x * 0.00390625f - 1.0f, x), large ? 8 : 0);
  // x <= -1, inf and +-0 by hand (NaN comes through): NaN, -inf, and x itself.
  const float inf = __builtin_inff();
  const bool special = (x <= -1.0f) | (x == inf) | (x == 0.0f);
  return Select(special, Select(x < -1.0f, __builtin_nanf(""), Select(x == -1.0f, -inf, x)), y);
}

// e^r for |r| <= ln2 / 2: 1 + r + r^2 P(r), P a least-squares fit near minimax of degree 4 (relative
// error 0.3 ulp; Expm1Reduced's Taylor series of degree 8 costs two more steps).
OPF_VINLINE float ExpReducedFit(float r) {
  float p = 0.0013882381608709693f;
  p = p * r + 0.008367182686924934f;
  p = p * r + 0.04166722297668457f;
  p = p * r + 0.16666539013385773f;
  p = p * r + 0.4999999701976776f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

// tanh x = (e^2a - 1) / (e^2a + 1), a = |x|, with x's sign; 3 ulp. With 2a = k ln2 + 2h (|2h| <= ln2 / 2)
// and q = expm1(2h): (q + 1 - 2^-k) / (q + 1 + 2^-k), one division; 1 -+ 2^-k are exact (k <= 24, and
// beyond, tanh is 1 to float), and for k = 0 the numerator is q itself (no cancellation for small a).
// tanh rounds to 1 beyond 9.1, so k <= 27. No libm call, no range checks: vectorises in full.
OPF_VINLINE float Tanh(float x) {
  constexpr float kMagic = 12582912.0f;  // RoundSmall's 1.5 * 2^23: k sits in the low bits of m
  const float a = Abs(x);
  const float ac = Select(a > 9.1f, 9.1f, a);  // NaN passes through
  const float m = ac * 2.88539008177792681f + kMagic;  // 2 / ln2
  const float kf = m - kMagic;
  const float h = (ac - kf * 0.3465728759765625f) - kf * 7.14303410154708616e-7f;  // ln2 / 2 in two parts
  // expm1(2h) / 2 = h + h^2 P(h): a least-squares fit near minimax of expm1 (relative error 0.3 ulp).
  float p = 0.04442362114787102f;
  p = p * h + 0.13387492299079895f;
  p = p * h + 0.33333778381347656f;
  p = p * h + 0.6666615605354309f;
  p = p * h + 0.9999999403953552f;
  const float half_q = h + (h * h) * p;
  const float s = FromBits((Bits(kMagic) + 127u - Bits(m)) << 23);  // 2^-k (a NaN's is garbage: q is NaN)
  const float t = (half_q * 2.0f + (1.0f - s)) / (half_q * 2.0f + (1.0f + s));
  return FromBits(Bits(t) | (Bits(x) & 0x80000000u));  // t >= 0 (+0 at 0): x's sign; -0 stays -0
}

// sigmoid x = 1 / (1 + e^-x), 3 ulp. With -x = k ln2 + r (|r| <= ln2 / 2): 2^(24-k) / (2^(24-k) + 2^24 e^r),
// one division whose operands stay normal floats for -x in [-18, 104] (24 - k in [-126, 50]), so that
// results down to the denormals come out rounded once (sigmoid rounds to 1 below -x = -18 and to 0
// beyond 104). No libm call, no range checks.
OPF_VINLINE float Sigmoid(float x) {
  constexpr float kMagic = 12582912.0f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  const float xc = Select(x < -104.0f, -104.0f, Select(x > 18.0f, 18.0f, x));  // NaN passes through
  const float m = xc * -1.44269504088896341f + kMagic;  // k = round(-x / ln2)
  const float kf = m - kMagic;
  const float r = (-xc - kf * kLn2Hi) - kf * kLn2Lo;
  const float num = FromBits((Bits(kMagic) + 151u - Bits(m)) << 23);  // 2^(24 - k)
  return num / (ExpReducedFit(r) * 16777216.0f + num);  // NaN: e^r is NaN
}

// erf x for |x| < 1 by the Maclaurin series (to x^21).
OPF_VINLINE float ErfSeries(float x) {
  const float z = x * x;
  float s = -1.0f / (3628800.0f * 21);  // n = 10 of (-1)^(n+1) / (n! (2n + 1)); n = 11 is below 2^-40
  s = s * z + 1.0f / (362880.0f * 19);
  s = s * z - 1.0f / (40320.0f * 17);
  s = s * z + 1.0f / (5040.0f * 15);
  s = s * z - 1.0f / (720.0f * 13);
  s = s * z + 1.0f / (120.0f * 11);
  s = s * z - 1.0f / (24.0f * 9);
  s = s * z + 1.0f / (6.0f * 7);
  s = s * z - 1.0f / (2.0f * 5);
  s = s * z + 1.0f / 3;
  s = s * z;
  constexpr float kTwoOverSqrtPi = 1.12837916709551257f;
  return kTwoOverSqrtPi * (x - x * s);
}

// erf x, 4 ulp. |x| < 1: the Maclaurin series (to x^21); beyond: 1 - erfc, erfc x = e^{-x^2} P(t)
// with Abramowitz and Stegun's 7.1.26 polynomial in t = 1 / (1 + p x) (absolute error 1.5e-7);
// erf rounds to 1 beyond 3.92.
OPF_VINLINE float Erf(float x) {
  const float a = Abs(x);
  const float small = ErfSeries(x);
  const float ac = Select(a > 4.0f, 4.0f, a);
  const float t = 1.0f / (1.0f + 0.3275911f * ac);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  p = p * t;
  const float large = CopySign(1.0f - p * Exp(-ac * ac), x);
  return Select(a < 1.0f, Select(a == 0.0f, x, small), large);  // NaN: large is NaN; -0 stays -0
}

// ---------------------------------------------------------------------------------------------
// Trigonometric functions. Cody-Waite reduction x = j pi/2 + r, |r| <= pi/4, with pi/2 in three parts
// (12, 12 and 24 significant bits) so that j * part is exact for the first two for |j| < 2^12: enough for
// |x| <= kTrigVectorMax. Beyond it (and for inf / NaN) callers take the scalar path (TrigInVectorRange).

constexpr float kTrigVectorMax = 6000.0f;

OPF_VINLINE bool TrigInVectorRange(float x) { return Abs(x) <= kTrigVectorMax; }

// r = x - j pi/2 and the quadrant j & 3.
OPF_VINLINE float ReducePio2(float x, int32_t* quadrant) {
  constexpr float kTwoOverPi = 0.636619772367581343f;
  constexpr float kP1 = 1.57080078125f;
  constexpr float kP2 = -4.453584551811218e-06f;
  constexpr float kP3 = -8.705515752716053e-10f;
  const float j = RoundSmall(Select(TrigInVectorRange(x), x, 0.0f) * kTwoOverPi);
  *quadrant = static_cast<int32_t>(j) & 3;
  // j = 0: r = x exactly (and -0 stays -0: subtracting j * kP2 = -0 would turn it into +0).
  return Select(j == 0.0f, x, ((x - j * kP1) - j * kP2) - j * kP3);
}

// sin r and cos r for |r| <= pi/4 (Taylor to r^11 and r^10: truncation below 2^-28 relative).
OPF_VINLINE float SinReduced(float r) {
  const float z = r * r;
  float p = -1.0f / 39916800;
  p = p * z + 1.0f / 362880;
  p = p * z - 1.0f / 5040;
  p = p * z + 1.0f / 120;
  p = p * z - 1.0f / 6;
  return Select(r == 0.0f, r, r + r * z * p);  // -0 stays -0
}

OPF_VINLINE float CosReduced(float r) {
  const float z = r * r;
  float p = -1.0f / 3628800;
  p = p * z + 1.0f / 40320;
  p = p * z - 1.0f / 720;
  p = p * z + 1.0f / 24;
  return (1.0f - 0.5f * z) + z * z * p;
}

// sin x for |x| <= kTrigVectorMax, 3 ulp; -0 stays -0, NaN stays NaN.
OPF_VINLINE float SinSmall(float x) {
  int32_t q;
  const float r = ReducePio2(x, &q);
  const float v = Select((q & 1) != 0, CosReduced(r), SinReduced(r));
  return FromBits(Bits(v) ^ (static_cast<uint32_t>(q & 2) << 30));
}

OPF_VINLINE float CosSmall(float x) {
  int32_t q;
  const float r = ReducePio2(x, &q);
  q = (q + 1) & 3;
  const float v = Select((q & 1) != 0, CosReduced(r), SinReduced(r));
  return FromBits(Bits(v) ^ (static_cast<uint32_t>(q & 2) << 30));
}

// tan x = tan r (q even) or -1 / tan r (q odd), 4 ulp (the reduction's rounding, up to an ulp of r,
// counts in full near |r| = pi/4); tan r = r + r z P(z), z = r^2, P a least-squares fit near minimax of
// degree 5 (relative error 0.3 ulp on |r| <= pi/4). -0 stays -0 (r + -0 * ...).
OPF_VINLINE float TanSmall(float x) {
  int32_t q;
  const float r = ReducePio2(x, &q);
  const float z = r * r;
  float p = 0.00939570739865303f;
  p = p * z + 0.003102801041677594f;
  p = p * z + 0.024440618231892586f;
  p = p * z + 0.05340839922428131f;
  p = p * z + 0.13338834047317505f;
  p = p * z + 0.33333155512809753f;
  const float t = r + r * z * p;
  return Select((q & 1) != 0, -1.0f / t, t);
}

// ---------------------------------------------------------------------------------------------
// Inverse trigonometric functions. The polynomials are least-squares fits near minimax (relative
// error below 4e-7 of a correction term that is at most 6% of the result).

// atan t for |t| <= tan(pi/8): t + t z P(z), z = t^2.
OPF_VINLINE float AtanReduced(float t) {
  const float z = t * t;
  float p = -0.06456542760133743f;
  p = p * z + 0.10745330154895782f;
  p = p * z - 0.14264129102230072f;
  p = p * z + 0.1999954730272293f;
  p = p * z - 0.3333333134651184f;
  return t + t * z * p;
}

// atan x, 3 ulp: |x| > tan(3pi/8): pi/2 + atan(-1/|x|); |x| > tan(pi/8): pi/4 + atan((|x|-1)/(|x|+1)),
// the offset in two parts (its rounding error is an ulp of a result near pi/8).
OPF_VINLINE float Atan(float x) {
  constexpr float kPio2 = 1.57079632679489662f;
  constexpr float kPio4 = 0.785398163397448310f;
  const float a = Abs(x);
  const bool big = a > 2.41421356237309505f;
  const bool mid = a > 0.414213562373095049f;
  const float num = Select(big, -1.0f, Select(mid, a - 1.0f, a));
  const float den = Select(big, a, Select(mid, a + 1.0f, 1.0f));
  const float offset = Select(big, kPio2, Select(mid, kPio4, 0.0f));
  const float offset_lo = Select(big, -4.3711390001862426e-08f, Select(mid, -2.1855695000931213e-08f, 0.0f));
  return CopySign(offset + (AtanReduced(num / den) + offset_lo), x);  // NaN: num / den is NaN
}

// atan2(y, x), 3 ulp, C's specials: with a = min(|x|, |y|), b = max, atan(a / b) (or pi/4 + atan((a - b) /
// (a + b)) beyond tan(pi/8): one division), then pi/2 - it when |y| > |x|, pi - it when x < 0, y's sign.
// Both zero: 0 or pi by x's sign bit; both infinite: pi/4 or 3pi/4.
OPF_VINLINE float Atan2(float y, float x) {
  constexpr float kPio2 = 1.57079632679489662f, kPio2Lo = -4.3711390001862426e-08f;
  constexpr float kPio4 = 0.785398163397448310f, kPio4Lo = -2.1855695000931213e-08f;
  constexpr float kPi = 3.14159265358979324f, kPiLo = -8.742278012618954e-08f;
  const float ax = Abs(x), ay = Abs(y);
  const bool swap = ay > ax;
  // Scaled down near float's max: a + b below must not overflow (inf / inf is handled apart).
  const float scale = Select(Select(swap, ay, ax) > 1e37f, 0.25f, 1.0f);
  const float a = Select(swap, ax, ay) * scale, b = Select(swap, ay, ax) * scale;
  const bool mid = a > 0.414213562373095049f * b;
  const float t = Select(mid, a - b, a) / Select(mid, a + b, b);
  const float r = Select(mid, kPio4, 0.0f) + (AtanReduced(t) + Select(mid, kPio4Lo, 0.0f));  // [0, pi/4]
  const float r1 = Select(swap, kPio2 - r + kPio2Lo, r);
  const bool x_neg = (Bits(x) >> 31) != 0;
  float v = Select(x_neg, kPi - r1 + kPiLo, r1);
  const float inf = __builtin_inff();
  const bool both_inf = (ax == inf) & (ay == inf);
  v = Select(both_inf, Select(x_neg, 3.0f * kPio4, kPio4), v);
  v = Select((ax == 0.0f) & (ay == 0.0f), Select(x_neg, kPi, 0.0f), v);
  return CopySign(v, y);  // NaN: t is NaN (0/0 and inf/inf are handled above)
}

// asin a for 0 <= a <= 1/2: a + a z P(z), z = a^2.
OPF_VINLINE float AsinReduced(float a, float z) {
  float p = 0.038195107132196426f;
  p = p * z + 0.02650003507733345f;
  p = p * z + 0.04500977694988251f;
  p = p * z + 0.07498814165592194f;
  p = p * z + 0.16666673123836517f;
  return a + a * z * p;
}

// asin x, 3 ulp: |x| <= 1/2 directly; beyond, pi/2 - 2 asin(s), s = sqrt((1 - |x|) / 2) (pi/2 - 2 asin s
// is exact; the error of asin s counts double in a result down to pi/6).
OPF_VINLINE float Asin(float x) {
  constexpr float kPio2 = 1.57079632679489662f;
  const float a = Abs(x);
  const bool small = a <= 0.5f;
  const float z = Select(small, a * a, 0.5f * (1.0f - a));  // |x| > 1: z < 0, sqrt gives NaN
  const float s = __builtin_sqrtf(z);
  const float r = AsinReduced(Select(small, a, s), z);
  return CopySign(Select(small, r, (kPio2 - 2.0f * r) - 4.3711390001862426e-08f), x);
}

// acos x, 2 ulp: pi/2 - asin x for |x| <= 1/2; 2 asin(s) for x > 1/2; pi - 2 asin(s) for x < -1/2.
OPF_VINLINE float Acos(float x) {
  constexpr float kPio2 = 1.57079632679489662f;
  constexpr float kPi = 3.14159265358979324f;
  const float a = Abs(x);
  const bool small = a <= 0.5f;
  const float z = Select(small, a * a, 0.5f * (1.0f - a));
  const float s = __builtin_sqrtf(z);
  const float r = AsinReduced(Select(small, a, s), z);
  const float large = Select(x > 0.0f, 2.0f * r, kPi - 2.0f * r);
  return Select(small, kPio2 - (CopySign(r, x) + 4.3711390001862426e-08f), large);
}

// ---------------------------------------------------------------------------------------------
// Hyperbolic functions

// e^a / 4 for a >= 0, NaN or inf, without overflow up to a = 89.5 (sinh and cosh overflow from 89.4):
// with a = k ln2 + r, e^r 2^(k - 2), a normal scale for k in [0, 129].
OPF_VINLINE float QuarterExp(float a) {
  constexpr float kMagic = 12582912.0f;  // RoundSmall's 1.5 * 2^23: k sits in the low bits of m
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  const float ac = Select(a > 89.5f, 89.5f, a);  // NaN passes through
  const float m = ac * 1.44269504088896341f + kMagic;
  const float kf = m - kMagic;
  const float r = (ac - kf * kLn2Hi) - kf * kLn2Lo;
  return ExpReducedFit(r) * FromBits((Bits(m) + (125u - Bits(kMagic))) << 23);  // 2^(k - 2)
}

// sinh x, 2 ulp: |x| < 1, the Maclaurin series (to x^13); beyond, e^|x|/2 - e^-|x|/2 = 2g - 1/(8g),
// g = e^|x|/4 (2g overflows to inf where sinh does).
OPF_VINLINE float Sinh(float x) {
  const float a = Abs(x);
  const float z = a * a;
  float p = 1.0f / 6227020800.0f;
  p = p * z + 1.0f / 39916800;
  p = p * z + 1.0f / 362880;
  p = p * z + 1.0f / 5040;
  p = p * z + 1.0f / 120;
  p = p * z + 1.0f / 6;
  const float small = a + a * z * p;
  const float g = QuarterExp(a);
  return CopySign(Select(a < 1.0f, small, g * 2.0f - 0.125f / g), x);  // NaN: g is NaN
}

// cosh x = e^|x|/2 + e^-|x|/2 = 2g + 1/(8g), g = e^|x|/4; 2 ulp.
OPF_VINLINE float Cosh(float x) {
  const float g = QuarterExp(Abs(x));
  return g * 2.0f + 0.125f / g;
}

// asinh x = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) with x's sign, 3 ulp; beyond 2^15 (x^2 would
// overflow near 2^64) log(2|x|) = log1p(|x| / 8 - 1) + 4 log 2 (|x| / 8 - 1 is exact there).
OPF_VINLINE float Asinh(float x) {
  const float a = Abs(x);
  const bool large = a > 32768.0f;
  const float z = a * a;
  const float t = Select(large, a * 0.125f - 1.0f, a + z / (1.0f + __builtin_sqrtf(1.0f + z)));
  const float y = Log1pScaled(t, large ? 4 : 0);  // NaN: t is NaN
  return CopySign(Select(a == __builtin_inff(), a, y), x);
}

// acosh x = log1p(t + sqrt(2t + t^2)), t = x - 1 (exact), 3 ulp; beyond 2^15 log1p(x / 8 - 1) + 4 log 2.
// x < 1, NaN and inf take sqrt(x - 1): NaN, NaN, inf.
OPF_VINLINE float Acosh(float x) {
  const bool large = x > 32768.0f;
  const float t = x - 1.0f;
  const float r = __builtin_sqrtf(t);
  const float y = Log1pScaled(Select(large, x * 0.125f - 1.0f, t + __builtin_sqrtf(t * t + 2.0f * t)), large ? 4 : 0);
  const bool finite_domain = Bits(x) - 0x3f800000u < 0x40000000u;  // 1 <= x < inf
  return Select(finite_domain, y, r);
}

// atanh x = log1p(t) / 2 with t = 2|x| / (1 - |x|) = 2|x| (1 + g), g = |x| / (1 - |x|) (1 - |x| rounds
// below 1/2, but its error counts only in g's share of t), x's sign; 3 ulp. |x| >= 1 takes sqrt(g): inf at
// 1, NaN beyond.
OPF_VINLINE float Atanh(float x) {
  const float a = Abs(x);
  const float g = a / (1.0f - a);
  const float two_a = a + a;
  const float y = 0.5f * Log1pScaled(two_a * g + two_a, 0);  // NaN: g is NaN
  return CopySign(Select(a >= 1.0f, __builtin_sqrtf(g), y), x);
}

// ---------------------------------------------------------------------------------------------
// erfc

// e^(hi + lo) for |lo| <= 2^-12 |hi| (an argument carried in two floats), 1 ulp.
OPF_VINLINE float ExpHiLo(float hi, float lo) {
  const float hc = Select(hi < -104.0f, -104.0f, Select(hi > 89.0f, 89.0f, hi));
  int32_t k;
  const float r = ReduceLn2(hc, &k) + lo;
  const float p = Expm1Reduced(r) + 1.0f;
  const int32_t k1 = k >> 1;
  return p * Pow2i(k1) * Pow2i(k - k1);
}

// erfc x, 3 ulp. |x| < 1/2: 1 - erf x. Beyond: erfc |x| = e^(-x^2) g(t), t = 2 / (2 + |x|), g a fit of
// erfcx = e^(x^2) erfc x over [1/2, 10.1] (erfc is 0 in float beyond 10.06); e^(-x^2) with x^2 in two
// parts (x split into 12-bit halves, so each product is exact); erfc(-|x|) = 2 - erfc |x|.
OPF_VINLINE float Erfc(float x) {
  const float a = Abs(x);
  const float ac = Select(a > 10.1f, 10.1f, a);  // NaN passes through
  const double t = 2.0 / (2.0 + static_cast<double>(ac));  // in double: g's terms partly cancel
  double g = -0.07444132708647255;
  g = g * t + 0.35137543645889613;
  g = g * t - 0.6112508480374477;
  g = g * t + 0.4067457487408205;
  g = g * t - 0.10843515823135738;
  g = g * t + 0.2355998639021449;
  g = g * t + 0.23476006197868524;
  g = g * t + 0.2836557558730082;
  g = g * t + 0.28197879696343237;
  g = g * t + 3.7665072757953234e-06;
  const float ah = FromBits(Bits(ac) & 0xfffff000u);
  const float al = ac - ah;
  const float hi = -(ah * ah);
  const float lo = -((2.0f * ah + al) * al);
  const float e = static_cast<float>(static_cast<double>(ExpHiLo(hi, lo)) * g);
  const float large = Select(x < 0.0f, 2.0f - e, e);
  return Select(a < 0.5f, 1.0f - ErfSeries(x), large);
}

// ---------------------------------------------------------------------------------------------
// pow, in double: log2|x| to about 2^-36 relative, y log2|x| and 2^(y log2|x|) (2^-26.8) in double, one
// rounding to float at the end (1 ulp), with C's special cases. The CPU's loops take it in two passes over
// a block, y log2|x| (PowExponent) then 2^t (PowFromExponent): in one pass the dependency chain per element
// was too long for the core to overlap enough elements (1.4x slower); a block of ordinary arguments
// (PowVectorDomain) skips the special cases, which cost as much as the rest (Pow: the whole domain).

// log2 of 2^offset x for a positive finite normal float x, in double: x = 2^e m, m in [sqrt(1/2),
// sqrt(2)), log2 m = s Q(s^2) with s = (m - 1) / (m + 1) and Q a fit (relative error 2^-36), by Estrin's
// scheme (a shorter chain than Horner's).
OPF_VINLINE double Log2Normal(float x, int32_t offset) {
  const uint32_t shifted = Bits(x) - 0x3f3504f3u;
  const double m = FromBits((shifted & 0x007fffffu) + 0x3f3504f3u);
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  const double z2 = z * z;
  const double q = (2.8853900817864164 + z * 0.9617966781462626) +
                   z2 * ((0.5770826397580395 + z * 0.41173075665051395) + z2 * 0.33963616735605723);
  return static_cast<double>((static_cast<int32_t>(shifted) >> 23) + offset) + s * q;
}

// log2 of a positive finite (or denormal) float, in double.
OPF_VINLINE double Log2Double(float x) {
  const bool denormal = x < 1.17549435e-38f;
  return Log2Normal(Select(denormal, x * 8388608.0f, x), denormal ? -23 : 0);
}

// 2^t in double for |t| < 2^51 or NaN, relative 2^-26.8: a fit of degree 6 on [-1/2, 1/2] (Estrin's
// scheme), scaled by 2^k through the exponent's bits, k clamped to +-1000 (beyond float's range either
// way: the result rounds to float as inf or 0).
OPF_VINLINE double Exp2Double(double t) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52: k's bits end up in km's low bits
  const double km = t + kMagic;
  const double r = t - (km - kMagic);
  const double r2 = r * r;
  const double p = (1.0 + r * 0.693147185425301) +
                   r2 * ((0.24022648910977568 + r * 0.05550368667706787) +
                         r2 * ((0.009618436075842639 + r * 0.0013385071210053323) + r2 * 0.00015323991131598811));
  int64_t bits;
  std::memcpy(&bits, &km, sizeof bits);
  constexpr int64_t kMagicBits = 0x4338000000000000;
  // k within +-1000 (a NaN too: its bits are beyond either bound)
  bits = bits < kMagicBits - 1000 ? kMagicBits - 1000 : (bits > kMagicBits + 1000 ? kMagicBits + 1000 : bits);
  bits = static_cast<int64_t>(static_cast<uint64_t>(bits + 1023) << 52);  // (k + 1023) in the exponent field: 2^k
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// The arguments PowExponent and PowFromExponent take: x finite, normal and nonzero (either sign), |y| < 2^23.
OPF_VINLINE bool PowVectorDomain(float x, float y) {
  return ((Bits(x) & 0x7fffffffu) - 0x00800000u < 0x7f000000u) & (Abs(y) < 8388608.0f);
}

// |y| rounded to an integer (|y| < 2^23), as the float |y| + 2^23 whose lowest bit is its parity.
OPF_VINLINE float RoundedPlus2p23(float ay) { return ay + 8388608.0f; }

// First pass: y log2|x| in double; NaN for a negative x and a y that is not an integer.
OPF_VINLINE double PowExponent(float x, float y) {
  const float ay = Abs(y);
  const bool fraction = (RoundedPlus2p23(ay) - 8388608.0f) != ay;
  return static_cast<double>(Select((x < 0.0f) & fraction, __builtin_nanf(""), y)) * Log2Normal(Abs(x), 0);
}

// Second pass: 2^t rounded to float, with x's sign for an odd y.
OPF_VINLINE float PowFromExponent(double t, float x, float y) {
  const uint32_t odd_sign = Bits(RoundedPlus2p23(Abs(y))) << 31;
  return FromBits(Bits(static_cast<float>(Exp2Double(t))) | (odd_sign & Bits(x)));
}

// x^y as C's powf, any arguments: pow(x, +-0) = 1 and pow(1, y) = 1 (NaN y too); a negative base takes an
// integer exponent (NaN otherwise), the result negative for an odd one; zeros and infinities by C's table.
// Equal to PowFromExponent(PowExponent(x, y), x, y) in PowVectorDomain (the same arithmetic).
OPF_VINLINE float Pow(float x, float y) {
  const float ay = Abs(y);
  const float yr = (ay + 8388608.0f) - 8388608.0f;  // |y| rounded, exact below 2^23
  const bool is_int = (ay >= 8388608.0f) | (yr == ay);
  const int32_t yi = static_cast<int32_t>(Select(ay < 16777216.0f, ay, 0.0f));
  // The sign bit where y is an odd integer (in integers: a bool & bool here stopped the vectoriser).
  const uint32_t odd_sign = (static_cast<uint32_t>(yi) << 31) & (0u - static_cast<uint32_t>(is_int));
  const float ax = Abs(x);
  const float safe = Select((ax > 0.0f) & (ax < __builtin_inff()), ax, 1.0f);
  const float inf = __builtin_inff();
  const double t = static_cast<double>(y) * Log2Double(safe);  // +-inf for an infinite y
  const float mag = static_cast<float>(Exp2Double(SelectD(t < -160.0, -160.0, SelectD(t > 130.0, 130.0, t))));
  // By C's table: x = 0 gives 0 for y > 0, inf for y < 0; |x| = inf the reverse; |x| < 1 with
  // y = +-inf gives 0 / inf, |x| > 1 inf / 0, |x| = 1 gives 1.
  const bool up = y > 0.0f;
  const float zero_case = Select(up, 0.0f, inf);
  const float inf_x_case = Select(up, inf, 0.0f);
  const float inf_y_case = Select(ax == 1.0f, 1.0f, Select(ax < 1.0f, zero_case, inf_x_case));
  float r = Select(ay == inf, inf_y_case, Select(ax == 0.0f, zero_case, Select(ax == inf, inf_x_case, mag)));
  r = Select((x != x) | (y != y), __builtin_nanf(""), r);
  r = FromBits(Bits(r) | (odd_sign & Bits(x)));  // a negative base to an odd power
  r = Select((x < 0.0f) & (x > -inf) & !is_int, __builtin_nanf(""), r);
  return Select((y == 0.0f) | (x == 1.0f), 1.0f, r);
}

}  // namespace vmath
}  // namespace opforge

#undef OPF_VINLINE

#endif
