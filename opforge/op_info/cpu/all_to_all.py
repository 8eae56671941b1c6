"""AlltoAll CPU op info (MPI; the GPU's, NCCL, mirrors it)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_TYPES = DataType.ALL_Default  # moved as bytes: every dtype

all_to_all_op_info = (
    CpuRegOp("AlltoAll")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("split_count", "required", "int", "all")
    .attr("split_dim", "required", "int", "all")
    .attr("concat_dim", "required", "int", "all")
    .attr("group", "optional", "str", "all", "hccl_world_group")
    .dtype_formats(*_TYPES)
    .get_op_info()
)


@op_info_register(all_to_all_op_info)
def _all_to_all_cpu():
    """AlltoAll CPU registration."""
