"""Reshape CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

reshape_op_info = (
    CpuRegOp("Reshape")
    .input(0, "tensor", "required")
    .output(0, "output", "required")
    .attr("shape", "required", "listInt", "all", None)
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(reshape_op_info)
def _reshape_cpu():
    """Reshape CPU registration."""
