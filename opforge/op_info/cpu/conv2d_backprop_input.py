"""Conv2DBackpropInput CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

conv2d_backprop_input_op_info = (
    CpuRegOp("Conv2DBackpropInput")
    .input(0, "out_backprop", "required")
    .input(1, "filter", "required")
    .output(0, "output", "required")
    .attr("input_sizes", "required", "listInt", "all", None)
    .attr("kernel_size", "required", "listInt", "all", None)
    .attr("stride", "required", "listInt", "all", None)
    .attr("dilation", "required", "listInt", "all", None)
    .attr("pad", "required", "listInt", "all", None)
    .attr("pad_mode", "required", "str", "valid,same,pad", None)
    .attr("group", "required", "int", "all", None)
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(conv2d_backprop_input_op_info)
def _conv2d_backprop_input_cpu():
    """Conv2DBackpropInput CPU registration."""
