// The per-element math of the third batch of elementwise operators, shared by the CPU kernels
// (csrc/kernels/cpu/math_ext.cc) and the CUDA kernels (csrc/kernels/cuda/math_ext.cu):
//   unary     Sinh, Cosh, Tan, Asin, Acos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv
//   bitwise   Invert, BitwiseAnd, BitwiseOr, BitwiseXor (integers)
//   binary    SquaredDifference, Xdivy, Xlogy, DivNoNan, LogicalXor
// Functors see values in compute_t<T> (float for the half types; bool tensors as their bytes).
#pragma once

#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {
namespace math {

// The C math functions only these operators use (the shared ones, and the macros, are in opforge/math.h).
OPF_MATH_FN(trunc)

// The float versions the CPU vectorises (opforge/vmath.h, ulps stated there); double and the device: C's.
OPF_VMATH_FN(erfc, Erfc)
OPF_VMATH_FN(asin, Asin)
OPF_VMATH_FN(acos, Acos)
OPF_VMATH_FN(atan, Atan)
OPF_VMATH_FN(asinh, Asinh)
OPF_VMATH_FN(acosh, Acosh)
OPF_VMATH_FN(atanh, Atanh)

}  // namespace math

// One functor per C math function of one argument (the half types compute in float).
#define OPF_UNARY_MATH_FUNCTOR(NAME, FN) \
  struct NAME {                          \
    template <typename C>                \
    OPF_HD C operator()(C x) const {     \
      return math::FN(x);                \
    }                                    \
  };
OPF_UNARY_MATH_FUNCTOR(SinhOp, sinh)
OPF_UNARY_MATH_FUNCTOR(CoshOp, cosh)
OPF_UNARY_MATH_FUNCTOR(AsinOp, asin)
OPF_UNARY_MATH_FUNCTOR(AcosOp, acos)
OPF_UNARY_MATH_FUNCTOR(AtanOp, atan)
OPF_UNARY_MATH_FUNCTOR(AsinhOp, asinh)
OPF_UNARY_MATH_FUNCTOR(AcoshOp, acosh)
OPF_UNARY_MATH_FUNCTOR(AtanhOp, atanh)
OPF_UNARY_MATH_FUNCTOR(ErfcOp, erfc)
OPF_UNARY_MATH_FUNCTOR(RintOp, rint)
#undef OPF_UNARY_MATH_FUNCTOR

struct TanOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return math::tan(x);
  }
  OPF_TRIG_VECTOR_PATH(TanSmall)
};

// Rounds toward zero; integers are returned as they are.
struct TruncOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    if constexpr (IsFloat<C>::value) {
      return math::trunc(x);
    } else {
      return x;
    }
  }
};

// y = 1 / x (MindSpore's Inv; inf at 0).
struct InvOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return C(1) / x;
  }
};

// ~x, bit by bit (integers).
struct InvertOp {
  template <typename C>
  OPF_HD C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

struct BitwiseAndOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};

struct BitwiseOrOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};

struct BitwiseXorOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};

// (x - y)^2; integers wrap as their multiplication does.
struct SquaredDifferenceOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    if constexpr (IsFloat<C>::value) {
      const C d = a - b;
      return d * d;
    } else {
      const WrapType<C> d = static_cast<WrapType<C>>(a) - static_cast<WrapType<C>>(b);
      return static_cast<C>(d * d);
    }
  }
};

// x / y, and 0 where x = 0 (even for y = 0 or NaN y): MindSpore's Xdivy.
struct XdivyOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a / b;
  }
};

// x * log(y), and 0 where x = 0 (even for y = 0 or NaN y): MindSpore's Xlogy.
struct XlogyOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a * math::log(b);
  }
};

// x / y, and 0 where y = 0: MindSpore's DivNoNan.
struct DivNoNanOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return b == C(0) ? C(0) : a / b;
  }
};

// bool tensors are their bytes: the result is a 0/1 byte.
struct LogicalXorOp {
  template <typename C>
  OPF_HD C operator()(C a, C b) const {
    return (a != C(0)) != (b != C(0)) ? C(1) : C(0);
  }
};

}  // namespace opforge
