"""Broadcast CPU op info (MPI; the GPU's, NCCL, mirrors it)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_TYPES = DataType.ALL_Default  # moved as bytes: every dtype

broadcast_op_info = (
    CpuRegOp("Broadcast")
    .input(0, "input_x", "dynamic")
    .output(0, "output", "required")
    .attr("root_rank", "required", "int", "all")
    .attr("group", "optional", "str", "all", "hccl_world_group")
    .dtype_formats(*_TYPES)
    .get_op_info()
)


@op_info_register(broadcast_op_info)
def _broadcast_cpu():
    """Broadcast CPU registration."""
