"""BiasAdd GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

bias_add_op_info = (
    GpuRegOp("BiasAdd")
    .input(0, "input_x", "required")
    .input(1, "bias", "required")
    .output(0, "output", "required")
    .attr("data_format", "optional", "str", "NCHW,NHWC", "NCHW")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    )
    .get_op_info()
)


@op_info_register(bias_add_op_info)
def _bias_add_gpu():
    """BiasAdd GPU registration."""
