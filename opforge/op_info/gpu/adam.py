"""Adam GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

adam_op_info = (
    GpuRegOp("Adam")
    .input(0, "var", "required")
    .input(1, "m", "required")
    .input(2, "v", "required")
    .input(3, "beta1_power", "required")
    .input(4, "beta2_power", "required")
    .input(5, "lr", "required")
    .input(6, "beta1", "required")
    .input(7, "beta2", "required")
    .input(8, "epsilon", "required")
    .input(9, "gradient", "required")
    .output(0, "var", "required")
    .output(1, "m", "required")
    .output(2, "v", "required")
    .attr("use_locking", "optional", "bool", "all", "False")
    .attr("use_nesterov", "optional", "bool", "all", "False")
    .dtype_format(*[DataType.F16_Default] * 13)  # 10 inputs, 3 outputs, all one dtype
    .dtype_formats(*[DataType.F32_Default] * 13, *[DataType.F64_Default] * 13)
    .get_op_info()
)


@op_info_register(adam_op_info)
def _adam_gpu():
    """Adam GPU registration."""
