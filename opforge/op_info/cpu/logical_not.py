"""LogicalNot CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

logical_not_op_info = (
    CpuRegOp("LogicalNot")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.BOOL_Default)
    .get_op_info()
)


@op_info_register(logical_not_op_info)
def _logical_not_cpu():
    """LogicalNot CPU registration."""
