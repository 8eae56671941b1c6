// Reshape: out = x with the output's shape (attr "shape" is not read): the bytes are copied as they are.
#include <cstring>

#include "opforge/kernel.h"

namespace opforge {
namespace {

// One class for every dtype: only the element size matters, so complex types work as raw bytes.
class ReshapeCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    OPF_CHECK(x.numel() == y.numel(), "For 'Reshape', the output must have as many elements as the input, but got "
                                          "input shape "
                                          << ShapeToString(x.shape) << " and output shape " << ShapeToString(y.shape)
                                          << ".");
    nbytes_ = x.numel() * TypeIdSize(x.dtype);
  }

  void Launch(const KernelArgs& args) override {
    const void* x = args.input_tensor(0).data;
    void* y = args.output_tensor(0).data;
    if (nbytes_ > 0 && x != y) std::memcpy(y, x, static_cast<size_t>(nbytes_));
  }

 private:
  int64_t nbytes_ = 0;
};

#define REG_RESHAPE(ID) MS_REG_CPU_KERNEL(Reshape, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), ReshapeCpuKernel)

REG_RESHAPE(kNumberTypeBool);
REG_RESHAPE(kNumberTypeInt8);
REG_RESHAPE(kNumberTypeInt16);
REG_RESHAPE(kNumberTypeInt32);
REG_RESHAPE(kNumberTypeInt64);
REG_RESHAPE(kNumberTypeUInt8);
REG_RESHAPE(kNumberTypeUInt16);
REG_RESHAPE(kNumberTypeUInt32);
REG_RESHAPE(kNumberTypeUInt64);
REG_RESHAPE(kNumberTypeFloat16);
REG_RESHAPE(kNumberTypeBFloat16);
REG_RESHAPE(kNumberTypeFloat32);
REG_RESHAPE(kNumberTypeFloat64);
REG_RESHAPE(kNumberTypeComplex64);
REG_RESHAPE(kNumberTypeComplex128);

}  // namespace
}  // namespace opforge
