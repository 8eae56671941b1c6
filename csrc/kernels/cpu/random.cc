// The random operators Randn, RandExt (uniform in [0, 1)), RandInt (uniform in [low, high)), RandGamma
// (standard gamma of each alpha) and RandPoisson (a count of each rate): no tensor input but their
// distribution's parameters and their generator's seed and offset (one int64 each, read at every launch, so a counter a trace moves on
// draws new values at each replay). Element i is a pure function of (seed, offset, i)
// (functors/random.h), so any thread split gives the same values, and the GPU (csrc/kernels/cuda/random.cu)
// too: RandExt and RandInt bit for bit, Randn within the rounding of each backend's float math (and of the
// vector unit the CPU's float loop is compiled for).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "opforge/functors/random.h"
#include "opforge/half.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"
#include "opforge/vmath.h"

namespace opforge {
namespace {

// The seed and offset are inputs first and first + 1.
void CheckSeeds(const KernelContext& ctx, int first = 0) {
  for (int i = 0; i < 2; ++i) {
    OPF_CHECK(ctx.input(first + i).numel() == 1, "For '" << ctx.op_name() << "', the '" << (i == 0 ? "seed" : "offset")
                                                         << "' must hold one int64, but got shape "
                                                         << ShapeToString(ctx.input(first + i).shape) << ".");
  }
}

uint64_t LaunchKey(const KernelArgs& args, int first = 0) {
  return DropoutKey(*args.input<int64_t>(first), *args.input<int64_t>(first + 1));
}

// Draw(key, i) -> the value of element i (in double for floats).
template <typename T, typename Draw>
void FillRandom(T* out, int64_t n, uint64_t key, Draw draw) {
  ParallelFor(n, kParallelGrain / 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = draw(key, i);
  });
}

// Pairs [k0, k0 + count) of float normals into out[2k], out[2k + 1] (out[2 * k0] is out[0] here): NormalPair<float>'s
// arithmetic written so the loop vectorises (SplitMix's 64-bit products need x86-64-v4; math::log and
// math::cos / sin of a float angle in [0, 2 pi] are these vmath functions).
OPF_VECTOR_CLONES void FloatNormalPairs(uint64_t key, int64_t k0, int64_t count, float* out) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t k = k0 + j;
    const float r = std::sqrt(-2.0f * vmath::Log(static_cast<float>(1.0 - Uniform01(key, 2 * k))));
    const float t = static_cast<float>(6.283185307179586) * static_cast<float>(Uniform01(key, 2 * k + 1));
    out[2 * j] = r * vmath::CosSmall(t);
    out[2 * j + 1] = r * vmath::SinSmall(t);
  }
}

template <typename T>
class RandnCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSeeds(ctx);
    n_ = ctx.output(0).numel();
  }

  // A pair of elements per step: one log, sqrt and angle for two values (StandardNormalAt's); float
  // outputs but the last odd one through FloatNormalPairs.
  void Launch(const KernelArgs& args) override {
    using C = compute_t<T>;
    T* out = args.output<T>(0);
    const int64_t n = n_;
    const uint64_t key = LaunchKey(args);
    ParallelFor((n + 1) / 2, kParallelGrain / 32, [&](int64_t begin, int64_t end) {
      int64_t k = begin;
      if constexpr (std::is_same_v<T, float>) {
        const int64_t whole = std::min(end, n / 2);  // pairs with both elements inside
        if (whole > k) FloatNormalPairs(key, k, whole - k, out + 2 * k);
        k = std::max(k, whole);
      }
      for (; k < end; ++k) {
        const NormalPair<C> pair(key, k);
        out[2 * k] = Store<T>(pair.First());
        if (2 * k + 1 < n) out[2 * k + 1] = Store<T>(pair.Second());
      }
    });
  }

 private:
  int64_t n_ = 0;
};

template <typename T>
class RandExtCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSeeds(ctx);
    n_ = ctx.output(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    FillRandom(args.output<T>(0), n_, LaunchKey(args), [](uint64_t key, int64_t i) {
      return Store<T>(static_cast<compute_t<T>>(Uniform01(key, i)));
    });
  }

 private:
  int64_t n_ = 0;
};

template <typename T>
class RandIntCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSeeds(ctx);
    n_ = ctx.output(0).numel();
    low_ = ctx.GetInt("low");
    const int64_t high = ctx.GetInt("high");
    OPF_CHECK(high > low_, "For '" << ctx.op_name() << "', the 'high' must be greater than 'low' " << low_
                                   << ", but got " << high << ".");
    range_ = static_cast<uint64_t>(high) - static_cast<uint64_t>(low_);
  }

  void Launch(const KernelArgs& args) override {
    const int64_t low = low_;
    const uint64_t range = range_;
    FillRandom(args.output<T>(0), n_, LaunchKey(args),
               [=](uint64_t key, int64_t i) { return static_cast<T>(UniformIntAt(key, i, low, range)); });
  }

 private:
  int64_t n_ = 0, low_ = 0;
  uint64_t range_ = 1;
};

