// A NumPy-broadcasting binary CPU kernel around the functors of opforge/functors/arithmetic.h.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "opforge/broadcast_plan.h"
#include "opforge/functors/arithmetic.h"

namespace opforge {


// out = Op(a, b) with NumPy broadcasting; the output shape is the one inferred by the caller.
template <typename T, typename Op>
class BroadcastBinaryCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    plan_.Init(ctx.op_name(), ctx.input(0).shape, ctx.input(1).shape, ctx.output(0).shape);
    op_ = FunctorFrom<Op>::Read(ctx);
  }

  void Launch(const KernelArgs& args) override {
    const T* a = args.input<T>(0);
    const T* b = args.input<T>(1);
    T* out = args.output<T>(0);
    const Op op = op_;
    const BroadcastPlan& p = plan_;
    switch (p.kind) {
      case BroadcastPlan::kSame:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          Run(op, a + begin, true, b + begin, true, out + begin, end - begin);
        });
        break;
      case BroadcastPlan::kScalarA:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          Run(op, a, false, b + begin, true, out + begin, end - begin);
        });
        break;
      case BroadcastPlan::kScalarB:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          Run(op, a + begin, true, b, false, out + begin, end - begin);
        });
        break;
      case BroadcastPlan::kGeneral:
        ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
          p.ForEachRun(begin, end, [&](int64_t o, int64_t ia, int64_t ib, int64_t n) {
            Run(op, a + ia, p.a_strides.back() != 0, b + ib, p.b_strides.back() != 0, out + o, n);
          });
        });
        break;
    }
  }

 private:
  // One contiguous output run; an input that does not move is a scalar for the whole run. The
  // pointers are parameters so that byte-typed stores (int8) cannot alias them: no reloads.
  static void Run(const Op op, const T* a, bool a_moves, const T* b, bool b_moves, T* out, int64_t n) {
    if constexpr (IsComplex<T>::value) {
      // A plain loop: the cloned loops' FMA contraction turns a complex product's exact cancellation
      // (a*d - b*c of equal terms) into a rounding residue where NumPy gives 0.
      const compute_t<T> av = Load(a[0]), bv = Load(b[0]);
      for (int64_t i = 0; i < n; ++i) out[i] = Store<T>(op(a_moves ? Load(a[i]) : av, b_moves ? Load(b[i]) : bv));
    } else if (a_moves && b_moves) {
      BinaryLoop(a, b, out, n, op);
    } else if (a_moves) {
      BinaryScalarLoop<false>(a, Load(b[0]), out, n, op);
    } else if (b_moves) {
      BinaryScalarLoop<true>(b, Load(a[0]), out, n, op);
    } else {
      std::fill(out, out + n, Store<T>(op(Load(a[0]), Load(b[0]))));
    }
  }


 protected:
  BroadcastPlan plan_;
  Op op_;
};

}  // namespace opforge
