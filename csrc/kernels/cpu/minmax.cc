// Maximum, Minimum with NumPy broadcasting (NaN propagates, as in np.maximum / np.minimum), and their
// grads MaximumGrad, MinimumGrad(x, y, dout) -> (dx, dy): dout goes to the input the forward op picked
// (x on ties), the other gets 0; x and y broadcast to dout's shape, and dx and dy have x's and y's
// shapes (as MindSpore's): where an input was broadcast, its gradient is summed over those dims.
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/scan.h"
#include "opforge/functors/arithmetic.h"
#include "opforge/functors/reduce.h"

namespace opforge {
namespace {

template <typename T, bool kMax>
class MinMaxGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& dout = ctx.input(2);
    for (size_t i = 0; i < 2; ++i) {
      OPF_CHECK(ctx.input(i).dtype == dout.dtype, "For '" << ctx.op_name() << "', the input " << i
                                                         << " must have the dtype of 'dout' "
                                                         << TypeIdName(dout.dtype) << ", but got "
                                                         << TypeIdName(ctx.input(i).dtype) << ".");
      CheckSameMeta(ctx, ctx.input(i), ctx.output(i), i == 0 ? "output dx" : "output dy");
    }
    // Checks that x and y broadcast to dout's shape.
    plan_.Init(ctx.op_name(), ctx.input(0).shape, ctx.input(1).shape, dout.shape);
    x_size_ = ctx.input(0).numel();
    y_size_ = ctx.input(1).numel();
    grad_x_ = !ctx.HasAttr("grad_x") || ctx.GetBool("grad_x");
    grad_y_ = !ctx.HasAttr("grad_y") || ctx.GetBool("grad_y");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* y = args.input<T>(1);
    const T* g = args.input<T>(2);
    T* dx = args.output<T>(0);
    T* dy = args.output<T>(1);
    const BroadcastPlan& p = plan_;
    const bool gx = grad_x_, gy = grad_y_;
    if (x_size_ != p.numel || y_size_ != p.numel) {
      LaunchSummed(x, y, g, dx, dy);
      return;
    }
    ParallelForChunks(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
      switch (p.kind) {
        case BroadcastPlan::kSame:
          Run(x + begin, 1, y + begin, 1, g + begin, dx + begin, dy + begin, end - begin, gx, gy);
          break;
        case BroadcastPlan::kScalarA:
          Run(x, 0, y + begin, 1, g + begin, dx + begin, dy + begin, end - begin, gx, gy);
          break;
        case BroadcastPlan::kScalarB:
          Run(x + begin, 1, y, 0, g + begin, dx + begin, dy + begin, end - begin, gx, gy);
          break;
        case BroadcastPlan::kGeneral:
          p.ForEachRun(begin, end, [&](int64_t o, int64_t ix, int64_t iy, int64_t n) {
            Run(x + ix, p.a_strides.back(), y + iy, p.b_strides.back(), g + o, dx + o, dy + o, n, gx, gy);
          });
          break;
      }
    });
  }

 private:
  // One contiguous run of dout; x and y advance by their strides (0: broadcast, 1: contiguous).
  static void Run(const T* x, int64_t sx, const T* y, int64_t sy, const T* g, T* dx, T* dy, int64_t n, bool gx,
                  bool gy) {
    const T zero = Store<T>(compute_t<T>(0));
    for (int64_t i = 0; i < n; ++i) {
      const bool to_x = PicksX<kMax>(Load(x[i * sx]), Load(y[i * sy]));
      dx[i] = (to_x && gx) ? g[i] : zero;
      dy[i] = (!to_x && gy) ? g[i] : zero;
    }
  }

  // An input was broadcast: each element of dx (dy) sums dout over the elements it was broadcast to,
  // in one pass in dout's order (deterministic), accumulating as ReduceSum does (acc_t).
  void LaunchSummed(const T* x, const T* y, const T* g, T* dx, T* dy) const {
    using A = acc_t<T>;
    using C = compute_t<T>;
    std::vector<A> ax(static_cast<size_t>(x_size_), A(0)), ay(static_cast<size_t>(y_size_), A(0));
    const BroadcastPlan& p = plan_;
    auto run = [&](int64_t o, int64_t ix, int64_t sx, int64_t iy, int64_t sy, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t jx = ix + i * sx, jy = iy + i * sy;
        const A gi = static_cast<A>(Load(g[o + i]));
        if (PicksX<kMax>(Load(x[jx]), Load(y[jy]))) {
          if (grad_x_) ax[jx] += gi;
        } else if (grad_y_) {
          ay[jy] += gi;
        }
      }
    };
    switch (p.kind) {
      case BroadcastPlan::kSame:
        run(0, 0, 1, 0, 1, p.numel);
        break;
      case BroadcastPlan::kScalarA:
        run(0, 0, 0, 0, 1, p.numel);
        break;
      case BroadcastPlan::kScalarB:
        run(0, 0, 1, 0, 0, p.numel);
        break;
      case BroadcastPlan::kGeneral:
        p.ForEachRun(0, p.numel, [&](int64_t o, int64_t ix, int64_t iy, int64_t n) {
          run(o, ix, p.a_strides.back(), iy, p.b_strides.back(), n);
        });
        break;
    }
    for (int64_t i = 0; i < x_size_; ++i) dx[i] = Store<T>(static_cast<C>(ax[i]));
    for (int64_t i = 0; i < y_size_; ++i) dy[i] = Store<T>(static_cast<C>(ay[i]));
  }

  BroadcastPlan plan_;
  int64_t x_size_ = 0, y_size_ = 0;
  bool grad_x_ = true;
  bool grad_y_ = true;
};

