"""ReluGrad GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

relu_grad_op_info = (
    GpuRegOp("ReluGrad")
    .input(0, "y_backprop", "required")
    .input(1, "x", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(relu_grad_op_info)
def _relu_grad_gpu():
    """ReluGrad GPU registration."""
