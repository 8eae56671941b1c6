"""GeLUGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

gelu_grad_op_info = (
    CpuRegOp("GeLUGrad")
    .input(0, "dy", "required")
    .input(1, "x", "required")
    .input(2, "y", "required")
    .output(0, "z", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(gelu_grad_op_info)
def _gelu_grad_cpu():
    """GeLUGrad CPU registration."""
