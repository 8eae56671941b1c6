"""Select CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_select = (
    CpuRegOp("Select")
    .input(0, "condition", "required")
    .input(1, "x", "required")
    .input(2, "y", "required")
    .output(0, "output", "required")
)
for _t in DataType.ALL_Default:
    _select = _select.dtype_format(DataType.BOOL_Default, _t, _t, _t)
select_op_info = _select.get_op_info()


@op_info_register(select_op_info)
def _select_cpu():
    """Select CPU registration."""
