"""ReverseV2 CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

reverse_v2_op_info = (
    CpuRegOp("ReverseV2")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("axis", "required", "listInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(reverse_v2_op_info)
def _reverse_v2_cpu():
    """ReverseV2 CPU registration."""
