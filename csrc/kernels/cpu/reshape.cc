// Reshape, ExpandDims, Squeeze: out = x with the output's shape (the attrs "shape" / "axis" are not
// read; the primitive inferred the shape): the bytes are copied as they are.
#include <cstring>

#include "opforge/kernel.h"

namespace opforge {
namespace {

// One class for every dtype and all three ops: only the element size matters, so complex types work
// as raw bytes.
class ReshapeCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    OPF_CHECK(x.numel() == y.numel(), "For '" << ctx.op_name()
                                              << "', the output must have as many elements as the input, but got "
                                                 "input shape "
                                              << ShapeToString(x.shape) << " and output shape "
                                              << ShapeToString(y.shape) << ".");
    OPF_CHECK(x.dtype == y.dtype, "For '" << ctx.op_name() << "', the output must have the input's dtype "
                                          << TypeIdName(x.dtype) << ", but got " << TypeIdName(y.dtype) << ".");
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

#define REG_COPY(OP, ID) MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), ReshapeCpuKernel)
#define REG_COPY_ALL(OP)                  \
  REG_COPY(OP, kNumberTypeBool);          \
  REG_COPY(OP, kNumberTypeInt8);          \
  REG_COPY(OP, kNumberTypeInt16);         \
  REG_COPY(OP, kNumberTypeInt32);         \
  REG_COPY(OP, kNumberTypeInt64);         \
  REG_COPY(OP, kNumberTypeUInt8);         \
  REG_COPY(OP, kNumberTypeUInt16);        \
  REG_COPY(OP, kNumberTypeUInt32);        \
  REG_COPY(OP, kNumberTypeUInt64);        \
  REG_COPY(OP, kNumberTypeFloat16);       \
  REG_COPY(OP, kNumberTypeBFloat16);      \
  REG_COPY(OP, kNumberTypeFloat32);       \
  REG_COPY(OP, kNumberTypeFloat64);       \
  REG_COPY(OP, kNumberTypeComplex64);     \
  REG_COPY(OP, kNumberTypeComplex128)

REG_COPY_ALL(Reshape);
REG_COPY_ALL(ExpandDims);
REG_COPY_ALL(Squeeze);

}  // namespace
}  // namespace opforge
