"""Sin CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

sin_op_info = (
    CpuRegOp("Sin")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.C64_Default,
        DataType.C128_Default,
    )
    .get_op_info()
)


@op_info_register(sin_op_info)
def _sin_cpu():
    """Sin CPU registration."""
