"""Sqrt GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

sqrt_op_info = (
    GpuRegOp("Sqrt")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(sqrt_op_info)
def _sqrt_gpu():
    """Sqrt GPU registration."""
