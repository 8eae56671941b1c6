"""ScatterAdd CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_scatter = (
    CpuRegOp("ScatterAdd")
    .input(0, "input_x", "required")
    .input(1, "indices", "required")
    .input(2, "updates", "required")
    .output(0, "y", "required")
    .attr("use_locking", "optional", "bool", "all", "False")
)
for _t in DataType.NUMBER_Default:
    for _i in (DataType.I32_Default, DataType.I64_Default):
        _scatter = _scatter.dtype_format(_t, _i, _t, _t)
scatter_add_op_info = _scatter.get_op_info()


@op_info_register(scatter_add_op_info)
def _scatter_add_cpu():
    """ScatterAdd CPU registration."""
