"""ExpandDims CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

expand_dims_op_info = (
    CpuRegOp("ExpandDims")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("axis", "required", "int", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(expand_dims_op_info)
def _expand_dims_cpu():
    """ExpandDims CPU registration."""
