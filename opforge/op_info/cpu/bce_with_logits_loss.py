"""BCEWithLogitsLoss CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

bce_with_logits_loss_op_info = (
    CpuRegOp("BCEWithLogitsLoss")
    .input(0, "logits", "required")
    .input(1, "label", "required")
    .input(2, "weight", "required")
    .input(3, "pos_weight", "required")
    .output(0, "loss", "required")
    .attr("reduction", "optional", "str", "all", "mean")
    .dtype_format(
        DataType.F16_Default, DataType.F16_Default, DataType.F16_Default, DataType.F16_Default, DataType.F16_Default
    )
    .dtype_format(
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
        DataType.BF16_Default,
    )
    .dtype_format(
        DataType.F32_Default, DataType.F32_Default, DataType.F32_Default, DataType.F32_Default, DataType.F32_Default
    )
    .dtype_format(
        DataType.F64_Default, DataType.F64_Default, DataType.F64_Default, DataType.F64_Default, DataType.F64_Default
    )
    .get_op_info()
)


@op_info_register(bce_with_logits_loss_op_info)
def _bce_with_logits_loss_cpu():
    """BCEWithLogitsLoss CPU registration."""
