// BiasAdd: out = x + bias, bias broadcast along the channel axis (1 for "NCHW"/"NCDHW", last for "NHWC").
#include <algorithm>
#include <string>

#include "kernels/cpu/broadcast.h"

namespace opforge {
namespace {

template <typename T>
class BiasAddCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string format = ctx.HasAttr("data_format") ? ctx.GetStr("data_format") : "NCHW";
    OPF_CHECK(format == "NCHW" || format == "NHWC" || format == "NCDHW",
              "For 'BiasAdd', the attr 'data_format' must be 'NCHW', 'NHWC' or 'NCDHW', but got '" << format
                                                                                                   << "'.");
    const auto& x = ctx.input(0).shape;
    const auto& bias = ctx.input(1).shape;
    const int64_t nd = static_cast<int64_t>(x.size());
    OPF_CHECK(nd >= 2, "For 'BiasAdd', the input 'x' must have at least 2 dims, but got shape " << ShapeToString(x)
                                                                                              << ".");
    const int64_t axis = format == "NHWC" ? nd - 1 : 1;
    OPF_CHECK(bias.size() == 1 && bias[0] == x[axis],
              "For 'BiasAdd', 'bias' must be 1-D with length equal to the channel dim "
                  << x[axis] << " of x (data_format '" << format << "'), but got x shape " << ShapeToString(x)
                  << " and bias shape " << ShapeToString(bias) << ".");
    OPF_CHECK(ctx.output(0).shape == x, "For 'BiasAdd', the output shape must be " << ShapeToString(x)
                                                                                  << ", but got "
                                                                                  << ShapeToString(ctx.output(0).shape)
                                                                                  << ".");
    // View x as [outer, channels, inner]: the bias is constant over each inner run.
    channels_ = x[axis];
    outer_ = 1;
    inner_ = 1;
    for (int64_t d = 0; d < axis; ++d) outer_ *= x[d];
    for (int64_t d = axis + 1; d < nd; ++d) inner_ *= x[d];
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* bias = args.input<T>(1);
    T* out = args.output<T>(0);
    const int64_t c = channels_, inner = inner_;
    const AddOp add;
    if (c == 0 || outer_ == 0 || inner == 0) return;
    if (inner == 1) {  // channel last: every row of C elements gets the whole bias vector
      ParallelForChunks(outer_, std::max<int64_t>(1, kParallelGrain / c), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = x + r * c;
          T* outr = out + r * c;
          for (int64_t j = 0; j < c; ++j) outr[j] = Store<T>(add(Load(xr[j]), Load(bias[j])));
        }
      });
      return;
    }
    // Channel first: plane p (of `inner` elements) belongs to channel p % C.
    ParallelForChunks(outer_ * c, std::max<int64_t>(1, kParallelGrain / inner), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const compute_t<T> b = Load(bias[p % c]);
        const T* xp = x + p * inner;
        T* outp = out + p * inner;
        for (int64_t i = 0; i < inner; ++i) outp[i] = Store<T>(add(Load(xp[i]), b));
      }
    });
  }

 private:
  int64_t outer_ = 0, channels_ = 0, inner_ = 0;
};

#define REG_BIAS_ADD(T, ID) \
  MS_REG_CPU_KERNEL(BiasAdd, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), BiasAddCpuKernel<T>)

REG_BIAS_ADD(float16, kNumberTypeFloat16);
REG_BIAS_ADD(bfloat16, kNumberTypeBFloat16);
REG_BIAS_ADD(float, kNumberTypeFloat32);
REG_BIAS_ADD(double, kNumberTypeFloat64);
REG_BIAS_ADD(int32_t, kNumberTypeInt32);
REG_BIAS_ADD(int64_t, kNumberTypeInt64);

}  // namespace
}  // namespace opforge
