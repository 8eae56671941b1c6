"""Cast CPU op info: every pair of bool, integer, floating-point and complex dtypes."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_TYPES = (
    DataType.BOOL_Default,
    DataType.I8_Default,
    DataType.I16_Default,
    DataType.I32_Default,
    DataType.I64_Default,
    DataType.U8_Default,
    DataType.U16_Default,
    DataType.U32_Default,
    DataType.U64_Default,
    DataType.F16_Default,
    DataType.BF16_Default,
    DataType.F32_Default,
    DataType.F64_Default,
    DataType.C64_Default,
    DataType.C128_Default,
)

_cast = CpuRegOp("Cast").input(0, "x", "required").output(0, "y", "required").attr("dtype", "required", "type", "all")
for _src in _TYPES:
    for _dst in _TYPES:
        _cast.dtype_format(_src, _dst)
cast_op_info = _cast.get_op_info()


@op_info_register(cast_op_info)
def _cast_cpu():
    """Cast CPU registration."""
