"""Math operators: arithmetic and comparison with broadcasting, unary math, MatMul, reductions, AssignSub."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import (
    _InplaceAssign,
    _Operator,
    broadcast_shape,
    matmul_shape,
    merge_dim,
    same_dim,
)
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = [
    "Add",
    "Sub",
    "Mul",
    "RealDiv",
    "Maximum",
    "Minimum",
    "Equal",
    "Neg",
    "Exp",
    "Log",
    "Square",
    "Sqrt",
    "Sin",
    "Cos",
    "Log1p",
    "Expm1",
    "Reciprocal",
    "Rsqrt",
    "Conj",
    "MatMul",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceAll",
    "ReduceAny",
    "CumSum",
    "CumProd",
    "Cummax",
    "Cummin",
    "AssignSub",
    "Abs",
    "Erf",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "IsNan",
    "IsFinite",
    "LogicalNot",
    "Pow",
    "Atan2",
    "Div",
    "FloorDiv",
    "Mod",
    "FloorMod",
    "Greater",
    "GreaterEqual",
    "Less",
    "LessEqual",
    "NotEqual",
    "LogicalAnd",
    "LogicalOr",
    "AddN",
    "BatchMatMul",
]

_REAL_NUMBER_TYPES = mstype.int_type + mstype.uint_type + mstype.float_type
_FLOAT_COMPLEX_TYPES = mstype.float_type + mstype.complex_type
_COMPLEX_TO_REAL = {mstype.complex64: mstype.float32, mstype.complex128: mstype.float64}


class _BinaryOp(_Operator):
    """Elementwise ``x op y`` with NumPy broadcasting; x and y are promoted to one dtype."""

    __mindspore_signature__ = (
        sig.make_sig("x", dtype=sig.sig_dtype.T),
        sig.make_sig("y", dtype=sig.sig_dtype.T),
    )
    valid_dtypes = mstype.number_type
    unknown_rank_ok = True

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "y"], outputs=["output"])

    def infer_shape(self, x_shape, y_shape):
        return broadcast_shape(self.name, x_shape, y_shape)

    def infer_dtype(self, x_dtype, y_dtype):
        args = {"x": x_dtype, "y": y_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, self.valid_dtypes, self.name)


class Add(_BinaryOp):
    r""":math:`out = x + y`, broadcast. dtypes: bool and numbers."""

    valid_dtypes = (mstype.bool_,) + mstype.number_type


class Sub(_BinaryOp):
    r""":math:`out = x - y`, broadcast. dtypes: numbers."""


class Mul(_BinaryOp):
    r""":math:`out = x \cdot y`, broadcast. dtypes: bool and numbers."""

    valid_dtypes = (mstype.bool_,) + mstype.number_type


class RealDiv(_BinaryOp):
    r""":math:`out = x / y`, broadcast. dtypes: float16, bfloat16, float32, float64, complex64, complex128
    (complex: NumPy's scaled (Smith) division)."""

    valid_dtypes = _FLOAT_COMPLEX_TYPES


class Maximum(_BinaryOp):
    r""":math:`out = \max(x, y)`, elementwise with broadcasting; a NaN in either input gives NaN and ties
    give x (as ``np.maximum``).

    ``Maximum()(x, y)``: x and y (tensors or Python numbers) are promoted to one dtype.
    dtypes: integers and floats. Output: the broadcast shape, the promoted dtype.
    """

    valid_dtypes = _REAL_NUMBER_TYPES


class Minimum(_BinaryOp):
    r""":math:`out = \min(x, y)`, elementwise with broadcasting; a NaN in either input gives NaN and ties
    give x (as ``np.minimum``).

    ``Minimum()(x, y)``. dtypes: as for Maximum.
    """

    valid_dtypes = _REAL_NUMBER_TYPES


class Equal(_BinaryOp):
    r""":math:`out = (x = y)`, elementwise with broadcasting; the output is a bool tensor. NaN equals
    nothing (not even NaN) and -0.0 equals 0.0.

    ``Equal()(x, y)``: x and y (tensors or Python numbers) are promoted to one dtype.
    dtypes: bool, integers, floats, complex64, complex128 (complex: both parts equal).
    """

    valid_dtypes = (mstype.bool_,) + mstype.number_type

    def infer_dtype(self, x_dtype, y_dtype):
        super().infer_dtype(x_dtype, y_dtype)
        return mstype.bool_


class _UnaryOp(_Operator):
    valid_dtypes = mstype.float_type
    unknown_rank_ok = True

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, self.valid_dtypes, self.name)


