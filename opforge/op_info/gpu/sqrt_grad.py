"""SqrtGrad GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

sqrt_grad_op_info = (
    GpuRegOp("SqrtGrad")
    .input(0, "y", "required")
    .input(1, "dy", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(sqrt_grad_op_info)
def _sqrt_grad_gpu():
    """SqrtGrad GPU registration."""
