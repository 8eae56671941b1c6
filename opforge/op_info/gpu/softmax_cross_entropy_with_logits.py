"""SoftmaxCrossEntropyWithLogits GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

softmax_cross_entropy_with_logits_op_info = (
    GpuRegOp("SoftmaxCrossEntropyWithLogits")
    .input(0, "logits", "required")
    .input(1, "labels", "required")
    .output(0, "loss", "required")
    .output(1, "backprop", "required")
    .dtype_formats(DataType.F16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(softmax_cross_entropy_with_logits_op_info)
def _softmax_cross_entropy_with_logits_gpu():
    """SoftmaxCrossEntropyWithLogits GPU registration."""
