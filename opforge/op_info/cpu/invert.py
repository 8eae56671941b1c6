"""Invert CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

invert_op_info = (
    CpuRegOp("Invert")
    .input(0, "x", "required")
    .output(0, "y", "required")
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


@op_info_register(invert_op_info)
def _invert_cpu():
    """Invert CPU registration."""
