"""bprops of the second batch of elementwise operators: Abs (AbsGrad, and its own), Erf, Pow, Atan2, Div, Mod, FloorMod,
GeLU, Softplus, HSigmoid, HSwish (differentiable, written with primitives), and the piecewise
constant ones (Floor, Ceil, Round, Sign, FloorDiv, the comparisons and logical ops, IsNan,
IsFinite), whose gradients are zeros as in MindSpore."""

from __future__ import annotations

import math

from opforge.bprop._utils import conj, grad_for, needs_input_grad, zero_grads
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import _grad_ops as G
from opforge.primitives import math_ops as P
from opforge.primitives import nn_ops as N
from opforge.tensor import Tensor

_log = P.Log()
_pow = P.Pow()
_floor_div = P.FloorDiv()
_mod = P.Mod()


@bprop_getters.register(P.Abs)
def get_bprop_abs(self):
    # d|x| = sign(x) dx (0 at 0): MindSpore's AbsGrad.
    abs_grad = G.AbsGrad()

    def bprop(x, out, dout):
        if x.dtype.kind == "c":
            raise TypeError(
                f"For 'Abs', the gradient of a complex input is not supported, but got {x.dtype}; "
                "take Abs of its real and imaginary parts or differentiate x * conj(x) instead."
            )
        return (abs_grad(x, dout),)

    return bprop


@bprop_getters.register(G.AbsGrad)
def get_bprop_abs_grad(self):
    # AbsGrad(x, dy) = dy sign(x): linear in dy, piecewise constant in x.
    abs_grad = G.AbsGrad()

    def bprop(x, dy, out, dout):
        return F.zeros_like(x), abs_grad(x, dout)

    return bprop


@bprop_getters.register(P.Erf)
def get_bprop_erf(self):
    # d erf(x) = 2 / sqrt(pi) exp(-x^2) dx
    def bprop(x, out, dout):
        return (F.mul(dout, F.mul(F.exp(F.neg(F.mul(x, x))), 2.0 / math.sqrt(math.pi))),)

    return bprop


def _zero_bprop(self):
    def bprop(*args):
        return zero_grads(*args[:-2])

    return bprop


for _prim in (
    P.Floor,
    P.Ceil,
    P.Round,
    P.Sign,
    P.IsNan,
    P.IsFinite,
    P.LogicalNot,
    P.FloorDiv,
    P.Greater,
    P.GreaterEqual,
    P.Less,
    P.LessEqual,
    P.NotEqual,
    P.LogicalAnd,
    P.LogicalOr,
):
    bprop_getters.register(_prim)(_zero_bprop)


@bprop_getters.register(P.Pow)
def get_bprop_pow(self):
    # d(x^y) = y x^(y-1) dx + x^y log(x) dy
    def bprop(x, y, out, dout):
        dx = dy = None
        if isinstance(x, Tensor) and needs_input_grad(0):
            y_1 = F.sub(y, 1) if isinstance(y, Tensor) else y - 1
            dx = grad_for(x, F.mul(dout, F.mul(_pow(x, y_1), y)))
        if isinstance(y, Tensor) and needs_input_grad(1):
            log_x = _log(x) if isinstance(x, Tensor) else math.log(x)
            dy = grad_for(y, F.mul(dout, F.mul(out, log_x)))
        return dx, dy

    return bprop


@bprop_getters.register(P.Atan2)
def get_bprop_atan2(self):
    # atan2(x, y): d = (y dx - x dy) / (x^2 + y^2)
    def bprop(x, y, out, dout):
        g = F.div(dout, F.add(F.mul(x, x), F.mul(y, y)))
        dx = grad_for(x, F.mul(g, y)) if isinstance(x, Tensor) and needs_input_grad(0) else None
        dy = grad_for(y, F.neg(F.mul(g, x))) if isinstance(y, Tensor) and needs_input_grad(1) else None
        return dx, dy

    return bprop


@bprop_getters.register(P.Div)
def get_bprop_div(self):
    # as RealDiv: dx = dout / y, dy = -dx * out (complex: dout / conj(y), -dx * conj(out))
    def bprop(x, y, out, dout):
        dx = F.div(dout, conj(y))
        dy = grad_for(y, F.neg(F.mul(dx, conj(out)))) if isinstance(y, Tensor) and needs_input_grad(1) else None
        return (grad_for(x, dx) if needs_input_grad(0) else None), dy

    return bprop


