"""GRULayer CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

gru_layer_op_info = (
    CpuRegOp("GRULayer")
    .input(0, "x", "required")
    .input(1, "h0", "required")
    .input(2, "w_ih", "required")
    .input(3, "w_hh", "required")
    .input(4, "b_ih", "required")
    .input(5, "b_hh", "required")
    .output(0, "y", "required")
    .output(1, "h_n", "required")
    .output(2, "gates", "required")
    .attr("reverse", "optional", "bool", "all", "False")
    .dtype_format(*[DataType.F32_Default] * 9)
    .dtype_format(*[DataType.F64_Default] * 9)
    .get_op_info()
)


@op_info_register(gru_layer_op_info)
def _gru_layer_cpu():
    """GRULayer CPU registration."""
