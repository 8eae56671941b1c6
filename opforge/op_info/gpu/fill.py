"""Fill GPU op info (no tensor input: one kernel per output dtype)."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

fill_op_info = (
    GpuRegOp("Fill")
    .output(0, "y", "required")
    .attr("type", "required", "type", "all")
    .attr("shape", "required", "listInt", "all")
    .attr("value", "required", "number", "all")
    .dtype_formats(
        DataType.BOOL_Default,
        DataType.I8_Default,
        DataType.I16_Default,
        DataType.I32_Default,
        DataType.I64_Default,
        DataType.U8_Default,
        DataType.U16_Default,
        DataType.U32_Default,
        DataType.U64_Default,
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
    )
    .get_op_info()
)


@op_info_register(fill_op_info)
def _fill_gpu():
    """Fill GPU registration."""
