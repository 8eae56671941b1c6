// Optimizer updates, written in place: the Python side points each in-place output at its
// Parameter's own buffer, and ApplyMomentum also writes its 'accumulation' input buffer.
//   ApplyGradientDescent(var, alpha, delta):  var -= alpha * delta
//   ApplyMomentum(variable, accumulation, learning_rate, gradient, momentum), attrs use_nesterov,
//     gradient_scale:  acc = acc * momentum + gradient * gradient_scale;
//                      variable -= lr * acc   (nesterov: lr * (gradient * gradient_scale + momentum * acc))
//   Adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient), attr use_nesterov:
//     lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);  m += (g - m) * (1 - beta1);
//     v += (g * g - v) * (1 - beta2);  var -= lr_t * m / (sqrt(v) + epsilon)
//     (nesterov: var -= lr_t * (m * beta1 + (1 - beta1) * g) / (sqrt(v) + epsilon))
//   ApplyRMSProp(var, mean_square, moment, learning_rate, grad, decay, momentum, epsilon):
//     ms = ms * decay + (1 - decay) * g^2;  moment = moment * momentum + lr * g / sqrt(ms + epsilon);
//     var -= moment   (mean_square and moment written in place through their input buffers)
//   ApplyCenteredRMSProp(var, mean_gradient, mean_square, moment, grad, learning_rate, decay, momentum,
//     epsilon): as ApplyRMSProp with mg = mg * decay + (1 - decay) * g and sqrt(ms - mg^2 + epsilon)
//   ApplyAdagrad(var, accum, lr, grad), attr update_slots: accum += g^2;  var -= lr * g / sqrt(accum)
//   AdamWeightDecay(var, m, v, lr, beta1, beta2, epsilon, decay, gradient):
//     m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
//     var -= lr * (m / (sqrt(v) + epsilon) + decay * var)
// Every update is elementwise (each element is read before it is written), so the outputs may
// alias their inputs. Scalars are 0-d or [1] tensors; the half types compute in float. The math is
// opforge/functors/optimizer.h, shared with the CUDA kernels.
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/functors/optimizer.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

void CheckArity(const KernelContext& ctx, size_t n_in, size_t n_out) {
  OPF_CHECK(ctx.num_inputs() == n_in && ctx.num_outputs() == n_out,
            "For '" << ctx.op_name() << "', the kernel takes " << n_in << " inputs and " << n_out
                    << " outputs, but got " << ctx.num_inputs() << " and " << ctx.num_outputs() << ".");
}

// Input i (`name`) has the shape of input 0 (`ref`).
void CheckLikeInput(const KernelContext& ctx, size_t i, const char* name, const char* ref) {
  OPF_CHECK(ctx.input(i).shape == ctx.input(0).shape,
            "For '" << ctx.op_name() << "', the '" << name << "' must have the shape of '" << ref << "' "
                    << ShapeToString(ctx.input(0).shape) << ", but got " << ShapeToString(ctx.input(i).shape) << ".");
}

// Output o (written into `name`) is the dtype and shape of input 0.
void CheckOutputLikeInput(const KernelContext& ctx, size_t o, const char* name) {
  const TensorMeta& in = ctx.input(0);
  const TensorMeta& out = ctx.output(o);
  OPF_CHECK(out.shape == in.shape && out.dtype == in.dtype,
            "For '" << ctx.op_name() << "', the output " << o << " ('" << name << "') must be " << TypeIdName(in.dtype)
                    << ShapeToString(in.shape) << ", but got " << TypeIdName(out.dtype) << ShapeToString(out.shape)
                    << ".");
}

// Input i (`name`) is a scalar: shape [] or [1].
void CheckScalar(const KernelContext& ctx, size_t i, const char* name) {
  const TensorMeta& t = ctx.input(i);
  OPF_CHECK(t.ndim() == 0 || (t.ndim() == 1 && t.shape[0] == 1),
            "For '" << ctx.op_name() << "', the '" << name << "' must be a scalar (shape [] or [1]), but got shape "
                    << ShapeToString(t.shape) << ".");
}

