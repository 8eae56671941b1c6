"""ZerosLike GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

zeros_like_op_info = (
    GpuRegOp("ZerosLike")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(zeros_like_op_info)
def _zeros_like_gpu():
    """ZerosLike GPU registration."""
