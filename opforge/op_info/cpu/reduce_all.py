"""ReduceAll CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

reduce_all_op_info = (
    CpuRegOp("ReduceAll")
    .input(0, "input_x", "required")
    .output(0, "y", "required")
    .attr("axis", "optional", "listInt", "all", "()")
    .attr("keep_dims", "optional", "bool", "all", "False")
    .dtype_format(DataType.BOOL_Default, DataType.BOOL_Default)
    .get_op_info()
)


@op_info_register(reduce_all_op_info)
def _reduce_all_cpu():
    """ReduceAll CPU registration."""
