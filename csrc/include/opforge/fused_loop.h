// The CPU's fused loops (opforge/kernels/cpu/fused.py). Sin, Cos and Tan are branch-free in float only
// within their argument reduction's range (OPF_TRIG_VECTOR_PATH: Op::Vector, exact where Op::VectorDomain);
// their functors branch to C's function beyond it, and that branch keeps a loop around them scalar. A fused
// loop therefore runs a block in two passes at most: the first applies each such functor's vector path and
// records whether any argument (an input or a value computed in the loop) fell outside its domain; only
// then is the block computed again with the functors themselves. Both give each element what the unfused
// kernels give (the vector path equals the functor in its domain), and the usual block takes one
// vectorised pass.
#pragma once

#include <type_traits>

namespace opforge {
namespace fused {

template <typename Op, typename = void>
struct HasVectorPath : std::false_type {};
template <typename Op>
struct HasVectorPath<Op, std::void_t<decltype(Op::Vector(0.0f)), decltype(Op::VectorDomain(0.0f))>>
    : std::true_type {};

// Whether a loop in T applying the functors Ops needs the two passes.
template <typename T, typename... Ops>
constexpr bool kAnyVectorPath = std::is_same_v<T, float> && (HasVectorPath<Ops>::value || ...);

// op(x) as T in the first pass: the vector path where op has one (x outside its domain sets outside),
// else op itself.
template <typename T, typename Op, typename A>
inline __attribute__((always_inline)) T Fast(int& outside, Op op, A x) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<A, float> && HasVectorPath<Op>::value) {
    outside |= !Op::VectorDomain(x);
    return Op::Vector(x);
  } else {
    return static_cast<T>(op(x));
  }
}

// The binary and ternary functors have no vector path (Pow's vmath::Pow is branch-free already).
template <typename T, typename Op, typename A, typename B, typename... Rest>
inline __attribute__((always_inline)) T Fast(int&, Op op, A a, B b, Rest... rest) {
  return static_cast<T>(op(a, b, rest...));
}

}  // namespace fused
}  // namespace opforge
