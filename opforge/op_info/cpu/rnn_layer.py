"""RNNLayer CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

rnn_layer_op_info = (
    CpuRegOp("RNNLayer")
    .input(0, "x", "required")
    .input(1, "h0", "required")
    .input(2, "w_ih", "required")
    .input(3, "w_hh", "required")
    .input(4, "bias", "required")
    .output(0, "y", "required")
    .output(1, "h_n", "required")
    .attr("reverse", "optional", "bool", "all", "False")
    .attr("nonlinearity", "optional", "str", "tanh,relu", "tanh")
    .dtype_format(*[DataType.F32_Default] * 7)
    .dtype_format(*[DataType.F64_Default] * 7)
    .get_op_info()
)


@op_info_register(rnn_layer_op_info)
def _rnn_layer_cpu():
    """RNNLayer CPU registration."""
