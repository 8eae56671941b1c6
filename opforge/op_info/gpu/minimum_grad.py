"""MinimumGrad GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

minimum_grad_op_info = (
    GpuRegOp("MinimumGrad")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .input(2, "dout", "required")
    .output(0, "dx", "required")
    .output(1, "dy", "required")
    .attr("grad_x", "optional", "bool", "all", "True")
    .attr("grad_y", "optional", "bool", "all", "True")
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


@op_info_register(minimum_grad_op_info)
def _minimum_grad_gpu():
    """MinimumGrad GPU registration."""
