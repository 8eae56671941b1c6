"""BroadcastTo GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

broadcast_to_op_info = (
    GpuRegOp("BroadcastTo")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .attr("shape", "required", "listInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(broadcast_to_op_info)
def _broadcast_to_gpu():
    """BroadcastTo GPU registration."""
