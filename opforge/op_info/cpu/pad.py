"""Pad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

pad_op_info = (
    CpuRegOp("Pad")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .attr("paddings", "required", "listListInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(pad_op_info)
def _pad_cpu():
    """Pad CPU registration."""
