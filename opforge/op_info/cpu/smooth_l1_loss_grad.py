"""SmoothL1LossGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

smooth_l1_loss_grad_op_info = (
    CpuRegOp("SmoothL1LossGrad")
    .input(0, "prediction", "required")
    .input(1, "target", "required")
    .input(2, "dout", "required")
    .output(0, "gradient", "required")
    .attr("beta", "optional", "float", "all", "1.0")
    .attr("reduction", "optional", "str", "all", "none")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(smooth_l1_loss_grad_op_info)
def _smooth_l1_loss_grad_cpu():
    """SmoothL1LossGrad CPU registration."""
