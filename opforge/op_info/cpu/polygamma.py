"""Polygamma CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_polygamma = CpuRegOp("Polygamma").input(0, "a", "required").input(1, "x", "required").output(0, "y", "required")
for _t in (DataType.F16_Default, DataType.F32_Default, DataType.F64_Default):
    for _i in (DataType.I32_Default, DataType.I64_Default):
        _polygamma = _polygamma.dtype_format(_i, _t, _t)
polygamma_op_info = _polygamma.get_op_info()


@op_info_register(polygamma_op_info)
def _polygamma_cpu():
    """Polygamma CPU registration."""
