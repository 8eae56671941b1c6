"""Transpose GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

transpose_op_info = (
    GpuRegOp("Transpose")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("perm", "required", "listInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(transpose_op_info)
def _transpose_gpu():
    """Transpose GPU registration."""
