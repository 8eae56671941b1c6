"""Fill CPU op info (no tensor input: one kernel per output dtype)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

fill_op_info = (
    CpuRegOp("Fill")
    .output(0, "y", "required")
    .attr("type", "required", "type", "all")
    .attr("shape", "required", "listInt", "all")
    .attr("value", "required", "number", "all")
    .dtype_format(DataType.BOOL_Default)
    .dtype_format(DataType.I8_Default)
    .dtype_format(DataType.I16_Default)
    .dtype_format(DataType.I32_Default)
    .dtype_format(DataType.I64_Default)
    .dtype_format(DataType.U8_Default)
    .dtype_format(DataType.U16_Default)
    .dtype_format(DataType.U32_Default)
    .dtype_format(DataType.U64_Default)
    .dtype_format(DataType.F16_Default)
    .dtype_format(DataType.BF16_Default)
    .dtype_format(DataType.F32_Default)
    .dtype_format(DataType.F64_Default)
    .get_op_info()
)


@op_info_register(fill_op_info)
def _fill_cpu():
    """Fill CPU registration."""
