"""AdamWeightDecay CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

adam_weight_decay_op_info = (
    CpuRegOp("AdamWeightDecay")
    .input(0, "var", "required")
    .input(1, "m", "required")
    .input(2, "v", "required")
    .input(3, "lr", "required")
    .input(4, "beta1", "required")
    .input(5, "beta2", "required")
    .input(6, "epsilon", "required")
    .input(7, "decay", "required")
    .input(8, "gradient", "required")
    .output(0, "var", "required")
    .output(1, "m", "required")
    .output(2, "v", "required")
    .attr("use_locking", "optional", "bool", "all", "False")
    .dtype_format(*[DataType.F16_Default] * 12)  # 9 inputs, 3 outputs, all one dtype
    .dtype_formats(*[DataType.F32_Default] * 12, *[DataType.F64_Default] * 12)
    .get_op_info()
)


@op_info_register(adam_weight_decay_op_info)
def _adam_weight_decay_cpu():
    """AdamWeightDecay CPU registration."""