class Neg(_UnaryOp):
    r""":math:`y = -x`. dtypes: numbers."""

    valid_dtypes = mstype.number_type


class Exp(_UnaryOp):
    r""":math:`y = e^x`. dtypes: float16, bfloat16, float32, float64, complex64, complex128."""

    valid_dtypes = _FLOAT_COMPLEX_TYPES


class Log(_UnaryOp):
    r""":math:`y = \ln x` (NaN for x < 0, -inf at 0). dtypes: float16, bfloat16, float32, float64,
    complex64, complex128 (complex: the principal branch, :math:`\ln|x| + i \arg x`)."""

    valid_dtypes = _FLOAT_COMPLEX_TYPES


class Sin(_UnaryOp):
    r""":math:`y = \sin x`, elementwise. dtypes: float16, bfloat16, float32, float64, complex64, complex128."""

    valid_dtypes = _FLOAT_COMPLEX_TYPES


class Cos(_UnaryOp):
    r""":math:`y = \cos x`, elementwise. dtypes: float16, bfloat16, float32, float64, complex64, complex128."""

    valid_dtypes = _FLOAT_COMPLEX_TYPES


class Log1p(_UnaryOp):
    r""":math:`y = \ln(1 + x)`, accurate near 0 (NaN for x < -1, -inf at -1)."""


class Expm1(_UnaryOp):
    r""":math:`y = e^x - 1`, accurate near 0."""


class Reciprocal(_UnaryOp):
    r""":math:`y = 1 / x` (inf at 0, as in NumPy)."""


class Conj(_UnaryOp):
    r""":math:`y = \overline{x} = re(x) - i\,im(x)`, elementwise (MindSpore's ``ops.Conj``); a real
    tensor is its own conjugate.

    ``Conj()(input)``. dtypes: complex64, complex128, float16, bfloat16, float32, float64, int32, int64.
    Output: same shape and dtype.
    """

    valid_dtypes = mstype.complex_type + mstype.float_type + (mstype.int32, mstype.int64)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input"], outputs=["output"])

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input", x_dtype, self.valid_dtypes, self.name)


class Rsqrt(_UnaryOp):
    r""":math:`y = 1 / \sqrt{x}` (NaN for x < 0, inf at 0)."""


class Square(_UnaryOp):
    r""":math:`y = x^2`, elementwise (integers wrap modulo :math:`2^{bits}` like NumPy).

    dtypes: numbers (complex64, complex128 included).
    """

    valid_dtypes = mstype.number_type


class Sqrt(_UnaryOp):
    r""":math:`y = \sqrt{x}`, elementwise (NaN for x < 0, as in NumPy; complex: the principal root).
    dtypes: float16, bfloat16, float32, float64, complex64, complex128."""

    valid_dtypes = _FLOAT_COMPLEX_TYPES


class MatMul(_Operator):
    r"""Matrix product of 2-D tensors: :math:`out = op(x_1) \, op(x_2)`, where :math:`op` transposes
    when ``transpose_a`` / ``transpose_b`` is True.

    dtypes: float16, bfloat16, float32, float64 (BLAS; half types compute in float32), int32, int64.
    """

    __mindspore_signature__ = (
        sig.make_sig("x1", dtype=sig.sig_dtype.T),
        sig.make_sig("x2", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self, transpose_a=False, transpose_b=False):
        validator.check_value_type("transpose_a", transpose_a, [bool], self.name)
        validator.check_value_type("transpose_b", transpose_b, [bool], self.name)
        self.init_prim_io_names(inputs=["x1", "x2"], outputs=["output"])

    def infer_shape(self, x1, x2):
        return matmul_shape(self.name, self.transpose_a, self.transpose_b, x1, x2)

    def infer_dtype(self, x1, x2):
        valid = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64) + mstype.int_type + mstype.uint_type
        return validator.check_tensors_dtypes_same_and_valid({"x1": x1, "x2": x2}, valid, self.name)


