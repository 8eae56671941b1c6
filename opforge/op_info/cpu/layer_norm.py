"""LayerNorm CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

layer_norm_op_info = (
    CpuRegOp("LayerNorm")
    .input(0, "x", "required")
    .input(1, "gamma", "required")
    .input(2, "beta", "required")
    .output(0, "y", "required")
    .output(1, "mean", "required")
    .output(2, "variance", "required")
    .attr("begin_norm_axis", "optional", "int", "all", "1")
    .attr("begin_params_axis", "optional", "int", "all", "1")
    .attr("epsilon", "optional", "float", "all", "1e-07")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(layer_norm_op_info)
def _layer_norm_cpu():
    """LayerNorm CPU registration."""
