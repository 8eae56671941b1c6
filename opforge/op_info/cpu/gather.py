"""Gather CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_gather = (
    CpuRegOp("Gather")
    .input(0, "params", "required")
    .input(1, "indices", "required")
    .output(0, "output", "required")
    .attr("axis", "required", "int", "all")
    .attr("batch_dims", "optional", "int", "all", "0")
)
for _t in DataType.ALL_Default:
    for _i in (DataType.I32_Default, DataType.I64_Default):
        _gather = _gather.dtype_format(_t, _i, _t)
gather_op_info = _gather.get_op_info()


@op_info_register(gather_op_info)
def _gather_cpu():
    """Gather CPU registration."""
