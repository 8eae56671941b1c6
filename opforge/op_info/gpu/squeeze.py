"""Squeeze GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

squeeze_op_info = (
    GpuRegOp("Squeeze")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("axis", "optional", "listInt", "all", "()")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(squeeze_op_info)
def _squeeze_gpu():
    """Squeeze GPU registration."""
