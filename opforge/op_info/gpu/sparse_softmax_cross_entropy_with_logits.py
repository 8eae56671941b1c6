"""SparseSoftmaxCrossEntropyWithLogits GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

sparse_softmax_cross_entropy_with_logits_op_info = (
    GpuRegOp("SparseSoftmaxCrossEntropyWithLogits")
    .input(0, "logits", "required")
    .input(1, "labels", "required")
    .output(0, "output", "required")
    .attr("is_grad", "optional", "bool", "all", "False")
    .dtype_format(DataType.F16_Default, DataType.I32_Default, DataType.F16_Default)
    .dtype_format(DataType.F16_Default, DataType.I64_Default, DataType.F16_Default)
    .dtype_format(DataType.F32_Default, DataType.I32_Default, DataType.F32_Default)
    .dtype_format(DataType.F32_Default, DataType.I64_Default, DataType.F32_Default)
    .dtype_format(DataType.F64_Default, DataType.I32_Default, DataType.F64_Default)
    .dtype_format(DataType.F64_Default, DataType.I64_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(sparse_softmax_cross_entropy_with_logits_op_info)
def _sparse_softmax_cross_entropy_with_logits_gpu():
    """SparseSoftmaxCrossEntropyWithLogits GPU registration."""