class _Reduce(_Operator):
    """Reduce over ``axis`` (an int, a tuple of ints, or () for every axis)."""

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("axis", default=()))
    constant_inputs = ((1, "axis"),)
    valid_dtypes = mstype.number_type

    @prim_attr_register
    def __init__(self, keep_dims=False):
        validator.check_value_type("keep_dims", keep_dims, [bool], self.name)
        self.init_prim_io_names(inputs=["input_x", "axis"], outputs=["y"])

    def infer_shape(self, x_shape, axis):
        axes = validator.check_axis("axis", axis, len(x_shape), self.name)
        if not x_shape:
            return []
        if not axes:
            axes = tuple(range(len(x_shape)))
        if self.keep_dims:
            return [1 if i in axes else d for i, d in enumerate(x_shape)]
        return [d for i, d in enumerate(x_shape) if i not in axes]

    def infer_dtype(self, x_dtype, axis):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, self.valid_dtypes, self.name)


class ReduceSum(_Reduce):
    r""":math:`y = \sum_{axis} x`. ``ReduceSum(keep_dims=False)(x, axis=())``.

    dtypes: numbers.
    """


class ReduceMean(_Reduce):
    r""":math:`y = \frac{1}{N} \sum_{axis} x` over the N reduced elements.
    ``ReduceMean(keep_dims=False)(x, axis=())``. dtypes: float16, bfloat16, float32, float64."""

    valid_dtypes = mstype.float_type


class _ReduceSelect(_Reduce):
    """A reduction that selects an element (max, min): reducing an axis of size 0 is undefined."""

    valid_dtypes = _REAL_NUMBER_TYPES
    _what = "maximum"

    def infer_shape(self, x_shape, axis):
        out = super().infer_shape(x_shape, axis)
        axes = validator.check_axis("axis", axis, len(x_shape), self.name) or tuple(range(len(x_shape)))
        empty = [a for a in axes if a < len(x_shape) and x_shape[a] == 0]
        if empty:
            raise ValueError(
                f"For '{self.name}', cannot reduce the zero-size axis {empty[0]} of 'input_x' {list(x_shape)}: "
                f"the {self._what} of no elements is undefined."
            )
        return out


class ReduceMax(_ReduceSelect):
    r""":math:`y = \max_{axis} x`. ``ReduceMax(keep_dims=False)(x, axis=())``; ``axis=()`` reduces every axis.

    A NaN in a reduced slice gives NaN (as ``np.max``). Reducing an axis of size 0 is a ValueError: the
    maximum of no elements is undefined.
    dtypes: numbers but complex.
    """


class ReduceMin(_ReduceSelect):
    r""":math:`y = \min_{axis} x`. ``ReduceMin(keep_dims=False)(x, axis=())``; ``axis=()`` reduces every axis.

    A NaN in a reduced slice gives NaN (as ``np.min``). Reducing an axis of size 0 is a ValueError: the
    minimum of no elements is undefined.
    dtypes: numbers but complex; kernels (CPU, GPU): float16, bfloat16, float32, float64, int32, int64
    (int8/int16/uint8 widen losslessly).
    """

    _what = "minimum"


class ReduceProd(_Reduce):
    r""":math:`y = \prod_{axis} x`. ``ReduceProd(keep_dims=False)(x, axis=())``; an empty product is 1.

    Floats multiply in double (float16/bfloat16 in float32); integers wrap modulo 2**bits like NumPy.
    dtypes: numbers but complex; kernels (CPU, GPU): float16, bfloat16, float32, float64, int32, int64.
    """

    valid_dtypes = _REAL_NUMBER_TYPES


class _ReduceLogical(_Reduce):
    valid_dtypes = (mstype.bool_,)


class ReduceAll(_ReduceLogical):
    r""":math:`y = \bigwedge_{axis} x` (logical and). ``ReduceAll(keep_dims=False)(x, axis=())``; an empty
    reduction is True (``np.all``). dtypes: bool."""


