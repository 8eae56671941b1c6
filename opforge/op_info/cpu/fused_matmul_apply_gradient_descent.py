"""FusedMatMulApplyGradientDescent CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

fused_mat_mul_apply_gradient_descent_op_info = (
    CpuRegOp("FusedMatMulApplyGradientDescent")
    .input(0, "var", "required")
    .input(1, "alpha", "required")
    .input(2, "x1", "required")
    .input(3, "x2", "required")
    .output(0, "var", "required")
    .attr("transpose_a", "required", "bool", "all", "False")
    .attr("transpose_b", "required", "bool", "all", "False")
    .dtype_formats(DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(fused_mat_mul_apply_gradient_descent_op_info)
def _fused_mat_mul_apply_gradient_descent_cpu():
    """FusedMatMulApplyGradientDescent CPU registration."""
