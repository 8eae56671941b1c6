"""ApplyGradientDescent GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

apply_gradient_descent_op_info = (
    GpuRegOp("ApplyGradientDescent")
    .input(0, "var", "required")
    .input(1, "alpha", "required")
    .input(2, "delta", "required")
    .output(0, "var", "required")
    .dtype_formats(DataType.F16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(apply_gradient_descent_op_info)
def _apply_gradient_descent_gpu():
    """ApplyGradientDescent GPU registration."""
