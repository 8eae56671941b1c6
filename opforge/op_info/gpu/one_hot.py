"""OneHot GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

one_hot_op_info = (
    GpuRegOp("OneHot")
    .input(0, "indices", "required")
    .input(1, "on_value", "required")
    .input(2, "off_value", "required")
    .output(0, "output", "required")
    .attr("depth", "required", "int", "all")
    .attr("axis", "optional", "int", "all", "-1")
    .dtype_format(DataType.I32_Default, DataType.F16_Default, DataType.F16_Default, DataType.F16_Default)
    .dtype_format(DataType.I32_Default, DataType.F32_Default, DataType.F32_Default, DataType.F32_Default)
    .dtype_format(DataType.I32_Default, DataType.F64_Default, DataType.F64_Default, DataType.F64_Default)
    .dtype_format(DataType.I32_Default, DataType.I32_Default, DataType.I32_Default, DataType.I32_Default)
    .dtype_format(DataType.I32_Default, DataType.I64_Default, DataType.I64_Default, DataType.I64_Default)
    .dtype_format(DataType.I64_Default, DataType.F16_Default, DataType.F16_Default, DataType.F16_Default)
    .dtype_format(DataType.I64_Default, DataType.F32_Default, DataType.F32_Default, DataType.F32_Default)
    .dtype_format(DataType.I64_Default, DataType.F64_Default, DataType.F64_Default, DataType.F64_Default)
    .dtype_format(DataType.I64_Default, DataType.I32_Default, DataType.I32_Default, DataType.I32_Default)
    .dtype_format(DataType.I64_Default, DataType.I64_Default, DataType.I64_Default, DataType.I64_Default)
    .get_op_info()
)


@op_info_register(one_hot_op_info)
def _one_hot_gpu():
    """OneHot GPU registration."""
