// Argmax(axis, output_type)(x): the index of the largest value along `axis` (np.argmax): ties give the
// first index and NaN counts as the largest value (the first NaN wins). The output is int32 or int64.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "opforge/kernel.h"
#include "opforge/parallel.h"
#include "kernels/cpu/scan.h"
#include "opforge/functors/argmax.h"

namespace opforge {
namespace {

template <typename T, typename O>
class ArgMaxCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    const int64_t nd = x.ndim(), range = std::max<int64_t>(nd, 1);
    int64_t axis = ctx.HasAttr("axis") ? ctx.GetInt("axis") : -1;
    OPF_CHECK(axis >= -range && axis < range, "For '" << op << "', the 'axis' must be in [" << -range << ", "
                                                      << range << ") for input shape " << ShapeToString(x.shape)
                                                      << ", but got " << axis << ".");
    if (axis < 0) axis += range;
    std::vector<int64_t> want;
    outer_ = 1;
    n_ = 1;
    inner_ = 1;
    for (int64_t d = 0; d < nd; ++d) {
      if (d == axis) {
        n_ = x.shape[d];
        continue;
      }
      want.push_back(x.shape[d]);
      (d < axis ? outer_ : inner_) *= x.shape[d];
    }
    OPF_CHECK(y.dtype == TypeIdOf<O>::value, "For '" << op << "', the output must be " << TypeIdName(TypeIdOf<O>::value)
                                                     << ", but got " << TypeIdName(y.dtype) << ".");
    OPF_CHECK(y.shape == want, "For '" << op << "', the output shape must be " << ShapeToString(want)
                                       << ", but got " << ShapeToString(y.shape) << ".");
    OPF_CHECK(n_ > 0 || outer_ * inner_ == 0, "For '" << op << "', cannot take the argmax of the zero-size axis "
                                                      << axis << " of input shape " << ShapeToString(x.shape)
                                                      << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    O* y = args.output<O>(0);
    const int64_t outer = outer_, n = n_, inner = inner_;
    if (outer * inner == 0) return;
    if (inner == 1) {  // each output scans one contiguous row
      ParallelFor(outer, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) y[o] = static_cast<O>(Row(x + o * n, n));
      });
      return;
    }
    // The axis strides by `inner`: walk it for a block of neighbouring outputs at once, so every read
    // is contiguous.
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    ParallelFor(outer * blocks, std::max<int64_t>(1, kParallelGrain / (kBlock * n)), [&](int64_t begin, int64_t end) {
      C best[kBlock];
      int64_t index[kBlock];
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / blocks, i0 = (t % blocks) * kBlock, w = std::min(kBlock, inner - i0);
        const T* base = x + o * n * inner + i0;
        for (int64_t i = 0; i < w; ++i) {
          best[i] = Load(base[i]);
          index[i] = 0;
        }
        for (int64_t k = 1; k < n; ++k) {
          const T* row = base + k * inner;
          for (int64_t i = 0; i < w; ++i) {
            const C v = Load(row[i]);
            if (ArgMaxReplaces(v, best[i])) {
              best[i] = v;
              index[i] = k;
            }
          }
        }
        O* dst = y + o * inner + i0;
        for (int64_t i = 0; i < w; ++i) dst[i] = static_cast<O>(index[i]);
      }
    });
  }

 private:
  // Two passes that vectorise better than one branchy scan: the largest value (and whether there is
  // a NaN), then the first index that holds it.
  static int64_t Row(const T* x, int64_t n) {
    bool nan = false;
    const C best = MaxScan<C>(x, n, static_cast<C>(Load(x[0])), &nan);
    if (nan) {
      for (int64_t k = 0; k < n; ++k)
        if (IsNan(Load(x[k]))) return k;
    }
    for (int64_t k = 0; k < n; ++k)
      if (Load(x[k]) == best) return k;
    return 0;  // unreachable: best is one of the values
  }

  int64_t outer_ = 1, n_ = 1, inner_ = 1;
};

#define REG_ARGMAX(T)                                                                                   \
  MS_REG_CPU_KERNEL(Argmax, KernelAttr().AddInputAttr(TypeIdOf<T>::value).AddOutputAttr(kNumberTypeInt32), \
                    ArgMaxCpuKernel<T, int32_t>);                                                       \
  MS_REG_CPU_KERNEL(Argmax, KernelAttr().AddInputAttr(TypeIdOf<T>::value).AddOutputAttr(kNumberTypeInt64), \
                    ArgMaxCpuKernel<T, int64_t>)

REG_ARGMAX(float16);
REG_ARGMAX(bfloat16);
REG_ARGMAX(float);
REG_ARGMAX(double);
REG_ARGMAX(int8_t);
REG_ARGMAX(int16_t);
REG_ARGMAX(int32_t);
REG_ARGMAX(int64_t);
REG_ARGMAX(uint8_t);

}  // namespace
}  // namespace opforge
