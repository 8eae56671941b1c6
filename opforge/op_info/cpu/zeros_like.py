"""ZerosLike CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

zeros_like_op_info = (
    CpuRegOp("ZerosLike")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(zeros_like_op_info)
def _zeros_like_cpu():
    """ZerosLike CPU registration."""
