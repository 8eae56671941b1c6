"""Unstack CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

unstack_op_info = (
    CpuRegOp("Unstack")
    .input(0, "x", "required")
    .output(0, "y", "dynamic")
    .attr("axis", "optional", "int", "all", "0")
    .attr("num", "optional", "int", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(unstack_op_info)
def _unstack_cpu():
    """Unstack CPU registration."""