template <typename T>
class ApplyGradientDescentCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 3, 1);
    CheckScalar(ctx, 1, "alpha");
    CheckLikeInput(ctx, 2, "delta", "var");
    CheckOutputLikeInput(ctx, 0, "var");
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    const T* delta = args.input<T>(2);
    T* out = args.output<T>(0);
    const auto update = GradientDescentUpdate<C>::From(args.input<T>(1));
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = Store<T>(update(Load(var[i]), Load(delta[i])));
    });
  }

 private:
  int64_t n_ = 0;
};

template <typename T>
class ApplyMomentumCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 5, 1);
    CheckLikeInput(ctx, 1, "accumulation", "variable");
    CheckScalar(ctx, 2, "learning_rate");
    CheckLikeInput(ctx, 3, "gradient", "variable");
    CheckScalar(ctx, 4, "momentum");
    CheckOutputLikeInput(ctx, 0, "variable");
    use_nesterov_ = ctx.HasAttr("use_nesterov") && ctx.GetBool("use_nesterov");
    gradient_scale_ = ctx.HasAttr("gradient_scale") ? ctx.GetFloat("gradient_scale") : 1.0;
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    T* acc = static_cast<T*>(args.input_tensor(1).data);  // RW_WRITE: the Parameter's own buffer
    const T* grad = args.input<T>(3);
    T* out = args.output<T>(0);
    const auto update = MomentumUpdate<C>::From(args.input<T>(2), args.input<T>(4), gradient_scale_, use_nesterov_);
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C a = Load(acc[i]);
        const C var_new = update(Load(var[i]), &a, Load(grad[i]));
        acc[i] = Store<T>(a);
        out[i] = Store<T>(var_new);
      }
    });
  }

 private:
  bool use_nesterov_ = false;
  double gradient_scale_ = 1.0;
  int64_t n_ = 0;
};

template <typename T>
class AdamCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 10, 3);
    CheckLikeInput(ctx, 1, "m", "var");
    CheckLikeInput(ctx, 2, "v", "var");
    static const char* const kScalars[] = {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"};
    for (size_t i = 0; i < 6; ++i) CheckScalar(ctx, 3 + i, kScalars[i]);
    CheckLikeInput(ctx, 9, "gradient", "var");
    CheckOutputLikeInput(ctx, 0, "var");
    CheckOutputLikeInput(ctx, 1, "m");
    CheckOutputLikeInput(ctx, 2, "v");
    use_nesterov_ = ctx.HasAttr("use_nesterov") && ctx.GetBool("use_nesterov");
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    const T* m = args.input<T>(1);
    const T* v = args.input<T>(2);
    const T* grad = args.input<T>(9);
    T* var_out = args.output<T>(0);
    T* m_out = args.output<T>(1);
    T* v_out = args.output<T>(2);
    const auto update = AdamUpdate<C>::From(args.input<T>(3), args.input<T>(4), args.input<T>(5), args.input<T>(6),
                                            args.input<T>(7), args.input<T>(8), use_nesterov_);
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C mi = Load(m[i]), vi = Load(v[i]);
        const C var_new = update(Load(var[i]), &mi, &vi, Load(grad[i]));
        m_out[i] = Store<T>(mi);
        v_out[i] = Store<T>(vi);
        var_out[i] = Store<T>(var_new);
      }
    });
  }

 private:
  bool use_nesterov_ = false;
  int64_t n_ = 0;
};

