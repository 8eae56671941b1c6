"""Neg CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

neg_op_info = (
    CpuRegOp("Neg")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
        DataType.C64_Default,
        DataType.C128_Default,
    )
    .get_op_info()
)


@op_info_register(neg_op_info)
def _neg_cpu():
    """Neg CPU registration."""
