"""NLLLossGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

nll_loss_grad_op_info = (
    CpuRegOp("NLLLossGrad")
    .input(0, "x", "required")
    .input(1, "loss_grad", "required")
    .input(2, "target", "required")
    .input(3, "weight", "required")
    .input(4, "total_weight", "required")
    .output(0, "x_grad", "required")
    .attr("reduction", "optional", "str", "all", "mean")
    .attr("ignore_index", "optional", "int", "all", "-100")
    .dtype_format(
        DataType.F16_Default,
        DataType.F16_Default,
        DataType.I32_Default,
        DataType.F16_Default,
        DataType.F16_Default,
        DataType.F16_Default,
    )
    .dtype_format(
        DataType.F16_Default,
        DataType.F16_Default,
        DataType.I64_Default,
        DataType.F16_Default,
        DataType.F16_Default,
        DataType.F16_Default,
    )
    .dtype_format(
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.I32_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
    )
    .dtype_format(
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.I64_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
    )
    .dtype_format(
        DataType.F32_Default,
        DataType.F32_Default,
        DataType.I32_Default,
        DataType.F32_Default,
        DataType.F32_Default,
        DataType.F32_Default,
    )
    .dtype_format(
        DataType.F32_Default,
        DataType.F32_Default,
        DataType.I64_Default,
        DataType.F32_Default,
        DataType.F32_Default,
        DataType.F32_Default,
    )
    .dtype_format(
        DataType.F64_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.F64_Default,
        DataType.F64_Default,
        DataType.F64_Default,
    )
    .dtype_format(
        DataType.F64_Default,
        DataType.F64_Default,
        DataType.I64_Default,
        DataType.F64_Default,
        DataType.F64_Default,
        DataType.F64_Default,
    )
    .get_op_info()
)


@op_info_register(nll_loss_grad_op_info)
def _nll_loss_grad_cpu():
    """NLLLossGrad CPU registration."""
