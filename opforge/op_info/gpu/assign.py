"""Assign GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

assign_op_info = (
    GpuRegOp("Assign")
    .input(0, "variable", "required")
    .input(1, "value", "required")
    .output(0, "output", "required")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(assign_op_info)
def _assign_gpu():
    """Assign GPU registration."""
