// ApplyGradientDescent, ApplyMomentum, Adam, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad,
// AdamWeightDecay: the updates of opforge/functors/optimizer.h, written in place (var and the state
// inputs - accumulation, m, v, mean_gradient, mean_square, moment, accum - are the Parameters' own buffers).
// Each thread reads the scalar inputs from device memory once.
#include "opforge/cuda.h"
#include "opforge/functors/optimizer.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void ApplyGradientDescentKernel(T* var, const T* alpha, const T* delta, int64_t n) {
  const auto update = GradientDescentUpdate<compute_t<T>>::From(alpha);
  OPF_GRID_STRIDE_LOOP(i, n) { var[i] = Store<T>(update(Load(var[i]), Load(delta[i]))); }
}

template <typename T>
__global__ void ApplyMomentumKernel(T* var, T* acc, const T* lr, const T* gradient, const T* momentum, int64_t n,
                                    double gradient_scale, uint8_t nesterov) {
  const auto update = MomentumUpdate<compute_t<T>>::From(lr, momentum, gradient_scale, nesterov != 0);
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> a = Load(acc[i]);
    const compute_t<T> var_new = update(Load(var[i]), &a, Load(gradient[i]));
    acc[i] = Store<T>(a);
    var[i] = Store<T>(var_new);
  }
}

// scalars: beta1_power, beta2_power, lr, beta1, beta2, epsilon (Adam's inputs 3 to 8).
template <typename T>
__global__ void AdamKernel(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power, const T* lr,
                           const T* beta1, const T* beta2, const T* epsilon, const T* gradient, int64_t n,
                           uint8_t nesterov) {
  const auto update =
      AdamUpdate<compute_t<T>>::From(beta1_power, beta2_power, lr, beta1, beta2, epsilon, nesterov != 0);
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> mi = Load(m[i]), vi = Load(v[i]);
    const compute_t<T> var_new = update(Load(var[i]), &mi, &vi, Load(gradient[i]));
    m[i] = Store<T>(mi);
    v[i] = Store<T>(vi);
    var[i] = Store<T>(var_new);
  }
}

// ApplyRMSProp(var, mean_square, moment, learning_rate, grad, decay, momentum, epsilon).
template <typename T>
__global__ void ApplyRMSPropKernel(T* var, T* ms, T* mom, const T* lr, const T* grad, const T* decay,
                                   const T* momentum, const T* epsilon, int64_t n) {
  const auto update = RMSPropUpdate<compute_t<T>>::From(lr, decay, momentum, epsilon);
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> s = Load(ms[i]), m = Load(mom[i]);
    const compute_t<T> var_new = update(Load(var[i]), &s, &m, Load(grad[i]));
    ms[i] = Store<T>(s);
    mom[i] = Store<T>(m);
    var[i] = Store<T>(var_new);
  }
}

// ApplyCenteredRMSProp(var, mean_gradient, mean_square, moment, grad, learning_rate, decay, momentum, epsilon).
template <typename T>
__global__ void ApplyCenteredRMSPropKernel(T* var, T* mg, T* ms, T* mom, const T* grad, const T* lr,
                                           const T* decay, const T* momentum, const T* epsilon, int64_t n) {
  const auto update = CenteredRMSPropUpdate<compute_t<T>>::From(lr, decay, momentum, epsilon);
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> g_mean = Load(mg[i]), s = Load(ms[i]), m = Load(mom[i]);
    const compute_t<T> var_new = update(Load(var[i]), &g_mean, &s, &m, Load(grad[i]));
    mg[i] = Store<T>(g_mean);
    ms[i] = Store<T>(s);
    mom[i] = Store<T>(m);
    var[i] = Store<T>(var_new);
  }
}

// ApplyAdagrad(var, accum, lr, grad), attr update_slots.
template <typename T>
__global__ void ApplyAdagradKernel(T* var, T* accum, const T* lr, const T* grad, int64_t n, uint8_t update_slots) {
  const auto update = AdagradUpdate<compute_t<T>>::From(lr, update_slots != 0);
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> a = Load(accum[i]);
    const compute_t<T> var_new = update(Load(var[i]), &a, Load(grad[i]));
    accum[i] = Store<T>(a);
    var[i] = Store<T>(var_new);
  }
}

// AdamWeightDecay(var, m, v, lr, beta1, beta2, epsilon, decay, gradient).
template <typename T>
__global__ void AdamWeightDecayKernel(T* var, T* m, T* v, const T* lr, const T* beta1, const T* beta2,
                                      const T* epsilon, const T* decay, const T* gradient, int64_t n) {
  const auto update = AdamWeightDecayUpdate<compute_t<T>>::From(lr, beta1, beta2, epsilon, decay);
  OPF_GRID_STRIDE_LOOP(i, n) {
    compute_t<T> mi = Load(m[i]), vi = Load(v[i]);
    const compute_t<T> var_new = update(Load(var[i]), &mi, &vi, Load(gradient[i]));
    m[i] = Store<T>(mi);
    v[i] = Store<T>(vi);
    var[i] = Store<T>(var_new);
  }
}

}  // namespace cuda
}  // namespace opforge
