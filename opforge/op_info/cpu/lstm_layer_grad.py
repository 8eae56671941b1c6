"""LSTMLayerGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

lstm_layer_grad_op_info = (
    CpuRegOp("LSTMLayerGrad")
    .input(0, "x", "required")
    .input(1, "h0", "required")
    .input(2, "c0", "required")
    .input(3, "w_ih", "required")
    .input(4, "w_hh", "required")
    .input(5, "y", "required")
    .input(6, "gates", "required")
    .input(7, "c", "required")
    .input(8, "dy", "required")
    .input(9, "dh_n", "required")
    .input(10, "dc_n", "required")
    .output(0, "dx", "required")
    .output(1, "dh0", "required")
    .output(2, "dc0", "required")
    .output(3, "dw_ih", "required")
    .output(4, "dw_hh", "required")
    .output(5, "dbias", "required")
    .attr("reverse", "optional", "bool", "all", "False")
    .attr("compute_dx", "optional", "bool", "all", "True")
    .dtype_format(*[DataType.F32_Default] * 17)
    .dtype_format(*[DataType.F64_Default] * 17)
    .get_op_info()
)


@op_info_register(lstm_layer_grad_op_info)
def _lstm_layer_grad_cpu():
    """LSTMLayerGrad CPU registration."""
