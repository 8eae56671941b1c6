"""RealDiv GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

real_div_op_info = (
    GpuRegOp("RealDiv")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(real_div_op_info)
def _real_div_gpu():
    """RealDiv GPU registration."""