// ApplyRMSProp (centered = false) and ApplyCenteredRMSProp (centered = true): one output (var); the
// state inputs (mean_gradient, mean_square, moment) are written through their own buffers (RW_WRITE).
template <typename T, bool Centered>
class RMSPropCpuKernel : public CpuKernel {
  using C = compute_t<T>;
  // Input positions: the states, the gradient and the scalars lr, decay, momentum, epsilon.
  static constexpr size_t kStates = Centered ? 3 : 2;
  static constexpr size_t kGrad = 4;  // both: after var and the states (or lr)
  static constexpr size_t kLr = Centered ? 5 : 3;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, Centered ? 9 : 8, 1);
    static const char* const kStateNames[] = {"mean_gradient", "mean_square", "moment"};
    for (size_t i = 0; i < kStates; ++i) CheckLikeInput(ctx, 1 + i, kStateNames[i + (Centered ? 0 : 1)], "var");
    CheckLikeInput(ctx, kGrad, "grad", "var");
    CheckScalar(ctx, kLr, "learning_rate");
    static const char* const kScalars[] = {"decay", "momentum", "epsilon"};
    for (size_t i = 0; i < 3; ++i) CheckScalar(ctx, (Centered ? 6 : 5) + i, kScalars[i]);
    CheckOutputLikeInput(ctx, 0, "var");
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    T* states[3] = {};
    for (size_t i = 0; i < kStates; ++i) states[i] = static_cast<T*>(args.input_tensor(1 + i).data);
    const T* grad = args.input<T>(kGrad);
    T* out = args.output<T>(0);
    const size_t s = Centered ? 6 : 5;  // decay, momentum, epsilon
    const T *lr = args.input<T>(kLr), *decay = args.input<T>(s), *momentum = args.input<T>(s + 1),
            *epsilon = args.input<T>(s + 2);
    if constexpr (Centered) {
      const auto update = CenteredRMSPropUpdate<C>::From(lr, decay, momentum, epsilon);
      ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          C mg = Load(states[0][i]), ms = Load(states[1][i]), mom = Load(states[2][i]);
          const C var_new = update(Load(var[i]), &mg, &ms, &mom, Load(grad[i]));
          states[0][i] = Store<T>(mg);
          states[1][i] = Store<T>(ms);
          states[2][i] = Store<T>(mom);
          out[i] = Store<T>(var_new);
        }
      });
    } else {
      const auto update = RMSPropUpdate<C>::From(lr, decay, momentum, epsilon);
      ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          C ms = Load(states[0][i]), mom = Load(states[1][i]);
          const C var_new = update(Load(var[i]), &ms, &mom, Load(grad[i]));
          states[0][i] = Store<T>(ms);
          states[1][i] = Store<T>(mom);
          out[i] = Store<T>(var_new);
        }
      });
    }
  }

 private:
  int64_t n_ = 0;
};

template <typename T>
class ApplyAdagradCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 4, 2);
    CheckLikeInput(ctx, 1, "accum", "var");
    CheckScalar(ctx, 2, "lr");
    CheckLikeInput(ctx, 3, "grad", "var");
    CheckOutputLikeInput(ctx, 0, "var");
    CheckOutputLikeInput(ctx, 1, "accum");
    update_slots_ = !ctx.HasAttr("update_slots") || ctx.GetBool("update_slots");
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    const T* accum = args.input<T>(1);
    const T* grad = args.input<T>(3);
    T* var_out = args.output<T>(0);
    T* accum_out = args.output<T>(1);
    const auto update = AdagradUpdate<C>::From(args.input<T>(2), update_slots_);
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C a = Load(accum[i]);
        const C var_new = update(Load(var[i]), &a, Load(grad[i]));
        accum_out[i] = Store<T>(a);
        var_out[i] = Store<T>(var_new);
      }
    });
  }

 private:
  bool update_slots_ = true;
  int64_t n_ = 0;
};

