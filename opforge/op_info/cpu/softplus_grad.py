"""SoftplusGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

softplus_grad_op_info = (
    CpuRegOp("SoftplusGrad")
    .input(0, "gradients", "required")
    .input(1, "features", "required")
    .output(0, "backprops", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(softplus_grad_op_info)
def _softplus_grad_cpu():
    """SoftplusGrad CPU registration."""
