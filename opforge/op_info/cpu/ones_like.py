"""OnesLike CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

ones_like_op_info = (
    CpuRegOp("OnesLike")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(ones_like_op_info)
def _ones_like_cpu():
    """OnesLike CPU registration."""