template <typename T>
class AdamWeightDecayCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    CheckArity(ctx, 9, 3);
    CheckLikeInput(ctx, 1, "m", "var");
    CheckLikeInput(ctx, 2, "v", "var");
    static const char* const kScalars[] = {"lr", "beta1", "beta2", "epsilon", "decay"};
    for (size_t i = 0; i < 5; ++i) CheckScalar(ctx, 3 + i, kScalars[i]);
    CheckLikeInput(ctx, 8, "gradient", "var");
    CheckOutputLikeInput(ctx, 0, "var");
    CheckOutputLikeInput(ctx, 1, "m");
    CheckOutputLikeInput(ctx, 2, "v");
    n_ = ctx.input(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* var = args.input<T>(0);
    const T* m = args.input<T>(1);
    const T* v = args.input<T>(2);
    const T* grad = args.input<T>(8);
    T* var_out = args.output<T>(0);
    T* m_out = args.output<T>(1);
    T* v_out = args.output<T>(2);
    const auto update = AdamWeightDecayUpdate<C>::From(args.input<T>(3), args.input<T>(4), args.input<T>(5),
                                                       args.input<T>(6), args.input<T>(7));
    ParallelForChunks(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C mi = Load(m[i]), vi = Load(v[i]);
        const C var_new = update(Load(var[i]), &mi, &vi, Load(grad[i]));
        m_out[i] = Store<T>(mi);
        v_out[i] = Store<T>(vi);
        var_out[i] = Store<T>(var_new);
      }
    });
  }

 private:
  int64_t n_ = 0;
};

// A kernel attr of n_in inputs and n_out outputs, all of dtype id.
KernelAttr SameDtypeAttr(TypeId id, size_t n_in, size_t n_out) {
  KernelAttr attr;
  for (size_t i = 0; i < n_in; ++i) attr.AddInputAttr(id);
  for (size_t i = 0; i < n_out; ++i) attr.AddOutputAttr(id);
  return attr;
}

#define REG_APPLY_GD(T, ID)                                                                              \
  MS_REG_CPU_KERNEL(ApplyGradientDescent,                                                                \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    ApplyGradientDescentCpuKernel<T>)
#define REG_APPLY_MOMENTUM(T, ID)                                                                        \
  MS_REG_CPU_KERNEL(ApplyMomentum,                                                                       \
                    KernelAttr()                                                                         \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddOutputAttr(ID),                                                              \
                    ApplyMomentumCpuKernel<T>)
#define REG_ADAM(T, ID)                                                                                  \
  MS_REG_CPU_KERNEL(Adam,                                                                                \
                    KernelAttr()                                                                         \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddInputAttr(ID)                                                                \
                        .AddOutputAttr(ID)                                                               \
                        .AddOutputAttr(ID)                                                               \
                        .AddOutputAttr(ID),                                                              \
                    AdamCpuKernel<T>)

REG_APPLY_GD(float16, kNumberTypeFloat16);
REG_APPLY_GD(float, kNumberTypeFloat32);
REG_APPLY_GD(double, kNumberTypeFloat64);
REG_APPLY_MOMENTUM(float16, kNumberTypeFloat16);
REG_APPLY_MOMENTUM(float, kNumberTypeFloat32);
REG_APPLY_MOMENTUM(double, kNumberTypeFloat64);
REG_ADAM(float16, kNumberTypeFloat16);
REG_ADAM(float, kNumberTypeFloat32);
REG_ADAM(double, kNumberTypeFloat64);

#define REG_NEW_OPTIMIZERS(T, ID)                                                                              \
  MS_REG_CPU_KERNEL(ApplyRMSProp, SameDtypeAttr(ID, 8, 1), RMSPropCpuKernel<T, false>);                     \
  MS_REG_CPU_KERNEL(ApplyCenteredRMSProp, SameDtypeAttr(ID, 9, 1), RMSPropCpuKernel<T, true>);              \
  MS_REG_CPU_KERNEL(ApplyAdagrad, SameDtypeAttr(ID, 4, 2), ApplyAdagradCpuKernel<T>);                       \
  MS_REG_CPU_KERNEL(AdamWeightDecay, SameDtypeAttr(ID, 9, 3), AdamWeightDecayCpuKernel<T>)
REG_NEW_OPTIMIZERS(float16, kNumberTypeFloat16);
REG_NEW_OPTIMIZERS(float, kNumberTypeFloat32);
REG_NEW_OPTIMIZERS(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
