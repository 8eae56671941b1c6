"""Data types: the dtype objects, their groups, NumPy conversion and the promotion table.

Every dtype carries a numeric type id shared with C++ (``opforge._C.kNumberTypeFloat32`` ...),
which is how kernels are registered and selected.

Implicit promotion (used by primitive signatures) follows one table, ``promote_types``:

=====================  ============================================================
operands               result
=====================  ============================================================
same dtype             that dtype
bool + X               X
intN + intM            the wider signed int
uintN + uintM          the wider unsigned int
uintN + intM           intM if M > N, else the next signed int wider than N
                       (uint64 + any signed int -> float64)
int/uint + float       the float
float16 + bfloat16     float32
floatN + floatM        the wider float
float + complex        the complex type wide enough for the float (float64 + complex64 -> complex128)
complexN + complexM    the wider complex
=====================  ============================================================

Python scalars are *weak* (see ``result_type``): they never widen a tensor of their own
category (an int scalar keeps an int8 tensor int8, a float scalar keeps float16 float16); a scalar
of a higher category moves the group to that category's default dtype (int64, float32,
complex64; complex128 when the tensors are float64).
"""

from __future__ import annotations

import enum
import functools

import ml_dtypes
import numpy as np

from opforge import _C

__all__ = [
    "Type",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "number_type",
    "int_type",
    "uint_type",
    "float_type",
    "complex_type",
    "all_types",
    "dtype_to_nptype",
    "nptype_to_dtype",
    "to_dtype",
    "type_id_to_dtype",
    "promote_types",
    "result_type",
    "can_cast_losslessly",
    "QuantDtype",
]

# Significand bits of each float kind, and value bits of each integer kind: an integer casts to a
# float losslessly when every value fits the float's significand.
_SIGNIFICAND_BITS = {"Float16": 11, "BFloat16": 8, "Float32": 24, "Float64": 53}


class Type:
    """An opforge dtype: its name, C++ type id, NumPy dtype and kind ('b', 'i', 'u', 'f', 'c')."""

    __slots__ = ("name", "type_id", "np_dtype", "kind", "itemsize")

    def __init__(self, name: str, type_id: int, np_dtype, kind: str):
        self.name = name
        self.type_id = type_id
        self.np_dtype = np.dtype(np_dtype)
        self.kind = kind
        self.itemsize = self.np_dtype.itemsize

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __reduce__(self):
        return (type_id_to_dtype, (self.type_id,))

    @property
    def category(self) -> int:
        """0 bool, 1 integer (signed or unsigned), 2 float, 3 complex."""
        return _CATEGORY[self.kind]

    @property
    def value_bits(self) -> int:
        """Bits of an integer's magnitude (int8: 7, uint8: 8); for floats, the significand bits."""
        if self.kind == "i":
            return self.itemsize * 8 - 1
        if self.kind == "u":
            return self.itemsize * 8
        if self.kind == "b":
            return 1
        if self.kind == "c":
            return _SIGNIFICAND_BITS["Float32" if self.itemsize == 8 else "Float64"]
        return _SIGNIFICAND_BITS[self.name]


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_C.set_dtype_class(Type)  # plan and attrs keys encode a dtype by its type id


def _make(name: str, np_dtype, kind: str) -> Type:
    return Type(name, getattr(_C, "kNumberType" + name), np_dtype, kind)


bool_ = _make("Bool", np.bool_, "b")
int8 = _make("Int8", np.int8, "i")
int16 = _make("Int16", np.int16, "i")
int32 = _make("Int32", np.int32, "i")
int64 = _make("Int64", np.int64, "i")
uint8 = _make("UInt8", np.uint8, "u")
uint16 = _make("UInt16", np.uint16, "u")
uint32 = _make("UInt32", np.uint32, "u")
uint64 = _make("UInt64", np.uint64, "u")
float16 = _make("Float16", np.float16, "f")
bfloat16 = _make("BFloat16", ml_dtypes.bfloat16, "f")
float32 = _make("Float32", np.float32, "f")
float64 = _make("Float64", np.float64, "f")
complex64 = _make("Complex64", np.complex64, "c")
complex128 = _make("Complex128", np.complex128, "c")

int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
float_type = (float16, bfloat16, float32, float64)
complex_type = (complex64, complex128)
number_type = int_type + uint_type + float_type + complex_type
all_types = (bool_,) + number_type

_BY_ID = {t.type_id: t for t in all_types}
_BY_NP = {t.np_dtype: t for t in all_types}
_BY_NAME = {}
for _t in all_types:
    _BY_NAME[_t.name.lower()] = _t
    _BY_NAME[_t.np_dtype.name] = _t
_BY_NAME["bool_"] = bool_
_BY_PY = {bool: bool_, int: int64, float: float64, complex: complex128}


def type_id_to_dtype(type_id: int) -> Type:
    """The dtype whose C++ type id is ``type_id``."""
    try:
        return _BY_ID[type_id]
    except KeyError:
        raise ValueError(f"unknown type id {type_id}") from None


def dtype_to_nptype(dtype: Type) -> np.dtype:
    """The NumPy dtype of an opforge dtype (bfloat16 is ``ml_dtypes.bfloat16``)."""
    return dtype.np_dtype


