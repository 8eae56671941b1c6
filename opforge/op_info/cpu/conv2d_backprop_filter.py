"""Conv2DBackpropFilter CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

conv2d_backprop_filter_op_info = (
    CpuRegOp("Conv2DBackpropFilter")
    .input(0, "out_backprop", "required")
    .input(1, "input", "required")
    .output(0, "output", "required")
    .attr("filter_sizes", "required", "listInt", "all", None)
    .attr("kernel_size", "required", "listInt", "all", None)
    .attr("stride", "required", "listInt", "all", None)
    .attr("dilation", "required", "listInt", "all", None)
    .attr("pad", "required", "listInt", "all", None)
    .attr("pad_mode", "required", "str", "valid,same,pad", None)
    .attr("group", "required", "int", "all", None)
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(conv2d_backprop_filter_op_info)
def _conv2d_backprop_filter_cpu():
    """Conv2DBackpropFilter CPU registration."""
