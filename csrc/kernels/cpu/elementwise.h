// Building blocks for elementwise CPU kernels: one loop shape per arity around a functor of
// opforge/functors/ (the math the CUDA kernels share).
#pragma once

#include <type_traits>

#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {

// A functor with its attrs read from the kernel context: attr-free functors need nothing; a kernel
// file specialises this for each functor with fields (EluOp's alpha).
template <typename Op>
struct FunctorFrom {
  static Op Read(const KernelContext&) { return Op{}; }
};

// The elementwise loops are compiled three times, for AVX-512 (x86-64-v4), AVX2 + FMA (x86-64-v3) and
// the baseline x86-64; the dynamic loader picks the widest the CPU runs (an ifunc), so the library still
// runs on any x86-64. The vectorised math of opforge/vmath.h runs 3x faster on AVX-512 than on SSE2.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// flatten: everything the loop calls is inlined into it (in a kernel file with many instantiations GCC's
// inliner left Asinh's functor a call, and a call in the loop body stops the vectoriser).
#define OPF_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define OPF_VECTOR_CLONES
#endif

// A functor whose float math is branch-free on part of the domain only (Sin, Cos, Tan: the argument
// reduction) names that path: Op::Vector(x), exact where Op::VectorDomain(x) (OPF_TRIG_VECTOR_PATH).
template <typename Op, typename C, typename = void>
struct HasVectorPath : std::false_type {};
template <typename Op>
struct HasVectorPath<Op, float, std::void_t<decltype(Op::Vector(0.0f)), decltype(Op::VectorDomain(0.0f))>>
    : std::true_type {};

// y[i] = Op(x[i]) for i in [0, n). With a vector path: block by block, the vector loop when every
// element of the block is in its domain (the usual case), else the functor's own (scalar) loop.
template <typename In, typename Out, typename Op>
OPF_VECTOR_CLONES void UnaryLoop(const In* x, Out* y, int64_t n, Op op) {
  using C = decltype(Load(x[0]));
  if constexpr (HasVectorPath<Op, C>::value) {
    constexpr int64_t kBlock = 2048;
    for (int64_t begin = 0; begin < n; begin += kBlock) {
      const int64_t end = n - begin < kBlock ? n : begin + kBlock;
      int outside = 0;
      for (int64_t i = begin; i < end; ++i) outside |= !Op::VectorDomain(Load(x[i]));
      if (outside == 0) {
        for (int64_t i = begin; i < end; ++i) y[i] = Store<Out>(Op::Vector(Load(x[i])));
      } else {
        for (int64_t i = begin; i < end; ++i) y[i] = Store<Out>(op(Load(x[i])));
      }
    }
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = Store<Out>(op(Load(x[i])));
  }
}

// A binary functor whose float math runs in two passes over a block (Pow, OPF_TWO_PASS_VECTOR_PATH):
// t = Op::VectorFirst(a, b) (a double) for the block, then Op::VectorSecond(t, a, b), which holds where
// Op::VectorDomain(a, b); a block with any pair outside takes the functor's own loop. Two short
// dependency chains per element let the core overlap more elements than one long one.
template <typename Op, typename C, typename = void>
struct HasTwoPassPath : std::false_type {};
template <typename Op>
struct HasTwoPassPath<Op, float,
                      std::void_t<decltype(Op::VectorFirst(0.0f, 0.0f)), decltype(Op::VectorSecond(0.0, 0.0f, 0.0f)),
                                  decltype(Op::VectorDomain(0.0f, 0.0f))>> : std::true_type {};

// out[i] = op(a_at(i), b_at(i)) for i in [0, n) by OPF_TWO_PASS_VECTOR_PATH's blocks (inlined into the
// cloned loops below).
template <typename T, typename Op, typename A, typename B>
inline void TwoPassLoop(A a_at, B b_at, T* out, int64_t n, Op op) {
  constexpr int64_t kBlock = 1024;
  double t[kBlock];
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t m = n - begin < kBlock ? n - begin : kBlock;
    int outside = 0;
    for (int64_t i = 0; i < m; ++i) {
      t[i] = Op::VectorFirst(a_at(begin + i), b_at(begin + i));
      outside |= !Op::VectorDomain(a_at(begin + i), b_at(begin + i));
    }
    if (outside == 0) {
      for (int64_t i = 0; i < m; ++i) {
        out[begin + i] = Store<T>(Op::VectorSecond(t[i], a_at(begin + i), b_at(begin + i)));
      }
    } else {
      for (int64_t i = 0; i < m; ++i) out[begin + i] = Store<T>(op(a_at(begin + i), b_at(begin + i)));
    }
  }
}