def nptype_to_dtype(np_dtype) -> Type:
    """The opforge dtype of a NumPy dtype; raises TypeError for one opforge does not support."""
    key = np.dtype(np_dtype)
    found = _BY_NP.get(key)
    if found is None:
        found = _BY_NP.get(key.newbyteorder("="))
    if found is None:
        supported = ", ".join(t.np_dtype.name for t in all_types)
        raise TypeError(f"NumPy dtype '{key}' is not supported by opforge; supported: {supported}.")
    return found


def to_dtype(value) -> Type:
    """Accept an opforge dtype, a NumPy dtype or type, a name ('float32') or a Python type."""
    if isinstance(value, Type):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value.lower())
        if found is None:
            raise TypeError(f"unknown dtype name '{value}'.")
        return found
    if value in _BY_PY:
        return _BY_PY[value]
    try:
        return nptype_to_dtype(value)
    except TypeError:
        raise
    except Exception:
        raise TypeError(f"cannot interpret {value!r} as an opforge dtype.") from None


# ---------------------------------------------------------------------------------------------
# Promotion


def _promote_pair(a: Type, b: Type) -> Type:
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.category != b.category:
        low, high = (a, b) if a.category < b.category else (b, a)
        if high.kind == "c" and low.kind == "f" and low.itemsize > high.itemsize // 2:
            return complex128
        return high
    if a.kind == "f":
        if {a.name, b.name} == {"Float16", "BFloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.kind == b.kind:  # both signed, both unsigned, or both complex
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    wider = {1: int16, 2: int32, 4: int64}
    return wider.get(unsigned.itemsize, float64)


PROMOTION_TABLE = {(a, b): _promote_pair(a, b) for a in all_types for b in all_types}


def promote_types(a: Type, b: Type) -> Type:
    """The dtype two tensors of dtypes ``a`` and ``b`` are promoted to (see the module table)."""
    return PROMOTION_TABLE[a, b]


_WEAK_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}
_WEAK_DEFAULT = {0: bool_, 1: int64, 2: float32, 3: complex64}


def weak_category(value) -> int | None:
    """The category of a Python scalar (bool 0, int 1, float 2, complex 3), or None.

    A NumPy scalar (``np.int64(1)``, ``np.float32(0.5)``) counts as the Python number it holds: it is
    accepted wherever one is, and is just as weak.
    """
    category = _WEAK_CATEGORY.get(type(value))
    if category is None and isinstance(value, np.generic):
        dtype = _BY_NP.get(value.dtype)
        category = None if dtype is None else dtype.category
    return category


@functools.lru_cache(maxsize=4096)
def result_type(strong: tuple, weak: tuple = ()) -> Type:
    """Promote tensor dtypes ``strong`` together with weak scalar categories ``weak``."""
    result = None
    for t in strong:
        result = t if result is None else PROMOTION_TABLE[result, t]
    if not weak:
        if result is None:
            raise ValueError("result_type needs at least one operand")
        return result
    top = max(weak)
    if result is None:
        return _WEAK_DEFAULT[top]
    if top <= result.category:
        return result
    if top == 3 and result is float64:
        return complex128
    return _WEAK_DEFAULT[top]


@functools.lru_cache(maxsize=1024)
def can_cast_losslessly(src: Type, dst: Type) -> bool:
    """Whether every value of ``src`` is exactly representable in ``dst``."""
    if src is dst or src.kind == "b":
        return True
    if dst.kind == "b":
        return False
    if src.category > dst.category:
        return False
    if src.kind in "iu":
        if dst.kind in "iu":
            if src.kind == "i" and dst.kind == "u":
                return False
            return dst.value_bits >= src.value_bits
        return dst.value_bits >= src.value_bits
    if src.kind == "f":
        if dst.kind == "f":
            if {src.name, dst.name} == {"Float16", "BFloat16"}:
                return False
            return dst.itemsize > src.itemsize
        return dst.itemsize // 2 >= src.itemsize
    return dst.itemsize >= src.itemsize  # complex to complex


@enum.unique
class QuantDtype(enum.Enum):
    """MindSpore's ``QuantDtype`` (``mindspore.common.dtype``, ``from mindspore import QuantDtype``): the
    quantization data types of MindSpore Golden Stick's algorithms (``set_weight_quant_dtype``), ``INT1`` to
    ``INT16`` (values 0 to 15) and ``UINT1`` to ``UINT16`` (100 to 115). ``str()`` gives the name, and
    ``value()`` (a method, as MindSpore's) the int."""

    INT1 = 0
    INT2 = 1
    INT3 = 2
    INT4 = 3
    INT5 = 4
    INT6 = 5
    INT7 = 6
    INT8 = 7
    INT9 = 8
    INT10 = 9
    INT11 = 10
    INT12 = 11
    INT13 = 12
    INT14 = 13
    INT15 = 14
    INT16 = 15

    UINT1 = 100
    UINT2 = 101
    UINT3 = 102
    UINT4 = 103
    UINT5 = 104
    UINT6 = 105
    UINT7 = 106
    UINT8 = 107
    UINT9 = 108
    UINT10 = 109
    UINT11 = 110
    UINT12 = 111
    UINT13 = 112
    UINT14 = 113
    UINT15 = 114
    UINT16 = 115

    def __str__(self) -> str:
        return self.name

    def value(self) -> int:  # a method, as MindSpore's (it replaces Enum's value property)
        return self._value_
