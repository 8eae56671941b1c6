"""AvgPool CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

avg_pool_op_info = (
    CpuRegOp("AvgPool")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("kernel_size", "required", "listInt", "all", None)
    .attr("strides", "required", "listInt", "all", None)
    .attr("pad_mode", "required", "str", "VALID,SAME", None)
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(avg_pool_op_info)
def _avg_pool_cpu():
    """AvgPool CPU registration."""
