"""LessEqual CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

less_equal_op_info = (
    CpuRegOp("LessEqual")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .output(0, "output", "required")
    .dtype_format(DataType.BOOL_Default, DataType.BOOL_Default, DataType.BOOL_Default)
    .dtype_format(DataType.I8_Default, DataType.I8_Default, DataType.BOOL_Default)
    .dtype_format(DataType.I16_Default, DataType.I16_Default, DataType.BOOL_Default)
    .dtype_format(DataType.I32_Default, DataType.I32_Default, DataType.BOOL_Default)
    .dtype_format(DataType.I64_Default, DataType.I64_Default, DataType.BOOL_Default)
    .dtype_format(DataType.U8_Default, DataType.U8_Default, DataType.BOOL_Default)
    .dtype_format(DataType.U16_Default, DataType.U16_Default, DataType.BOOL_Default)
    .dtype_format(DataType.U32_Default, DataType.U32_Default, DataType.BOOL_Default)
    .dtype_format(DataType.U64_Default, DataType.U64_Default, DataType.BOOL_Default)
    .dtype_format(DataType.F16_Default, DataType.F16_Default, DataType.BOOL_Default)
    .dtype_format(DataType.BF16_Default, DataType.BF16_Default, DataType.BOOL_Default)
    .dtype_format(DataType.F32_Default, DataType.F32_Default, DataType.BOOL_Default)
    .dtype_format(DataType.F64_Default, DataType.F64_Default, DataType.BOOL_Default)
    .get_op_info()
)


@op_info_register(less_equal_op_info)
def _less_equal_cpu():
    """LessEqual CPU registration."""
