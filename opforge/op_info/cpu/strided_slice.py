"""StridedSlice CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

strided_slice_op_info = (
    CpuRegOp("StridedSlice")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("begin", "required", "listInt", "all")
    .attr("end", "required", "listInt", "all")
    .attr("strides", "required", "listInt", "all")
    .attr("begin_mask", "optional", "int", "all", "0")
    .attr("end_mask", "optional", "int", "all", "0")
    .attr("ellipsis_mask", "optional", "int", "all", "0")
    .attr("new_axis_mask", "optional", "int", "all", "0")
    .attr("shrink_axis_mask", "optional", "int", "all", "0")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(strided_slice_op_info)
def _strided_slice_cpu():
    """StridedSlice CPU registration."""
