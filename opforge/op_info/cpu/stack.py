"""Stack CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

stack_op_info = (
    CpuRegOp("Stack")
    .input(0, "x", "dynamic")
    .output(0, "y", "required")
    .attr("axis", "optional", "int", "all", "0")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(stack_op_info)
def _stack_cpu():
    """Stack CPU registration."""
