"""IsNan CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

is_nan_op_info = (
    CpuRegOp("IsNan")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .dtype_format(DataType.F16_Default, DataType.BOOL_Default)
    .dtype_format(DataType.BF16_Default, DataType.BOOL_Default)
    .dtype_format(DataType.F32_Default, DataType.BOOL_Default)
    .dtype_format(DataType.F64_Default, DataType.BOOL_Default)
    .get_op_info()
)


@op_info_register(is_nan_op_info)
def _is_nan_cpu():
    """IsNan CPU registration."""
