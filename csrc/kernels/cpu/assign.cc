// Assign: variable = value (out aliases variable); AssignSub: variable = variable - value.
#include <cstring>

#include "kernels/cpu/broadcast.h"

namespace opforge {
namespace {

// Copies value's bytes into the output, which the caller points at the variable's buffer.
class AssignCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& var = ctx.input(0);
    const TensorMeta& value = ctx.input(1);
    OPF_CHECK(var.shape == value.shape, "For 'Assign', 'value' must have the shape of 'variable' "
                                            << ShapeToString(var.shape) << ", but got " << ShapeToString(value.shape)
                                            << ".");
    OPF_CHECK(ctx.output(0).shape == var.shape, "For 'Assign', the output must have the shape of 'variable' "
                                                    << ShapeToString(var.shape) << ", but got "
                                                    << ShapeToString(ctx.output(0).shape) << ".");
    nbytes_ = var.numel() * TypeIdSize(var.dtype);
  }

  void Launch(const KernelArgs& args) override {
    const void* value = args.input_tensor(1).data;
    void* out = args.output_tensor(0).data;
    if (nbytes_ > 0 && out != value) std::memcpy(out, value, static_cast<size_t>(nbytes_));
  }

 private:
  int64_t nbytes_ = 0;
};

#define REG_ASSIGN(ID) \
  MS_REG_CPU_KERNEL(Assign, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), AssignCpuKernel)

REG_ASSIGN(kNumberTypeBool);
REG_ASSIGN(kNumberTypeInt8);
REG_ASSIGN(kNumberTypeInt16);
REG_ASSIGN(kNumberTypeInt32);
REG_ASSIGN(kNumberTypeInt64);
REG_ASSIGN(kNumberTypeUInt8);
REG_ASSIGN(kNumberTypeUInt16);
REG_ASSIGN(kNumberTypeUInt32);
REG_ASSIGN(kNumberTypeUInt64);
REG_ASSIGN(kNumberTypeFloat16);
REG_ASSIGN(kNumberTypeBFloat16);
REG_ASSIGN(kNumberTypeFloat32);
REG_ASSIGN(kNumberTypeFloat64);
REG_ASSIGN(kNumberTypeComplex64);
REG_ASSIGN(kNumberTypeComplex128);

// AssignSub: out[i] = variable[i] - value[i]; elementwise, so writing into the variable is safe.
#define REG_ASSIGN_SUB(T, ID)                                                                     \
  MS_REG_CPU_KERNEL(AssignSub, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    SameShapeBinaryCpuKernel<T, SubOp>)

REG_ASSIGN_SUB(float16, kNumberTypeFloat16);
REG_ASSIGN_SUB(bfloat16, kNumberTypeBFloat16);
REG_ASSIGN_SUB(float, kNumberTypeFloat32);
REG_ASSIGN_SUB(double, kNumberTypeFloat64);
REG_ASSIGN_SUB(int32_t, kNumberTypeInt32);
REG_ASSIGN_SUB(int64_t, kNumberTypeInt64);

}  // namespace
}  // namespace opforge
