"""TanhGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

tanh_grad_op_info = (
    CpuRegOp("TanhGrad")
    .input(0, "y", "required")
    .input(1, "dy", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(tanh_grad_op_info)
def _tanh_grad_cpu():
    """TanhGrad CPU registration."""
