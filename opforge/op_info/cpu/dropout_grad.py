"""DropoutGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

dropout_grad_op_info = (
    CpuRegOp("DropoutGrad")
    .input(0, "dy", "required")
    .input(1, "mask", "required")
    .output(0, "output", "required")
    .attr("keep_prob", "optional", "float", "all", "0.5")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(dropout_grad_op_info)
def _dropout_grad_cpu():
    """DropoutGrad CPU registration."""
