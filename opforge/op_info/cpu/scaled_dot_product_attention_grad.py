"""ScaledDotProductAttentionGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

F16, F32, F64 = DataType.F16_Default, DataType.F32_Default, DataType.F64_Default

scaled_dot_product_attention_grad_op_info = (
    CpuRegOp("ScaledDotProductAttentionGrad")
    .input(0, "query", "required")
    .input(1, "key", "required")
    .input(2, "value", "required")
    .input(3, "attn_mask", "required")
    .input(4, "output", "required")
    .input(5, "dout", "required")
    .input(6, "softmax_lse", "required")
    .output(0, "dq", "required")
    .output(1, "dk", "required")
    .output(2, "dv", "required")
    .attr("scale", "optional", "float", "all", "1.0")
    .attr("keep_prob", "optional", "float", "all", "1.0")
    .attr("is_causal", "optional", "bool", "all", "false")
    .attr("Seed0", "optional", "int", "all", "0")
    .attr("Seed1", "optional", "int", "all", "0")
    .dtype_format(F16, F16, F16, F16, F16, F16, F32, F16, F16, F16)
    .dtype_format(F32, F32, F32, F32, F32, F32, F32, F32, F32, F32)
    .dtype_format(F64, F64, F64, F64, F64, F64, F64, F64, F64, F64)
    .get_op_info()
)


@op_info_register(scaled_dot_product_attention_grad_op_info)
def _scaled_dot_product_attention_grad_cpu():
    """ScaledDotProductAttentionGrad CPU registration."""
