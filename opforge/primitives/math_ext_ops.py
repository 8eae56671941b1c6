"""The third batch of elementwise primitives (MindSpore's names, inputs and dtypes): inverse and
hyperbolic trigonometry, Erfc, Rint, Trunc, Inv; the bitwise Invert, BitwiseAnd, BitwiseOr,
BitwiseXor; SquaredDifference, Xdivy, Xlogy, DivNoNan and LogicalXor with broadcasting.
Kernels: csrc/kernels/cpu/math_ext.cc and cuda/math_ext.cu (functors/math_ext.h)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.primitives.math_ops import _BinaryOp, _Compare, _UnaryNamed

__all__ = [
    "Sinh",
    "Cosh",
    "Tan",
    "Asin",
    "ACos",
    "Atan",
    "Asinh",
    "Acosh",
    "Atanh",
    "Erfc",
    "Lgamma",
    "Digamma",
    "Erfinv",
    "Rint",
    "Trunc",
    "Inv",
    "Invert",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "SquaredDifference",
    "Xdivy",
    "Xlogy",
    "DivNoNan",
    "LogicalXor",
]

_INT_TYPES = mstype.int_type + mstype.uint_type


class _FloatUnary(_UnaryNamed):
    io_names = (["x"], ["output"])


class Sinh(_FloatUnary):
    r""":math:`y = \sinh x`. dtypes: float16, bfloat16, float32, float64."""


class Cosh(_FloatUnary):
    r""":math:`y = \cosh x`. dtypes: float16, bfloat16, float32, float64."""


class Tan(_FloatUnary):
    r""":math:`y = \tan x`. dtypes: float16, bfloat16, float32, float64."""


class Asin(_FloatUnary):
    r""":math:`y = \arcsin x` (NaN outside [-1, 1]). dtypes: float16, bfloat16, float32, float64."""


class ACos(_FloatUnary):
    r""":math:`y = \arccos x` (NaN outside [-1, 1]). dtypes: float16, bfloat16, float32, float64."""


class Atan(_FloatUnary):
    r""":math:`y = \arctan x`. dtypes: float16, bfloat16, float32, float64."""


class Asinh(_FloatUnary):
    r""":math:`y = \operatorname{arsinh} x = \log(x + \sqrt{x^2 + 1})`. dtypes: float16, bfloat16, float32, float64."""


class Acosh(_FloatUnary):
    r""":math:`y = \operatorname{arcosh} x` (NaN below 1). dtypes: float16, bfloat16, float32, float64."""


class Atanh(_FloatUnary):
    r""":math:`y = \operatorname{artanh} x` (+-inf at +-1, NaN outside). dtypes: float16, bfloat16, float32,
    float64."""


class Erfc(_FloatUnary):
    r""":math:`y = 1 - \operatorname{erf} x`, accurate for large x. dtypes: float16, bfloat16, float32, float64."""


class Lgamma(_FloatUnary):
    r""":math:`y = \ln |\Gamma(x)|` (+inf at 0, -1, -2, ... and at -inf, as C's ``lgamma``).
    dtypes: float16, bfloat16, float32, float64."""


class Digamma(_FloatUnary):
    r""":math:`y = \psi(x) = \frac{d}{dx} \ln \Gamma(x)` (NaN at -1, -2, ..., -inf at +0, +inf at -0),
    computed in double. Not differentiable (its derivative, the trigamma function, has no operator).
    dtypes: float16, bfloat16, float32, float64."""


class Erfinv(_FloatUnary):
    r""":math:`y = \operatorname{erf}^{-1} x` for x in [-1, 1] (+-inf at +-1, NaN outside), computed in double.
    dtypes: float16, bfloat16, float32, float64."""


class Rint(_FloatUnary):
    r"""Rounds to the nearest integer, halves to even (``np.rint``). dtypes: float16, bfloat16, float32, float64."""


class Trunc(_UnaryNamed):
    r"""Rounds toward zero (``np.trunc``); integers are returned as they are.

    dtypes: float16, bfloat16, float32, float64, int8, int32, uint8.
    """

    io_names = (["input_x"], ["output_y"])
    valid_dtypes = mstype.float_type + (mstype.int8, mstype.int32, mstype.uint8)


class Inv(_FloatUnary):
    r""":math:`y = 1 / x` (+-inf at +-0). dtypes: float16, bfloat16, float32, float64."""


class Invert(_UnaryNamed):
    r""":math:`y = \lnot x`, bit by bit (``np.invert``).

    dtypes: int8, int16, int32, int64, uint8, uint16, uint32, uint64.
    """

    io_names = (["x"], ["y"])
    valid_dtypes = _INT_TYPES


class _Bitwise(_BinaryOp):
    valid_dtypes = _INT_TYPES


class BitwiseAnd(_Bitwise):
    r""":math:`x \land y`, bit by bit, with broadcasting. dtypes: int8..int64, uint8..uint64."""


class BitwiseOr(_Bitwise):
    r""":math:`x \lor y`, bit by bit, with broadcasting. dtypes: int8..int64, uint8..uint64."""


class BitwiseXor(_Bitwise):
    r""":math:`x \oplus y`, bit by bit, with broadcasting. dtypes: int8..int64, uint8..uint64."""


class SquaredDifference(_BinaryOp):
    r""":math:`(x - y)^2` with broadcasting (integers wrap). dtypes: float16, bfloat16, float32, float64,
    int32, int64."""

    valid_dtypes = mstype.float_type + (mstype.int32, mstype.int64)


class _FloatBinary(_BinaryOp):
    valid_dtypes = mstype.float_type


class Xdivy(_FloatBinary):
    r""":math:`x / y`, and 0 where x = 0 (whatever y is), with broadcasting.
    dtypes: float16, bfloat16, float32, float64."""


class Xlogy(_FloatBinary):
    r""":math:`x \log y`, and 0 where x = 0 (whatever y is), with broadcasting.
    dtypes: float16, bfloat16, float32, float64."""


class DivNoNan(_FloatBinary):
    r""":math:`x / y`, and 0 where y = 0, with broadcasting. dtypes: float16, bfloat16, float32, float64."""


class LogicalXor(_Compare):
    r""":math:`x \oplus y` of bool tensors with broadcasting. dtypes: bool."""

    valid_dtypes = (mstype.bool_,)
