"""AllGather CPU op info (MPI; the GPU's, NCCL, mirrors it)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_TYPES = DataType.ALL_Default  # moved as bytes: every dtype

all_gather_op_info = (
    CpuRegOp("AllGather")
    .input(0, "input_x", "required")
    .output(0, "output", "required")
    .attr("group", "optional", "str", "all", "hccl_world_group")
    .dtype_formats(*_TYPES)
    .get_op_info()
)


@op_info_register(all_gather_op_info)
def _all_gather_cpu():
    """AllGather CPU registration."""
