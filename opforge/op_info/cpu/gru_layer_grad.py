"""GRULayerGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

gru_layer_grad_op_info = (
    CpuRegOp("GRULayerGrad")
    .input(0, "x", "required")
    .input(1, "h0", "required")
    .input(2, "w_ih", "required")
    .input(3, "w_hh", "required")
    .input(4, "y", "required")
    .input(5, "gates", "required")
    .input(6, "dy", "required")
    .input(7, "dh_n", "required")
    .output(0, "dx", "required")
    .output(1, "dh0", "required")
    .output(2, "dw_ih", "required")
    .output(3, "dw_hh", "required")
    .output(4, "db_ih", "required")
    .output(5, "db_hh", "required")
    .attr("reverse", "optional", "bool", "all", "False")
    .attr("compute_dx", "optional", "bool", "all", "True")
    .dtype_format(*[DataType.F32_Default] * 14)
    .dtype_format(*[DataType.F64_Default] * 14)
    .get_op_info()
)


@op_info_register(gru_layer_grad_op_info)
def _gru_layer_grad_cpu():
    """GRULayerGrad CPU registration."""
