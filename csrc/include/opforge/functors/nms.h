// NMSWithMask's math, shared by the CPU kernel (csrc/kernels/cpu/nms_with_mask.cc) and the CUDA kernels
// (csrc/kernels/cuda/nms_with_mask.cu): the order of the boxes (score descending, ties by input position,
// NaN scores last) and whether two boxes overlap above the threshold. A box is (x0, y0, x1, y1, score);
// widths are x1 - x0 (no + 1). Every operation of the overlap rounds to the box's dtype (float16: each
// result stored as a float16, as NumPy computes in float16), and no product is fused into a sum, so the
// CPU and the GPU keep the same boxes.
#pragma once


#include "opforge/half.h"
#include "opforge/portable.h"

namespace opforge {

constexpr int kNmsBoxColumns = 5;

// Whether box a (input position ia) goes before box b: the higher score first, equal scores by position,
// NaN scores after every number.
template <typename T>
OPF_HD bool NmsBefore(const T* a, int64_t ia, const T* b, int64_t ib) {
  const compute_t<T> sa = Load(a[4]), sb = Load(b[4]);
  const bool a_nan = !(sa == sa), b_nan = !(sb == sb);
  if (a_nan || b_nan) return a_nan && b_nan ? ia < ib : b_nan;
  return sa == sb ? ia < ib : sb < sa;
}

namespace nms {

template <typename T>
OPF_HD compute_t<T> Round(compute_t<T> v) {
  return Load(Store<T>(v));
}

// NumPy's minimum / maximum: a NaN operand is the result.
template <typename C>
OPF_HD C Min(C a, C b) {
  return !(a == a) ? a : !(b == b) ? b : (b < a ? b : a);
}
template <typename C>
OPF_HD C Max(C a, C b) {
  return !(a == a) ? a : !(b == b) ? b : (a < b ? b : a);
}

// a * b rounded on its own: never contracted with a following add into an FMA.
OPF_HD float Mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

template <typename T>
OPF_HD compute_t<T> Area(const T* box) {
  return Round<T>(Mul(Round<T>(Load(box[2]) - Load(box[0])), Round<T>(Load(box[3]) - Load(box[1]))));
}

}  // namespace nms

// IoU(a, b) = I / (area_a + area_b - I) > threshold, I the intersection's area (0 where they do not meet;
// NaN coordinates give NaN, which suppresses nothing). `threshold` is already in T's precision.
template <typename T>
OPF_HD bool NmsOverlaps(const T* a, const T* b, compute_t<T> threshold) {
  using C = compute_t<T>;
  using nms::Max;
  using nms::Min;
  using nms::Round;
  const C width = Max(Round<T>(Min(Load(a[2]), Load(b[2])) - Max(Load(a[0]), Load(b[0]))), C(0));
  const C height = Max(Round<T>(Min(Load(a[3]), Load(b[3])) - Max(Load(a[1]), Load(b[1]))), C(0));
  const C inter = Round<T>(nms::Mul(width, height));
  const C area_sum = Round<T>(nms::Area(a) + nms::Area(b));
  return Round<T>(inter / Round<T>(area_sum - inter)) > threshold;
}

}  // namespace opforge
