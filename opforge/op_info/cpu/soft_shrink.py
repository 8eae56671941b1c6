"""SoftShrink CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

soft_shrink_op_info = (
    CpuRegOp("SoftShrink")
    .input(0, "input_x", "required")
    .output(0, "output", "required")
    .attr("lambd", "optional", "float", "all", "0.5")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(soft_shrink_op_info)
def _soft_shrink_cpu():
    """SoftShrink CPU registration."""
