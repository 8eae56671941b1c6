"""Squeeze CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

squeeze_op_info = (
    CpuRegOp("Squeeze")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("axis", "optional", "listInt", "all", "()")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(squeeze_op_info)
def _squeeze_cpu():
    """Squeeze CPU registration."""
