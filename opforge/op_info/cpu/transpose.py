"""Transpose CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

transpose_op_info = (
    CpuRegOp("Transpose")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("perm", "required", "listInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(transpose_op_info)
def _transpose_cpu():
    """Transpose CPU registration."""
