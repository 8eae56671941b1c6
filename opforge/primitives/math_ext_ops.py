"""The third batch of elementwise primitives (MindSpore's names, inputs and dtypes): inverse and
hyperbolic trigonometry, Erfc, Rint, Trunc, Inv; the bitwise Invert, BitwiseAnd, BitwiseOr,
BitwiseXor; SquaredDifference, Xdivy, Xlogy, DivNoNan and LogicalXor with broadcasting.
Kernels: csrc/kernels/cpu/math_ext.cc and cuda/math_ext.cu (functors/math_ext.h)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _Operator
from opforge.primitives.math_ops import _BinaryOp, _Compare, _UnaryNamed
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

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
    "Polygamma",
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
    computed in double; its derivative is ``Polygamma`` of order 1. dtypes: float16, bfloat16, float32, float64."""


class Polygamma(_Operator):
    r"""``Polygamma()(a, x)``: :math:`y = \psi^{(a)}(x)`, the a-th derivative of the digamma function
    (:math:`\psi` itself for a = 0; :math:`(-1)^{a+1} a!\, \zeta(a + 1, x)` above, by the Hurwitz zeta
    function; +-inf at the poles 0, -1, -2, ...), elementwise, computed in double. ``a``: the order, a 0-d
    int32 or int64 tensor, >= 0 (an error otherwise). dtypes of x (CPU, GPU): float16, float32, float64."""

    __mindspore_signature__ = (sig.make_sig("a"), sig.make_sig("x"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["a", "x"], outputs=["y"])

    def infer_shape(self, a, x):
        if len(a) != 0 and not (len(a) == 1 and a[0] in (1, -1)):
            raise ValueError(f"For '{self.name}', the 'a' must be a 0-d tensor (the order), but got shape {list(a)}.")
        return list(x)

    def infer_dtype(self, a, x):
        validator.check_tensor_dtype_valid("a", a, (mstype.int32, mstype.int64), self.name)
        return validator.check_tensor_dtype_valid("x", x, (mstype.float16, mstype.float32, mstype.float64), self.name)


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
