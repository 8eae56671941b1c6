"""AdaptiveAvgPool2D CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

adaptive_avg_pool2d_op_info = (
    CpuRegOp("AdaptiveAvgPool2D")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .attr("output_size", "required", "listInt", "all", None)
    .dtype_format(DataType.F16_Default, DataType.F16_Default)
    .dtype_format(DataType.F32_Default, DataType.F32_Default)
    .dtype_format(DataType.F64_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(adaptive_avg_pool2d_op_info)
def _adaptive_avg_pool2d_cpu():
    """AdaptiveAvgPool2D CPU registration."""
