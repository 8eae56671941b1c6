"""Abs CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

abs_op_info = (
    CpuRegOp("Abs")
    .input(0, "input_x", "required")
    .output(0, "output", "required")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I8_Default,
        DataType.I16_Default,
        DataType.I32_Default,
        DataType.I64_Default,
        DataType.U8_Default,
    )
    # |z| of a complex tensor is its real dtype, as MindSpore's Abs.
    .dtype_format(DataType.C64_Default, DataType.F32_Default)
    .dtype_format(DataType.C128_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(abs_op_info)
def _abs_cpu():
    """Abs CPU registration."""
