"""BitwiseOr CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

bitwise_or_op_info = (
    CpuRegOp("BitwiseOr")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .output(0, "output", "required")
    .dtype_formats(
        DataType.I8_Default,
        DataType.I16_Default,
        DataType.I32_Default,
        DataType.I64_Default,
        DataType.U8_Default,
        DataType.U16_Default,
        DataType.U32_Default,
        DataType.U64_Default,
    )
    .get_op_info()
)


@op_info_register(bitwise_or_op_info)
def _bitwise_or_cpu():
    """BitwiseOr CPU registration."""
