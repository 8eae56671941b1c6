"""NLLLoss CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

nll_loss_op_info = (
    CpuRegOp("NLLLoss")
    .input(0, "x", "required")
    .input(1, "target", "required")
    .input(2, "weight", "required")
    .output(0, "loss", "required")
    .output(1, "total_weight", "required")
    .attr("reduction", "optional", "str", "all", "mean")
    .attr("ignore_index", "optional", "int", "all", "-100")
    .dtype_format(
        DataType.F16_Default, DataType.I32_Default, DataType.F16_Default, DataType.F16_Default, DataType.F16_Default
    )
    .dtype_format(
        DataType.F16_Default, DataType.I64_Default, DataType.F16_Default, DataType.F16_Default, DataType.F16_Default
    )
    .dtype_format(
        DataType.BF16_Default, DataType.I32_Default, DataType.BF16_Default, DataType.BF16_Default, DataType.BF16_Default
    )
    .dtype_format(
        DataType.BF16_Default, DataType.I64_Default, DataType.BF16_Default, DataType.BF16_Default, DataType.BF16_Default
    )
    .dtype_format(
        DataType.F32_Default, DataType.I32_Default, DataType.F32_Default, DataType.F32_Default, DataType.F32_Default
    )
    .dtype_format(
        DataType.F32_Default, DataType.I64_Default, DataType.F32_Default, DataType.F32_Default, DataType.F32_Default
    )
    .dtype_format(
        DataType.F64_Default, DataType.I32_Default, DataType.F64_Default, DataType.F64_Default, DataType.F64_Default
    )
    .dtype_format(
        DataType.F64_Default, DataType.I64_Default, DataType.F64_Default, DataType.F64_Default, DataType.F64_Default
    )
    .get_op_info()
)


@op_info_register(nll_loss_op_info)
def _nll_loss_cpu():
    """NLLLoss CPU registration."""
