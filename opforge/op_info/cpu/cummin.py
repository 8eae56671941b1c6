"""Cummin CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_scan = (
    CpuRegOp("Cummin")
    .input(0, "input", "required")
    .output(0, "values", "required")
    .output(1, "indices", "required")
    .attr("axis", "required", "int", "all")
)
for _t in DataType.FLOAT_Default + (DataType.I32_Default, DataType.I64_Default):
    _scan = _scan.dtype_format(_t, _t, DataType.I64_Default)
cummin_op_info = _scan.get_op_info()


@op_info_register(cummin_op_info)
def _cummin_cpu():
    """Cummin CPU registration."""
