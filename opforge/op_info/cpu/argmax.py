"""Argmax CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

arg_max_op_info = (
    CpuRegOp("Argmax")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("axis", "optional", "int", "all", "-1")
    .attr("output_type", "optional", "type", "all", "int32")
    .dtype_format(DataType.F16_Default, DataType.I32_Default)
    .dtype_format(DataType.F16_Default, DataType.I64_Default)
    .dtype_format(DataType.BF16_Default, DataType.I32_Default)
    .dtype_format(DataType.BF16_Default, DataType.I64_Default)
    .dtype_format(DataType.F32_Default, DataType.I32_Default)
    .dtype_format(DataType.F32_Default, DataType.I64_Default)
    .dtype_format(DataType.F64_Default, DataType.I32_Default)
    .dtype_format(DataType.F64_Default, DataType.I64_Default)
    .dtype_format(DataType.I8_Default, DataType.I32_Default)
    .dtype_format(DataType.I8_Default, DataType.I64_Default)
    .dtype_format(DataType.I16_Default, DataType.I32_Default)
    .dtype_format(DataType.I16_Default, DataType.I64_Default)
    .dtype_format(DataType.I32_Default, DataType.I32_Default)
    .dtype_format(DataType.I32_Default, DataType.I64_Default)
    .dtype_format(DataType.I64_Default, DataType.I32_Default)
    .dtype_format(DataType.I64_Default, DataType.I64_Default)
    .dtype_format(DataType.U8_Default, DataType.I32_Default)
    .dtype_format(DataType.U8_Default, DataType.I64_Default)
    .get_op_info()
)


@op_info_register(arg_max_op_info)
def _arg_max_cpu():
    """Argmax CPU registration."""
