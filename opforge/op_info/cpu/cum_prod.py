"""CumProd CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

cum_prod_op_info = (
    CpuRegOp("CumProd")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .attr("axis", "optional", "int", "all", "0")
    .attr("exclusive", "optional", "bool", "all", "False")
    .attr("reverse", "optional", "bool", "all", "False")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    )
    .get_op_info()
)


@op_info_register(cum_prod_op_info)
def _cum_prod_cpu():
    """CumProd CPU registration."""
