"""bprops of the third batch of elementwise operators (math_ext_ops), written with primitives: the
trigonometric and hyperbolic functions and their inverses, Erfc, Inv, SquaredDifference, Xdivy,
Xlogy, DivNoNan; the piecewise constant Rint and Trunc and the integer and bool operators (Invert,
the bitwise ones, LogicalXor) have zero gradients, as in MindSpore."""

from __future__ import annotations

import math

import numpy as np

from opforge.bprop._utils import grad_for, needs_input_grad, zero_grads, zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import math_ext_ops as X
from opforge.tensor import Tensor

_sinh = X.Sinh()
_cosh = X.Cosh()
_xdivy = X.Xdivy()
_div_no_nan = X.DivNoNan()


def _unary(derivative):
    """bprop of y = f(x): dx = dout * derivative(x, y)."""

    def getter(self):
        def bprop(x, out, dout):
            return (F.mul(dout, derivative(x, out)),)

        return bprop

    return getter


def _one_minus_square(x):
    return F.sub(1.0, F.mul(x, x))


_DERIVATIVES = {
    X.Sinh: lambda x, y: _cosh(x),
    X.Cosh: lambda x, y: _sinh(x),
    X.Tan: lambda x, y: F.add(F.mul(y, y), 1.0),  # 1 + tan^2
    X.Asin: lambda x, y: F.rsqrt(_one_minus_square(x)),
    X.ACos: lambda x, y: F.neg(F.rsqrt(_one_minus_square(x))),
    X.Atan: lambda x, y: F.reciprocal(F.add(F.mul(x, x), 1.0)),
    X.Asinh: lambda x, y: F.reciprocal(_cosh(y)),  # 1 / sqrt(1 + x^2)
    X.Acosh: lambda x, y: F.reciprocal(_sinh(y)),  # 1 / sqrt(x^2 - 1)
    X.Atanh: lambda x, y: F.reciprocal(_one_minus_square(x)),
    X.Erfc: lambda x, y: F.mul(F.exp(F.neg(F.mul(x, x))), -2.0 / math.sqrt(math.pi)),
    X.Inv: lambda x, y: F.neg(F.mul(y, y)),  # d(1/x) = -1/x^2
    X.Lgamma: lambda x, y: X.Digamma()(x),
    X.Digamma: lambda x, y: X.Polygamma()(Tensor(np.int64(1), device=x.device), x),
    X.Erfinv: lambda x, y: F.mul(F.exp(F.mul(y, y)), math.sqrt(math.pi) / 2),  # 1 / erf'(y)
}
for _prim, _derivative in _DERIVATIVES.items():
    bprop_getters.register(_prim)(_unary(_derivative))


def _zero_bprop(self):
    def bprop(*args):
        return zero_grads(*args[:-2])

    return bprop


for _prim in (X.Rint, X.Trunc, X.Invert, X.BitwiseAnd, X.BitwiseOr, X.BitwiseXor, X.LogicalXor):
    bprop_getters.register(_prim)(_zero_bprop)


def _binary(dx_of, dy_of):
    """bprop of a broadcasting z = f(x, y): each gradient summed back to its input's shape."""

    def getter(self):
        def bprop(x, y, out, dout):
            dx = grad_for(x, dx_of(x, y, out, dout)) if isinstance(x, Tensor) and needs_input_grad(0) else None
            dy = grad_for(y, dy_of(x, y, out, dout)) if isinstance(y, Tensor) and needs_input_grad(1) else None
            return dx, dy

        return bprop

    return getter


def _nonzero(x):
    """1 where x != 0, else 0, in x's dtype."""
    return F.cast(F.not_equal(x, 0), x.dtype)


# (x - y)^2: dx = 2 (x - y) dout, dy = -dx
bprop_getters.register(X.SquaredDifference)(
    _binary(
        lambda x, y, out, dout: F.mul(F.mul(F.sub(x, y), 2), dout),
        lambda x, y, out, dout: F.mul(F.mul(F.sub(y, x), 2), dout),
    )
)
# x / y (0 where x = 0): dx = [x != 0] / y dout, dy = -x / y^2 dout (0 where x = 0)
bprop_getters.register(X.Xdivy)(
    _binary(
        lambda x, y, out, dout: F.mul(_xdivy(_nonzero(x), y), dout),
        lambda x, y, out, dout: F.neg(F.mul(_xdivy(x, F.mul(y, y)), dout)),
    )
)
# x log y (0 where x = 0): dx = [x != 0] log y dout, dy = x / y dout (0 where x = 0)
bprop_getters.register(X.Xlogy)(
    _binary(
        lambda x, y, out, dout: F.mul(F.xlogy(_nonzero(x), y), dout),
        lambda x, y, out, dout: F.mul(_xdivy(x, y), dout),
    )
)
# x / y (0 where y = 0): dx = dout / y, dy = -dout out / y, both 0 where y = 0
bprop_getters.register(X.DivNoNan)(
    _binary(
        lambda x, y, out, dout: _div_no_nan(dout, y),
        lambda x, y, out, dout: F.neg(_div_no_nan(F.mul(dout, out), y)),
    )
)


@bprop_getters.register(X.Polygamma)
def get_bprop_polygamma(self):
    # d psi^(a)(x) / dx = psi^(a+1)(x); the order is an integer: no gradient.
    def bprop(a, x, out, dout):
        return zeros_like(a), F.mul(dout, X.Polygamma()(F.add(a, F.ones_like(a)), x))

    return bprop