class ReduceAny(_ReduceLogical):
    r""":math:`y = \bigvee_{axis} x` (logical or). ``ReduceAny(keep_dims=False)(x, axis=())``; an empty
    reduction is False (``np.any``). dtypes: bool."""


class _CumScan(_Operator):
    """A cumulative scan along ``axis``: ``Prim(exclusive=False, reverse=False)(x, axis)``."""

    __mindspore_signature__ = (sig.make_sig("x"), sig.make_sig("axis"))
    constant_inputs = ((1, "axis"),)

    @prim_attr_register
    def __init__(self, exclusive=False, reverse=False):
        validator.check_value_type("exclusive", exclusive, [bool], self.name)
        validator.check_value_type("reverse", reverse, [bool], self.name)
        self.init_prim_io_names(inputs=["x", "axis"], outputs=["y"])

    def infer_shape(self, x_shape, axis):
        validator.check_value_type("axis", axis, [int], self.name)
        rank = max(len(x_shape), 1)
        if not -rank <= axis < rank:
            raise ValueError(f"For '{self.name}', the 'axis' must be in [{-rank}, {rank}), but got {axis}.")
        return x_shape

    def infer_dtype(self, x_dtype, axis):
        return validator.check_tensor_dtype_valid("x", x_dtype, _REAL_NUMBER_TYPES, self.name)


class CumSum(_CumScan):
    r"""Cumulative sum along ``axis``: ``CumSum(exclusive=False, reverse=False)(x, axis)``,
    :math:`y_k = \sum_{j \le k} x_j` (exclusive: :math:`j < k`; reverse: from the end, :math:`j \ge k`,
    exclusive :math:`j > k`). ``axis`` is a constant int in [-rank, rank).

    Floats accumulate in double (float16/bfloat16 in float32), integers wrap modulo 2**bits as ReduceSum.
    dtypes: numbers but complex; kernels (CPU, GPU): float16, bfloat16, float32, float64, int32, int64
    (int8/int16/uint8 widen losslessly).
    """


class CumProd(_CumScan):
    r"""Cumulative product along ``axis``: ``CumProd(exclusive=False, reverse=False)(x, axis)``,
    :math:`y_k = \prod_{j \le k} x_j` (exclusive: :math:`j < k`, an empty product 1; reverse: from the end,
    :math:`j \ge k`, exclusive :math:`j > k`). ``axis`` is a constant int in [-rank, rank).

    Floats multiply in double (float16/bfloat16 in float32), integers wrap modulo 2**bits as ReduceProd.
    Its gradient divides by ``x`` (MindSpore's rule): a zero in ``x`` gives a non-finite gradient.
    dtypes: numbers but complex; kernels (CPU, GPU): float16, bfloat16, float32, float64, int32, int64
    (int8/int16/uint8 widen losslessly).
    """


class _ExtremeScan(_Operator):
    """``Prim(axis)(input)`` -> (values, indices): the running extreme along ``axis`` and its position."""

    __mindspore_signature__ = (sig.make_sig("input"),)

    @prim_attr_register
    def __init__(self, axis):
        validator.check_value_type("axis", axis, [int], self.name)
        self.init_prim_io_names(inputs=["input"], outputs=["values", "indices"])

    def infer_shape(self, x_shape):
        rank = len(x_shape)
        if rank == 0:
            raise ValueError(f"For '{self.name}', the 'input' must have at least 1 dim, but got a 0-d tensor.")
        if not -rank <= self.axis < rank:
            raise ValueError(f"For '{self.name}', the 'axis' must be in [{-rank}, {rank}), but got {self.axis}.")
        return x_shape, x_shape

    def infer_dtype(self, x_dtype):
        t = validator.check_tensor_dtype_valid("input", x_dtype, _REAL_NUMBER_TYPES, self.name)
        return t, mstype.int64


class Cummax(_ExtremeScan):
    r"""The running maximum along ``axis``: ``Cummax(axis)(input)`` -> ``(values, indices)``,
    :math:`values_k = \max_{j \le k} x_j` and :math:`indices_k` its position along ``axis`` (int64; the latest
    on ties, as PyTorch's; a NaN is the maximum from where it stands). dtypes (CPU, GPU): float16, bfloat16,
    float32, float64, int32, int64 (int8/int16/uint8 widen losslessly)."""


