"""ReduceMin CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

reduce_min_op_info = (
    CpuRegOp("ReduceMin")
    .input(0, "input_x", "required")
    .output(0, "y", "required")
    .attr("axis", "optional", "listInt", "all", "()")
    .attr("keep_dims", "optional", "bool", "all", "False")
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
        DataType.U16_Default,
        DataType.U32_Default,
        DataType.U64_Default,
    )
    .get_op_info()
)


@op_info_register(reduce_min_op_info)
def _reduce_min_cpu():
    """ReduceMin CPU registration."""