// out[i] = Op(a[i], b[i]) for i in [0, n).
template <typename T, typename Op>
OPF_VECTOR_CLONES void BinaryLoop(const T* a, const T* b, T* out, int64_t n, Op op) {
  if constexpr (HasTwoPassPath<Op, compute_t<T>>::value) {
    TwoPassLoop<T>([a](int64_t i) { return Load(a[i]); }, [b](int64_t i) { return Load(b[i]); }, out, n, op);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Store<T>(op(Load(a[i]), Load(b[i])));
  }
}

// out[i] = Op(a[i], s) (or Op(s, a[i]) with ScalarFirst) for i in [0, n): one operand broadcast.
template <bool ScalarFirst, typename T, typename Op>
OPF_VECTOR_CLONES void BinaryScalarLoop(const T* a, compute_t<T> s, T* out, int64_t n, Op op) {
  if constexpr (HasTwoPassPath<Op, compute_t<T>>::value) {
    const auto vector = [a](int64_t i) { return Load(a[i]); };
    const auto scalar = [s](int64_t) { return s; };
    if constexpr (ScalarFirst) {
      TwoPassLoop<T>(scalar, vector, out, n, op);
    } else {
      TwoPassLoop<T>(vector, scalar, out, n, op);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Store<T>(ScalarFirst ? op(s, Load(a[i])) : op(Load(a[i]), s));
  }
}

// Elementwise kernels write one output element per input element: the metas must agree.
inline void CheckSameMeta(const KernelContext& ctx, const TensorMeta& in, const TensorMeta& out, const char* what) {
  OPF_CHECK(in.shape == out.shape && in.dtype == out.dtype,
            "For '" << ctx.op_name() << "', the " << what << " must be " << TypeIdName(in.dtype)
                    << ShapeToString(in.shape) << " like the input, but got " << TypeIdName(out.dtype)
                    << ShapeToString(out.shape) << ".");
}

// y = Op(x), elementwise.
template <typename T, typename Op>
class UnaryCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSameMeta(ctx, ctx.input(0), ctx.output(0), "output");
    n_ = ctx.input(0).numel();
    op_ = FunctorFrom<Op>::Read(ctx);
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const Op op = op_;
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) { UnaryLoop(x + begin, y + begin, end - begin, op); });
  }

 private:
  int64_t n_ = 0;
  Op op_;
};

// y = Op(x), elementwise, with an output dtype of its own (Abs of complex64 is float32).
template <typename In, typename Out, typename Op>
class UnaryToCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& in = ctx.input(0);
    const TensorMeta& out = ctx.output(0);
    OPF_CHECK(in.shape == out.shape && out.dtype == TypeIdOf<Out>::value,
              "For '" << ctx.op_name() << "', the output must be " << TypeIdName(TypeIdOf<Out>::value)
                      << ShapeToString(in.shape) << ", but got " << TypeIdName(out.dtype) << ShapeToString(out.shape)
                      << ".");
    n_ = in.numel();
  }
  void Launch(const KernelArgs& args) override {
    const In* x = args.input<In>(0);
    Out* y = args.output<Out>(0);
    const Op op{};
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = static_cast<Out>(op(Load(x[i])));
    });
  }

 private:
  int64_t n_ = 0;
};

// out = Op(a, b) for two same-shape inputs (grad kernels: dx = Op(dy, y)).
template <typename T, typename Op>
class SameShapeBinaryCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.input(0).shape == ctx.input(1).shape,
              "For '" << ctx.op_name() << "', the inputs must have the same shape, but got "
                      << ShapeToString(ctx.input(0).shape) << " and " << ShapeToString(ctx.input(1).shape) << ".");
    CheckSameMeta(ctx, ctx.input(0), ctx.output(0), "output");
    n_ = ctx.input(0).numel();
    op_ = FunctorFrom<Op>::Read(ctx);
  }
  void Launch(const KernelArgs& args) override {
    const T* a = args.input<T>(0);
    const T* b = args.input<T>(1);
    T* out = args.output<T>(0);
    const Op op = op_;
    ParallelForChunks(n_, kParallelGrain,
                [&](int64_t begin, int64_t end) { BinaryLoop(a + begin, b + begin, out + begin, end - begin, op); });
  }

 private:
  int64_t n_ = 0;
  Op op_;
};

}  // namespace opforge
