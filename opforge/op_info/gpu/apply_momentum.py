"""ApplyMomentum GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

apply_momentum_op_info = (
    GpuRegOp("ApplyMomentum")
    .input(0, "variable", "required")
    .input(1, "accumulation", "required")
    .input(2, "learning_rate", "required")
    .input(3, "gradient", "required")
    .input(4, "momentum", "required")
    .output(0, "output", "required")
    .attr("use_locking", "optional", "bool", "all", "False")
    .attr("use_nesterov", "optional", "bool", "all", "False")
    .attr("gradient_scale", "optional", "float", "all", "1.0")
    .dtype_format(*[DataType.F16_Default] * 6)  # 5 inputs, 1 output, all one dtype
    .dtype_formats(*[DataType.F32_Default] * 6, *[DataType.F64_Default] * 6)
    .get_op_info()
)


@op_info_register(apply_momentum_op_info)
def _apply_momentum_gpu():
    """ApplyMomentum GPU registration."""
