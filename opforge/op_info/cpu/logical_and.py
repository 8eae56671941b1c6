"""LogicalAnd CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

logical_and_op_info = (
    CpuRegOp("LogicalAnd")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.BOOL_Default)
    .get_op_info()
)


@op_info_register(logical_and_op_info)
def _logical_and_cpu():
    """LogicalAnd CPU registration."""
