"""Slice CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

slice_op_info = (
    CpuRegOp("Slice")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("begin", "required", "listInt", "all")
    .attr("size", "required", "listInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(slice_op_info)
def _slice_cpu():
    """Slice CPU registration."""