class Cummin(_ExtremeScan):
    r"""The running minimum along ``axis``: ``Cummin(axis)(input)`` -> ``(values, indices)``, as ``Cummax``
    with :math:`\min`. dtypes (CPU, GPU): float16, bfloat16, float32, float64, int32, int64."""


class AssignSub(_InplaceAssign):
    r"""In place: :math:`variable \leftarrow variable - value`; returns ``variable``.

    ``variable`` must be a Parameter (RW_WRITE); ``value`` is cast to its dtype when lossless.
    dtypes: float16, bfloat16, float32, float64, int32, int64 (smaller ints widen).
    """

    valid_dtypes = mstype.number_type


# ---------------------------------------------------------------------------------------------
# Elementwise math, second batch: kernels in csrc/kernels/cpu/elemwise.cc and compare.cc, math in
# csrc/include/opforge/functors/elemwise.h. dtypes below are the CPU's (the GPU mirrors them).


class _UnaryNamed(_UnaryOp):
    """A unary op with MindSpore's input/output names and dtypes of its own."""

    io_names = (["x"], ["y"])

    @prim_attr_register
    def __init__(self):
        inputs, outputs = self.io_names
        self.init_prim_io_names(inputs=inputs, outputs=outputs)

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid(self.io_names[0][0], x_dtype, self.valid_dtypes, self.name)


class Abs(_UnaryNamed):
    r""":math:`y = |x|`, elementwise (for signed integers :math:`|INT\_MIN|` wraps to INT_MIN, as in NumPy).

    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8; complex64 and
    complex128 give :math:`|x| = \operatorname{hypot}(re, im)` as float32 and float64 (MindSpore's Abs).
    """

    io_names = (["input_x"], ["output"])
    valid_dtypes = _REAL_NUMBER_TYPES + mstype.complex_type

    def infer_dtype(self, x_dtype):
        x_dtype = super().infer_dtype(x_dtype)
        return _COMPLEX_TO_REAL.get(x_dtype, x_dtype)


class Erf(_UnaryNamed):
    r""":math:`y = \frac{2}{\sqrt\pi} \int_0^x e^{-t^2} dt`. dtypes: float16, bfloat16, float32, float64."""


class Floor(_UnaryNamed):
    r""":math:`y = \lfloor x \rfloor`. dtypes: float16, bfloat16, float32, float64."""


class Ceil(_UnaryNamed):
    r""":math:`y = \lceil x \rceil`. dtypes: float16, bfloat16, float32, float64."""


class Round(_UnaryNamed):
    r"""Rounds to the nearest integer, halves to even (``np.round``: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2).

    dtypes: float16, bfloat16, float32, float64; int32 and int64 (returned unchanged).
    """

    io_names = (["input_x"], ["output"])
    valid_dtypes = mstype.float_type + mstype.int_type


class Sign(_UnaryNamed):
    r""":math:`y = -1, 0, 1` by the sign of x; NaN gives NaN, -0.0 gives 0 (``np.sign``).

    dtypes: float16, bfloat16, float32, float64, int32, int64.
    """

    io_names = (["x"], ["output"])
    valid_dtypes = mstype.float_type + mstype.int_type


class _Predicate(_UnaryNamed):
    io_names = (["x"], ["output"])

    def infer_dtype(self, x_dtype):
        super().infer_dtype(x_dtype)
        return mstype.bool_


class IsNan(_Predicate):
    r""":math:`y = (x \text{ is NaN})`, a bool tensor. dtypes: float16, bfloat16, float32, float64."""


class IsFinite(_Predicate):
    r""":math:`y = (x \text{ is neither NaN nor } \pm\infty)`, a bool tensor (integers and bools: True).

    dtypes: bool, int8, int16, int32, int64, uint8, float16, bfloat16, float32, float64.
    """

    valid_dtypes = (mstype.bool_,) + _REAL_NUMBER_TYPES


