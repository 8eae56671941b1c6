"""Send CPU op info (MPI; the GPU's, NCCL, mirrors it)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_TYPES = DataType.ALL_Default  # moved as bytes: every dtype

send_op_info = (
    CpuRegOp("Send")
    .input(0, "input_x", "required")
    .output(0, "output", "required")
    .attr("sr_tag", "required", "int", "all")
    .attr("dest_rank", "required", "int", "all")
    .attr("group", "optional", "str", "all", "hccl_world_group")
    .dtype_formats(*_TYPES)
    .get_op_info()
)


@op_info_register(send_op_info)
def _send_cpu():
    """Send CPU registration."""