def _remainder_bprop(quotient):
    # x mod y = x - y q(x / y) with q piecewise constant: dx = dout, dy = -dout q
    def getter(self):
        def bprop(x, y, out, dout):
            dx = grad_for(x, dout) if needs_input_grad(0) else None
            dy = None
            if isinstance(y, Tensor) and needs_input_grad(1):
                dy = grad_for(y, F.neg(F.mul(dout, quotient(x, y))))
            return dx, dy

        return bprop

    return getter


def _trunc_div(x, y):
    q = F.div(x, y)
    return F.sub(q, _mod(q, 1.0))  # trunc(q) = q - fmod(q, 1)


bprop_getters.register(P.Mod)(_remainder_bprop(_trunc_div))
bprop_getters.register(P.FloorMod)(_remainder_bprop(lambda x, y: _floor_div(x, y)))


@bprop_getters.register(N.GeLU)
def get_bprop_gelu(self):
    gelu_grad = G.GeLUGrad()

    def bprop(x, out, dout):
        return (gelu_grad(dout, x, out),)

    return bprop


def _grad_of_input(grad_cls):
    def getter(self):
        grad_op = grad_cls()

        def bprop(x, out, dout):
            return (grad_op(dout, x),)

        return bprop

    return getter


bprop_getters.register(N.Softplus)(_grad_of_input(G.SoftplusGrad))
bprop_getters.register(N.HSigmoid)(_grad_of_input(G.HSigmoidGrad))
bprop_getters.register(N.HSwish)(_grad_of_input(G.HSwishGrad))
bprop_getters.register(N.ReLU6)(_grad_of_input(G.ReLU6Grad))


# -- the activation grads, for higher-order gradients ------------------------------------------


@bprop_getters.register(G.SoftplusGrad)
def get_bprop_softplus_grad(self):
    # SoftplusGrad(dy, x) = dy s(x), s = sigmoid: d/dy = s(x), d/dx = dy s (1 - s)
    softplus_grad = G.SoftplusGrad()

    def bprop(dy, x, out, dout):
        s = F.sigmoid(x)
        return softplus_grad(dout, x), F.mul(F.mul(dout, dy), F.mul(s, F.sub(1.0, s)))

    return bprop


@bprop_getters.register(G.ReLU6Grad)
def get_bprop_relu6_grad(self):
    # ReLU6Grad(dy, x) = dy on (0, 6): linear in dy, piecewise constant in x
    relu6_grad = G.ReLU6Grad()

    def bprop(dy, x, out, dout):
        return relu6_grad(dout, x), F.zeros_like(x)

    return bprop


@bprop_getters.register(G.HSigmoidGrad)
def get_bprop_hsigmoid_grad(self):
    # HSigmoidGrad(dy, x) = dy / 6 on (-3, 3): linear in dy, piecewise constant in x
    hsigmoid_grad = G.HSigmoidGrad()

    def bprop(dy, x, out, dout):
        return hsigmoid_grad(dout, x), F.zeros_like(x)

    return bprop


@bprop_getters.register(G.HSwishGrad)
def get_bprop_hswish_grad(self):
    # HSwishGrad(dy, x) = dy g(x), g' = 1/3 on (-3, 3) (= 2 HSigmoidGrad(1, x)), else 0
    hswish_grad = G.HSwishGrad()
    hsigmoid_grad = G.HSigmoidGrad()

    def bprop(dy, x, out, dout):
        return hswish_grad(dout, x), F.mul(hsigmoid_grad(F.mul(dout, dy), x), 2.0)

    return bprop


_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


@bprop_getters.register(G.GeLUGrad)
def get_bprop_gelu_grad(self):
    # GeLUGrad(dy, x, y) = dy G'(x), with u = k (x + c x^3), t = tanh(u):
    #   G'(x)  = (1 + t) / 2 + x (1 - t^2) u' / 2
    #   G''(x) = (1 - t^2) (u' + x (u'' - 2 t u'^2) / 2),  u' = k (1 + 3 c x^2),  u'' = 6 k c x
    gelu_grad = G.GeLUGrad()

    def bprop(dy, x, y, out, dout):
        x2 = F.mul(x, x)
        t = F.tanh(F.mul(F.add(x, F.mul(F.mul(x2, x), _GELU_C)), _GELU_K))
        du = F.mul(F.add(F.mul(x2, 3.0 * _GELU_C), 1.0), _GELU_K)
        ddu = F.mul(x, 6.0 * _GELU_K * _GELU_C)
        inner = F.add(du, F.mul(F.mul(x, F.sub(ddu, F.mul(F.mul(t, F.mul(du, du)), 2.0))), 0.5))
        second = F.mul(F.sub(1.0, F.mul(t, t)), inner)
        return gelu_grad(dout, x, y), F.mul(F.mul(dout, dy), second), F.zeros_like(y)

    return bprop
