"""DataType: (dtype, format) pairs used in op info's dtype_format rows (MindSpore's names)."""

from __future__ import annotations

from opforge import dtype as mstype

__all__ = ["DataType"]

_SHORT = {
    "BOOL": mstype.bool_,
    "I8": mstype.int8,
    "I16": mstype.int16,
    "I32": mstype.int32,
    "I64": mstype.int64,
    "U8": mstype.uint8,
    "U16": mstype.uint16,
    "U32": mstype.uint32,
    "U64": mstype.uint64,
    "F16": mstype.float16,
    "BF16": mstype.bfloat16,
    "F32": mstype.float32,
    "F64": mstype.float64,
    "C64": mstype.complex64,
    "C128": mstype.complex128,
}


class DataType:
    """``DataType.F32_Default`` is ``(float32, "DefaultFormat")``; ``F32_None`` has no format."""

    None_None = (None, "")


for _short, _type in _SHORT.items():
    setattr(DataType, f"{_short}_Default", (_type, "DefaultFormat"))
    setattr(DataType, f"{_short}_None", (_type, ""))

# Every dtype with the default format, for operators that move bytes (Reshape, Transpose, ...).
DataType.ALL_Default = tuple(getattr(DataType, f"{short}_Default") for short in _SHORT)
# The float dtypes; with the integers an accumulating kernel takes (ScatterAdd's: its values add up).
DataType.FLOAT_Default = tuple(getattr(DataType, f"{short}_Default") for short in ("F16", "BF16", "F32", "F64"))
DataType.NUMBER_Default = DataType.FLOAT_Default + tuple(
    getattr(DataType, f"{short}_Default") for short in ("I8", "I16", "I32", "I64", "U8")
)
