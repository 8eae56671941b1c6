"""BatchNormGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

batch_norm_grad_op_info = (
    CpuRegOp("BatchNormGrad")
    .input(0, "dy", "required")
    .input(1, "x", "required")
    .input(2, "scale", "required")
    .input(3, "reserve_space_1", "required")
    .input(4, "reserve_space_2", "required")
    .output(0, "dx", "required")
    .output(1, "bn_scale", "required")
    .output(2, "bn_bias", "required")
    .attr("is_training", "optional", "bool", "all", "False")
    .attr("epsilon", "optional", "float", "all", "1e-05")
    .attr("data_format", "optional", "str", "all", "NCHW")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(batch_norm_grad_op_info)
def _batch_norm_grad_cpu():
    """BatchNormGrad CPU registration."""