#define REG_BINARY(OP, FUNCTOR, T)                       \
  MS_REG_CPU_KERNEL(OP,                                  \
                    KernelAttr()                         \
                        .AddInputAttr(TypeIdOf<T>::value)  \
                        .AddInputAttr(TypeIdOf<T>::value)  \
                        .AddOutputAttr(TypeIdOf<T>::value), \
                    BroadcastBinaryCpuKernel<T, FUNCTOR>)
#define REG_MINMAX(OP, FUNCTOR) \
  REG_BINARY(OP, FUNCTOR, float16);  \
  REG_BINARY(OP, FUNCTOR, bfloat16); \
  REG_BINARY(OP, FUNCTOR, float);    \
  REG_BINARY(OP, FUNCTOR, double);   \
  REG_BINARY(OP, FUNCTOR, int8_t);   \
  REG_BINARY(OP, FUNCTOR, int16_t);  \
  REG_BINARY(OP, FUNCTOR, int32_t);  \
  REG_BINARY(OP, FUNCTOR, int64_t);  \
  REG_BINARY(OP, FUNCTOR, uint8_t);   \
  REG_BINARY(OP, FUNCTOR, uint16_t);  \
  REG_BINARY(OP, FUNCTOR, uint32_t);  \
  REG_BINARY(OP, FUNCTOR, uint64_t)

REG_MINMAX(Maximum, MaximumOp);
REG_MINMAX(Minimum, MinimumOp);

#define REG_GRAD(OP, T, MAX)                                      \
  MS_REG_CPU_KERNEL(OP,                                           \
                    KernelAttr()                                  \
                        .AddInputAttr(TypeIdOf<T>::value)         \
                        .AddInputAttr(TypeIdOf<T>::value)         \
                        .AddInputAttr(TypeIdOf<T>::value)         \
                        .AddOutputAttr(TypeIdOf<T>::value)        \
                        .AddOutputAttr(TypeIdOf<T>::value),       \
                    MinMaxGradCpuKernel<T, MAX>)
#define REG_GRADS(OP, MAX)       \
  REG_GRAD(OP, float16, MAX);    \
  REG_GRAD(OP, bfloat16, MAX);   \
  REG_GRAD(OP, float, MAX);      \
  REG_GRAD(OP, double, MAX);     \
  REG_GRAD(OP, int32_t, MAX);    \
  REG_GRAD(OP, int64_t, MAX)

REG_GRADS(MaximumGrad, true);
REG_GRADS(MinimumGrad, false);

}  // namespace
}  // namespace opforge