class LogicalNot(_UnaryNamed):
    r""":math:`y = \lnot x`. dtypes: bool."""

    io_names = (["x"], ["output"])
    valid_dtypes = (mstype.bool_,)


class Pow(_BinaryOp):
    r""":math:`out = x^{y}`, broadcast; x and y are promoted to one dtype.

    Floats: C's ``pow`` (NaN for a negative base with a non-integer exponent). Integers: exact,
    wrapping modulo :math:`2^{bits}` like NumPy; a negative exponent gives the truncated real power
    (1 for x = 1, :math:`\pm 1` for x = -1, else 0) where NumPy raises.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8.
    """

    valid_dtypes = _REAL_NUMBER_TYPES


class Atan2(_BinaryOp):
    r""":math:`out = \operatorname{atan2}(x, y)`: the angle of the point (y, x) in :math:`[-\pi, \pi]`
    (``np.arctan2(x, y)``), broadcast. dtypes: float16, bfloat16, float32, float64."""

    valid_dtypes = mstype.float_type


class Div(_BinaryOp):
    r""":math:`out = x / y`, broadcast; x and y are promoted to one dtype, which the output keeps.

    Floats: IEEE division (:math:`\pm\infty` or NaN for y = 0). Integers (MindSpore's CPU kernel):
    truncated toward zero; :math:`x / 0` is 0 for x = 0, the dtype's maximum for x > 0 and its minimum
    for x < 0; INT_MIN / -1 wraps to INT_MIN. Never a crash.
    Complex: NumPy's scaled (Smith) division.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, complex64, complex128.
    """

    valid_dtypes = _REAL_NUMBER_TYPES + mstype.complex_type


class FloorDiv(_BinaryOp):
    r""":math:`out = \lfloor x / y \rfloor`, broadcast.

    Floats: the floor of the quotient computed in double, as MindSpore (:math:`\pm\infty` or NaN for
    y = 0). Integers: rounded
    toward :math:`-\infty`; :math:`x // 0` as in Div (0, the maximum or the minimum by the sign of x);
    INT_MIN // -1 wraps to INT_MIN. dtypes: as for Div.
    """

    valid_dtypes = _REAL_NUMBER_TYPES


class Mod(_BinaryOp):
    r"""The truncated remainder :math:`out = x - y \cdot \operatorname{trunc}(x / y)`, with the sign of
    x (C's ``fmod``, ``np.fmod``), broadcast. Floats: NaN for y = 0. Integers: :math:`x \bmod 0 = 0`
    (as NumPy). dtypes: as for Div."""

    valid_dtypes = _REAL_NUMBER_TYPES


class FloorMod(_BinaryOp):
    r"""The floored remainder :math:`out = x - y \lfloor x / y \rfloor`, with the sign of y (Python's
    ``%``, ``np.mod``), broadcast. Floats: NaN for y = 0. Integers: :math:`x \bmod 0 = 0` (as NumPy).
    dtypes: as for Div."""

    valid_dtypes = _REAL_NUMBER_TYPES


class _Compare(_BinaryOp):
    """``x op y`` with broadcasting as a bool tensor; x and y are promoted to one dtype."""

    valid_dtypes = (mstype.bool_,) + _REAL_NUMBER_TYPES

    def infer_dtype(self, x_dtype, y_dtype):
        super().infer_dtype(x_dtype, y_dtype)
        return mstype.bool_


class Greater(_Compare):
    r""":math:`out = (x > y)`, broadcast, bool. NaN compares False.
    dtypes: bool, int8, int16, int32, int64, uint8, float16, bfloat16, float32, float64."""


class GreaterEqual(_Compare):
    r""":math:`out = (x \ge y)`, broadcast, bool. NaN compares False. dtypes: as for Greater."""


class Less(_Compare):
    r""":math:`out = (x < y)`, broadcast, bool. NaN compares False. dtypes: as for Greater."""


class LessEqual(_Compare):
    r""":math:`out = (x \le y)`, broadcast, bool. NaN compares False. dtypes: as for Greater."""


class NotEqual(_Compare):
    r""":math:`out = (x \ne y)`, broadcast, bool. NaN differs from everything (True).
    dtypes: as for Greater, and complex64, complex128."""

    valid_dtypes = (mstype.bool_,) + mstype.number_type