// RandGamma(alpha, seed, offset): a standard gamma value of each alpha (StandardGammaAt, in double).
template <typename T>
class RandGammaCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSeeds(ctx, 1);
    n_ = ctx.output(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const T* alpha = args.input<T>(0);
    FillRandom(args.output<T>(0), n_, LaunchKey(args, 1), [=](uint64_t key, int64_t i) {
      return Store<T>(static_cast<compute_t<T>>(StandardGammaAt(key, i, static_cast<double>(Load(alpha[i])))));
    });
  }

 private:
  int64_t n_ = 0;
};

// RandPoisson(rate, seed, offset): a Poisson count of each rate (PoissonAs), as Out.
template <typename R, typename Out>
class RandPoissonCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    CheckSeeds(ctx, 1);
    n_ = ctx.output(0).numel();
  }

  void Launch(const KernelArgs& args) override {
    const R* rate = args.input<R>(0);
    FillRandom(args.output<Out>(0), n_, LaunchKey(args, 1), [=](uint64_t key, int64_t i) {
      return PoissonAs<Out>(key, i, static_cast<double>(Load(rate[i])));
    });
  }

 private:
  int64_t n_ = 0;
};

KernelAttr Seeded(TypeId out) {
  return KernelAttr().AddInputAttr(kNumberTypeInt64).AddInputAttr(kNumberTypeInt64).AddOutputAttr(out);
}

#define REG_RANDOM_FLOAT(T, ID)                                 \
  MS_REG_CPU_KERNEL(Randn, Seeded(ID), RandnCpuKernel<T>);     \
  MS_REG_CPU_KERNEL(RandExt, Seeded(ID), RandExtCpuKernel<T>)

REG_RANDOM_FLOAT(float16, kNumberTypeFloat16);
REG_RANDOM_FLOAT(bfloat16, kNumberTypeBFloat16);
REG_RANDOM_FLOAT(float, kNumberTypeFloat32);
REG_RANDOM_FLOAT(double, kNumberTypeFloat64);
MS_REG_CPU_KERNEL(RandInt, Seeded(kNumberTypeInt32), RandIntCpuKernel<int32_t>);
// A distribution's parameter tensor, then the seed and offset.
KernelAttr Parametrized(TypeId param, TypeId out) {
  return KernelAttr().AddInputAttr(param).AddInputAttr(kNumberTypeInt64).AddInputAttr(kNumberTypeInt64).AddOutputAttr(
      out);
}
MS_REG_CPU_KERNEL(RandGamma, Parametrized(kNumberTypeFloat16, kNumberTypeFloat16), RandGammaCpuKernel<float16>);
MS_REG_CPU_KERNEL(RandGamma, Parametrized(kNumberTypeFloat32, kNumberTypeFloat32), RandGammaCpuKernel<float>);
MS_REG_CPU_KERNEL(RandGamma, Parametrized(kNumberTypeFloat64, kNumberTypeFloat64), RandGammaCpuKernel<double>);
#define REG_RAND_POISSON(R, RID)                                                                                 \
  MS_REG_CPU_KERNEL(RandPoisson, Parametrized(RID, kNumberTypeInt32), RandPoissonCpuKernel<R, int32_t>);       \
  MS_REG_CPU_KERNEL(RandPoisson, Parametrized(RID, kNumberTypeInt64), RandPoissonCpuKernel<R, int64_t>);       \
  MS_REG_CPU_KERNEL(RandPoisson, Parametrized(RID, kNumberTypeFloat16), RandPoissonCpuKernel<R, float16>);     \
  MS_REG_CPU_KERNEL(RandPoisson, Parametrized(RID, kNumberTypeFloat32), RandPoissonCpuKernel<R, float>);       \
  MS_REG_CPU_KERNEL(RandPoisson, Parametrized(RID, kNumberTypeFloat64), RandPoissonCpuKernel<R, double>)
REG_RAND_POISSON(float16, kNumberTypeFloat16);
REG_RAND_POISSON(float, kNumberTypeFloat32);
REG_RAND_POISSON(double, kNumberTypeFloat64);
MS_REG_CPU_KERNEL(RandInt, Seeded(kNumberTypeInt64), RandIntCpuKernel<int64_t>);

}  // namespace
}  // namespace opforge
