"""AdaptiveAvgPool2DGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

adaptive_avg_pool2d_grad_op_info = (
    CpuRegOp("AdaptiveAvgPool2DGrad")
    .input(0, "input_grad", "required")
    .output(0, "output", "required")
    .dtype_format(DataType.F16_Default, DataType.F16_Default)
    .dtype_format(DataType.F32_Default, DataType.F32_Default)
    .dtype_format(DataType.F64_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(adaptive_avg_pool2d_grad_op_info)
def _adaptive_avg_pool2d_grad_cpu():
    """AdaptiveAvgPool2DGrad CPU registration."""
