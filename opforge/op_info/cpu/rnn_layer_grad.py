"""RNNLayerGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

rnn_layer_grad_op_info = (
    CpuRegOp("RNNLayerGrad")
    .input(0, "x", "required")
    .input(1, "h0", "required")
    .input(2, "w_ih", "required")
    .input(3, "w_hh", "required")
    .input(4, "y", "required")
    .input(5, "dy", "required")
    .input(6, "dh_n", "required")
    .output(0, "dx", "required")
    .output(1, "dh0", "required")
    .output(2, "dw_ih", "required")
    .output(3, "dw_hh", "required")
    .output(4, "dbias", "required")
    .attr("reverse", "optional", "bool", "all", "False")
    .attr("compute_dx", "optional", "bool", "all", "True")
    .attr("nonlinearity", "optional", "str", "tanh,relu", "tanh")
    .dtype_format(*[DataType.F32_Default] * 12)
    .dtype_format(*[DataType.F64_Default] * 12)
    .get_op_info()
)


@op_info_register(rnn_layer_grad_op_info)
def _rnn_layer_grad_cpu():
    """RNNLayerGrad CPU registration."""
