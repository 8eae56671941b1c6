"""Sqrt CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

sqrt_op_info = (
    CpuRegOp("Sqrt")
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


@op_info_register(sqrt_op_info)
def _sqrt_cpu():
    """Sqrt CPU registration."""
