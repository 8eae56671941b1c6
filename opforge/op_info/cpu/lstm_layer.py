"""LSTMLayer CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

lstm_layer_op_info = (
    CpuRegOp("LSTMLayer")
    .input(0, "x", "required")
    .input(1, "h0", "required")
    .input(2, "c0", "required")
    .input(3, "w_ih", "required")
    .input(4, "w_hh", "required")
    .input(5, "bias", "required")
    .output(0, "y", "required")
    .output(1, "h_n", "required")
    .output(2, "c_n", "required")
    .output(3, "gates", "required")
    .output(4, "c", "required")
    .attr("reverse", "optional", "bool", "all", "False")
    .dtype_format(*[DataType.F32_Default] * 11)
    .dtype_format(*[DataType.F64_Default] * 11)
    .get_op_info()
)


@op_info_register(lstm_layer_op_info)
def _lstm_layer_cpu():
    """LSTMLayer CPU registration."""
