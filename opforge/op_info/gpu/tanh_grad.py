"""TanhGrad GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

tanh_grad_op_info = (
    GpuRegOp("TanhGrad")
    .input(0, "y", "required")
    .input(1, "dy", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(tanh_grad_op_info)
def _tanh_grad_gpu():
    """TanhGrad GPU registration."""
