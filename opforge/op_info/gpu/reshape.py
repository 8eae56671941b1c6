"""Reshape GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

reshape_op_info = (
    GpuRegOp("Reshape")
    .input(0, "tensor", "required")
    .output(0, "output", "required")
    .attr("shape", "required", "listInt", "all", None)
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(reshape_op_info)
def _reshape_gpu():
    """Reshape GPU registration."""
