"""Receive CPU op info (MPI; the GPU's, NCCL, mirrors it)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_TYPES = DataType.ALL_Default  # moved as bytes: every dtype

receive_op_info = (
    CpuRegOp("Receive")
    .output(0, "output", "required")
    .attr("sr_tag", "required", "int", "all")
    .attr("src_rank", "required", "int", "all")
    .attr("shape", "required", "listInt", "all")
    .attr("dtype", "required", "type", "all")
    .attr("group", "optional", "str", "all", "hccl_world_group")
    .dtype_formats(*_TYPES)
    .get_op_info()
)


@op_info_register(receive_op_info)
def _receive_cpu():
    """Receive CPU registration."""
