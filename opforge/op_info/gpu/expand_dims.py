"""ExpandDims GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

expand_dims_op_info = (
    GpuRegOp("ExpandDims")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("axis", "required", "int", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(expand_dims_op_info)
def _expand_dims_gpu():
    """ExpandDims GPU registration."""
