"""Range CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

range_op_info = (
    CpuRegOp("Range")
    .output(0, "output", "required")
    .attr("start", "required", "float", "all")
    .attr("limit", "required", "float", "all")
    .attr("delta", "required", "float", "all")
    .attr("maxlen", "optional", "int", "all", "1000000")
    .dtype_format(DataType.I64_Default)
    .dtype_format(DataType.F32_Default)
    .get_op_info()
)


@op_info_register(range_op_info)
def _range_cpu():
    """Range CPU registration."""
