"""LogicalXor CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

logical_xor_op_info = (
    CpuRegOp("LogicalXor")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.BOOL_Default)
    .get_op_info()
)


@op_info_register(logical_xor_op_info)
def _logical_xor_cpu():
    """LogicalXor CPU registration."""
