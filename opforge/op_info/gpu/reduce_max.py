"""ReduceMax GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

reduce_max_op_info = (
    GpuRegOp("ReduceMax")
    .input(0, "input_x", "required")
    .output(0, "y", "required")
    .attr("axis", "optional", "listInt", "all", "()")
    .attr("keep_dims", "optional", "bool", "all", "False")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    )
    .get_op_info()
)


@op_info_register(reduce_max_op_info)
def _reduce_max_gpu():
    """ReduceMax GPU registration."""
