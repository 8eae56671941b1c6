"""bprops of the math operators (primitives/math_ops.py)."""

from __future__ import annotations

import math

from opforge.bprop._utils import sum_to_shape, zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import math_ops as P


@bprop_getters.register(P.Add)
def get_bprop_add(self):
    def bprop(x, y, out, dout):
        return sum_to_shape(dout, x.shape), sum_to_shape(dout, y.shape)

    return bprop


@bprop_getters.register(P.Sub)
def get_bprop_sub(self):
    def bprop(x, y, out, dout):
        return sum_to_shape(dout, x.shape), sum_to_shape(F.neg(dout), y.shape)

    return bprop


@bprop_getters.register(P.Mul)
def get_bprop_mul(self):
    def bprop(x, y, out, dout):
        return sum_to_shape(F.mul(dout, y), x.shape), sum_to_shape(F.mul(dout, x), y.shape)

    return bprop


@bprop_getters.register(P.RealDiv)
def get_bprop_real_div(self):
    def bprop(x, y, out, dout):
        dx = F.div(dout, y)
        return sum_to_shape(dx, x.shape), sum_to_shape(F.neg(F.mul(dx, out)), y.shape)

    return bprop


@bprop_getters.register(P.Neg)
def get_bprop_neg(self):
    def bprop(x, out, dout):
        return (F.neg(dout),)

    return bprop


@bprop_getters.register(P.Exp)
def get_bprop_exp(self):
    def bprop(x, out, dout):
        return (F.mul(dout, out),)

    return bprop


@bprop_getters.register(P.Log)
def get_bprop_log(self):
    def bprop(x, out, dout):
        return (F.div(dout, x),)

    return bprop


@bprop_getters.register(P.MatMul)
def get_bprop_matmul(self):
    ta, tb = self.transpose_a, self.transpose_b
    # out = op(x) @ op(y); each case keeps the products in the layouts BLAS takes directly.
    if not ta and not tb:
        dx_op, dy_op = P.MatMul(transpose_b=True), P.MatMul(transpose_a=True)
        order = lambda x, y, d: (dx_op(d, y), dy_op(x, d))  # noqa: E731
    elif ta and not tb:
        dx_op, dy_op = P.MatMul(transpose_b=True), P.MatMul()
        order = lambda x, y, d: (dx_op(y, d), dy_op(x, d))  # noqa: E731
    elif not ta and tb:
        dx_op, dy_op = P.MatMul(), P.MatMul(transpose_a=True)
        order = lambda x, y, d: (dx_op(d, y), dy_op(d, x))  # noqa: E731
    else:
        dx_op, dy_op = P.MatMul(transpose_a=True, transpose_b=True), P.MatMul(transpose_a=True, transpose_b=True)
        order = lambda x, y, d: (dx_op(y, d), dy_op(d, x))  # noqa: E731

    def bprop(x, y, out, dout):
        return order(x, y, dout)

    return bprop


def _kept_shape(x_shape, axis) -> tuple:
    ndim = len(x_shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = {a % ndim for a in axes} if axes else set(range(ndim))
    return tuple(1 if i in axes else d for i, d in enumerate(x_shape))


def _broadcast_back(dout, x, axis):
    """dout of a reduction, broadcast back over the reduced axes of ``x``."""
    kept = F.reshape(dout, _kept_shape(x.shape, axis)) if x.ndim else dout
    return F.add(kept, zeros_like(x))


@bprop_getters.register(P.ReduceSum)
def get_bprop_reduce_sum(self):
    def bprop(x, axis, out, dout):
        return _broadcast_back(dout, x, axis), None

    return bprop


@bprop_getters.register(P.ReduceMean)
def get_bprop_reduce_mean(self):
    def bprop(x, axis, out, dout):
        count = math.prod(x.shape) // max(1, math.prod(out.shape))
        return F.div(_broadcast_back(dout, x, axis), float(max(count, 1))), None

    return bprop