class LogicalAnd(_Compare):
    r""":math:`out = x \land y`, broadcast. dtypes: bool."""

    valid_dtypes = (mstype.bool_,)


class LogicalOr(_Compare):
    r""":math:`out = x \lor y`, broadcast. dtypes: bool."""

    valid_dtypes = (mstype.bool_,)


_ADD_N_TYPES = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64, mstype.int8, mstype.int16,
                mstype.int32, mstype.int64, mstype.uint8)  # fmt: skip


class AddN(_Operator):
    r"""The element-wise sum of a tuple (or list) of Tensors of one shape and dtype: ``AddN()(x)``,
    :math:`out = \sum_k x_k` (summed left to right in float for the half types, integers wrapping).
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, on CPU and GPU."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["inputs"], outputs=["sum"])

    def infer_shape(self, inputs):
        if not isinstance(inputs, tuple):
            raise TypeError(f"For '{self.name}', the 'x' must be a tuple of Tensors.")
        first = list(inputs[0])
        for i, s in enumerate(inputs[1:], 1):
            if len(s) != len(first) or not all(same_dim(a, b) for a, b in zip(first, s)):
                raise ValueError(
                    f"For '{self.name}', every element of 'x' must have the shape of 'x[0]' {list(inputs[0])}, "
                    f"but 'x[{i}]' has shape {list(s)}."
                )
            first = [merge_dim(a, b) for a, b in zip(first, s)]
        return first

    def infer_dtype(self, inputs):
        if not isinstance(inputs, tuple):
            raise TypeError(f"For '{self.name}', the 'x' must be a tuple of Tensors.")
        first = inputs[0]
        for i, d in enumerate(inputs):
            validator.check_tensor_dtype_valid(f"x[{i}]", d, _ADD_N_TYPES, self.name)
            if d is not first:
                raise TypeError(
                    f"For '{self.name}', every element of 'x' must have the dtype of 'x[0]' ({first}), but 'x[{i}]' "
                    f"is {d}."
                )
        return first


class BatchMatMul(_Operator):
    r"""Batched matrix product: ``BatchMatMul(transpose_a=False, transpose_b=False)(x, y)``,
    :math:`out[..., :, :] = op(x[..., :, :]) \, op(y[..., :, :])` over the leading (batch) dims, which
    broadcast as NumPy's; both inputs have at least 2 dims (``np.matmul``).

    dtypes: float16, bfloat16, float32, float64 (BLAS / the GPU's GEMM; half types compute in float32),
    int32, int64 (wrapping), on CPU and GPU.
    """

    __mindspore_signature__ = (sig.make_sig("x", dtype=sig.sig_dtype.T), sig.make_sig("y", dtype=sig.sig_dtype.T))

    @prim_attr_register
    def __init__(self, transpose_a=False, transpose_b=False):
        validator.check_value_type("transpose_a", transpose_a, [bool], self.name)
        validator.check_value_type("transpose_b", transpose_b, [bool], self.name)
        self.init_prim_io_names(inputs=["x1", "x2"], outputs=["output"])

    def infer_shape(self, x, y):
        if len(x) < 2 or len(y) < 2:
            raise ValueError(
                f"For '{self.name}', the inputs must have at least 2 dims, but got shapes {list(x)} and {list(y)}."
            )
        m, k1 = (x[-1], x[-2]) if self.transpose_a else (x[-2], x[-1])
        k2, n = (y[-1], y[-2]) if self.transpose_b else (y[-2], y[-1])
        if not same_dim(k1, k2):
            raise ValueError(
                f"For '{self.name}', the inner dimensions must match (transpose_a={self.transpose_a}, "
                f"transpose_b={self.transpose_b}), but got shapes {list(x)} and {list(y)}."
            )
        batch = broadcast_shape(self.name, list(x[:-2]), list(y[:-2]), "x", "y")
        return list(batch) + [m, n]

    def infer_dtype(self, x, y):
        valid = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64, mstype.int32, mstype.int64)
        return validator.check_tensors_dtypes_same_and_valid({"x": x, "y": y}, valid, self.name)
