"""ReLU6Grad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

relu6_grad_op_info = (
    CpuRegOp("ReLU6Grad")
    .input(0, "y_grad", "required")
    .input(1, "x", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(relu6_grad_op_info)
def _relu6_grad_cpu():
    """ReLU6Grad CPU registration."""
