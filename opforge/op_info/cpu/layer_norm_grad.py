"""LayerNormGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

layer_norm_grad_op_info = (
    CpuRegOp("LayerNormGrad")
    .input(0, "x", "required")
    .input(1, "dy", "required")
    .input(2, "variance", "required")
    .input(3, "mean", "required")
    .input(4, "gamma", "required")
    .output(0, "pd_x", "required")
    .output(1, "pd_gamma", "required")
    .output(2, "pd_beta", "required")
    .attr("begin_norm_axis", "optional", "int", "all", "1")
    .attr("begin_params_axis", "optional", "int", "all", "1")
    .attr("epsilon", "optional", "float", "all", "1e-07")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(layer_norm_grad_op_info)
def _layer_norm_grad_cpu():
    """LayerNormGrad CPU registration."""
