"""ReduceScatter CPU op info (MPI; the GPU's, NCCL, mirrors it)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

# Every number dtype: MPI reduces them (float16 and bfloat16 widened to float32); no bool.
_TYPES = tuple(t for t in DataType.ALL_Default if t is not DataType.BOOL_Default)

reduce_scatter_op_info = (
    CpuRegOp("ReduceScatter")
    .input(0, "input_x", "required")
    .output(0, "output", "required")
    .attr("op", "optional", "str", "all", "sum")
    .attr("group", "optional", "str", "all", "hccl_world_group")
    .dtype_formats(*_TYPES)
    .get_op_info()
)


@op_info_register(reduce_scatter_op_info)
def _reduce_scatter_cpu():
    """ReduceScatter CPU registration."""
