// The per-element math of the reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceAll, ReduceAny) and of the sums inside
// Softmax and the losses: the type a sum accumulates in and the reducers (identity, widen, combine,
// finish), shared by the CPU kernels (csrc/kernels/cpu/reduce.cc) and the CUDA kernels
// (csrc/kernels/cuda/reduce.cuh). Host and device; no standard library (NVRTC has none).
#pragma once

#include "opforge/half.h"
#include "opforge/limits.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// Half types sum in float, float32 in double (cheap, and much more accurate), integers in 64 bits.
// The integer one is unsigned so overflow wraps (as NumPy's does) instead of being UB; two's
// complement makes it bit-identical to an int64 sum.
template <typename T>
struct AccType {
  using type = conditional_t<IsIntegral<T>::value, uint64_t, double>;
};
template <>
struct AccType<float16> {
  using type = float;
};
template <>
struct AccType<bfloat16> {
  using type = float;
};
template <typename T>
using acc_t = typename AccType<T>::type;

// Reducers over elements of T: values are widened to A, combined (associatively, so any split of
// the elements into chunks combined in order gives a valid result) and finished into T.
template <typename T>
struct SumReducer {
  using A = acc_t<T>;
  static OPF_HD A Identity() { return A(0); }
  static OPF_HD A Widen(T v) { return static_cast<A>(Load(v)); }
  static OPF_HD A Combine(A a, A b) { return a + b; }
  static OPF_HD T Finish(A sum, int64_t) { return Store<T>(static_cast<compute_t<T>>(sum)); }
  // NumPy: an empty sum is 0.
  static OPF_HD bool EmptyOk() { return true; }
  static OPF_HD T Empty() { return Store<T>(compute_t<T>(0)); }
};

template <typename T>
struct MeanReducer : SumReducer<T> {
  using A = acc_t<T>;
  static OPF_HD T Finish(A sum, int64_t count) {
    return Store<T>(static_cast<compute_t<T>>(sum / static_cast<A>(count)));
  }
  // NumPy: an empty mean is NaN.
  static OPF_HD T Empty() { return Store<T>(limits::QuietNaN<compute_t<T>>()); }
};

template <typename T>
struct MaxReducer {
  using A = compute_t<T>;  // exact: a maximum only selects
  static OPF_HD A Identity() {
    if constexpr (IsFloat<A>::value) {
      return -limits::Infinity<A>();
    } else {
      return limits::Lowest<A>();
    }
  }
  static OPF_HD A Widen(T v) { return Load(v); }
  // A NaN on either side wins, so NaN propagates through every partial result.
  static OPF_HD A Combine(A a, A b) { return (a >= b || math::IsNan(a)) ? a : b; }
  static OPF_HD T Finish(A m, int64_t) { return Store<T>(m); }
  // The maximum of no elements is undefined (the primitive rejects it when inferring).
  static OPF_HD bool EmptyOk() { return false; }
  static OPF_HD T Empty() { return Store<T>(Identity()); }
};

template <typename T>
struct MinReducer {
  using A = compute_t<T>;  // exact: a minimum only selects
  static OPF_HD A Identity() {
    if constexpr (IsFloat<A>::value) {
      return limits::Infinity<A>();
    } else {
      return limits::Highest<A>();
    }
  }
  static OPF_HD A Widen(T v) { return Load(v); }
  // A NaN on either side wins, so NaN propagates through every partial result (as np.min).
  static OPF_HD A Combine(A a, A b) { return (a <= b || math::IsNan(a)) ? a : b; }
  static OPF_HD T Finish(A m, int64_t) { return Store<T>(m); }
  // The minimum of no elements is undefined (the primitive rejects it when inferring).
  static OPF_HD bool EmptyOk() { return false; }
  static OPF_HD T Empty() { return Store<T>(Identity()); }
};

// Product in the sum's accumulation type: floats in double (float16/bfloat16 in float), integers in
// unsigned 64 bits, whose wrap-around gives the low bits of the exact product (NumPy's int prod).
template <typename T>
struct ProdReducer {
  using A = acc_t<T>;
  static OPF_HD A Identity() { return A(1); }
  static OPF_HD A Widen(T v) { return static_cast<A>(Load(v)); }
  static OPF_HD A Combine(A a, A b) { return a * b; }
  static OPF_HD T Finish(A p, int64_t) { return Store<T>(static_cast<compute_t<T>>(p)); }
  // NumPy: an empty product is 1.
  static OPF_HD bool EmptyOk() { return true; }
  static OPF_HD T Empty() { return Store<T>(compute_t<T>(1)); }
};

// Logical and / or over bools, accumulated as bytes 0 / 1 (a byte array of partial results works
// where std::vector<bool> would not): an empty ReduceAll is true, an empty ReduceAny false (np.all, np.any).
struct AllReducer {
  using A = unsigned char;
  static OPF_HD A Identity() { return 1; }
  static OPF_HD A Widen(bool v) { return v ? 1 : 0; }
  static OPF_HD A Combine(A a, A b) { return static_cast<A>(a & b); }
  static OPF_HD bool Finish(A v, int64_t) { return v != 0; }
  static OPF_HD bool EmptyOk() { return true; }
  static OPF_HD bool Empty() { return true; }
};

struct AnyReducer {
  using A = unsigned char;
  static OPF_HD A Identity() { return 0; }
  static OPF_HD A Widen(bool v) { return v ? 1 : 0; }
  static OPF_HD A Combine(A a, A b) { return static_cast<A>(a | b); }
  static OPF_HD bool Finish(A v, int64_t) { return v != 0; }
  static OPF_HD bool EmptyOk() { return true; }
  static OPF_HD bool Empty() { return false; }
};

}  // namespace opforge
