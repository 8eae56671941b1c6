"""Split CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

split_op_info = (
    CpuRegOp("Split")
    .input(0, "x", "required")
    .output(0, "output", "dynamic")
    .attr("axis", "optional", "int", "all", "0")
    .attr("output_num", "optional", "int", "all", "1")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(split_op_info)
def _split_cpu():
    """Split CPU registration."""
