"""EluGrad GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

elu_grad_op_info = (
    GpuRegOp("EluGrad")
    .input(0, "y_grad", "required")
    .input(1, "x", "required")
    .output(0, "output", "required")
    .attr("alpha", "optional", "float", "all", "1.0")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(elu_grad_op_info)
def _elu_grad_gpu():
    """EluGrad GPU registration."""
