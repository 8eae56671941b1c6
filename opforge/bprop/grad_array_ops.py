"""bprops of the array operators (primitives/array_ops.py)."""

from __future__ import annotations

from opforge.bprop._utils import sum_to_shape, zero_grads
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import array_ops as P


@bprop_getters.register(P.Cast)
def get_bprop_cast(self):
    def bprop(x, dtype, out, dout):
        return F.cast(dout, x.dtype), None

    return bprop


@bprop_getters.register(P.Reshape)
def get_bprop_reshape(self):
    def bprop(x, shape, out, dout):
        return F.reshape(dout, x.shape), None

    return bprop


@bprop_getters.register(P.ExpandDims)
def get_bprop_expand_dims(self):
    def bprop(x, axis, out, dout):
        return F.reshape(dout, x.shape), None

    return bprop


@bprop_getters.register(P.Squeeze)
def get_bprop_squeeze(self):
    def bprop(x, out, dout):
        return (F.reshape(dout, x.shape),)

    return bprop


@bprop_getters.register(P.Transpose)
def get_bprop_transpose(self):
    transpose = P.Transpose()

    def bprop(x, perm, out, dout):
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p % len(perm)] = i
        return transpose(dout, tuple(inverse)), None

    return bprop


@bprop_getters.register(P.BroadcastTo)
def get_bprop_broadcast_to(self):
    def bprop(x, out, dout):
        return (sum_to_shape(dout, x.shape),)

    return bprop


def _zero_bprop(self):
    """Operators whose gradient is zero by definition (comparisons, indices, constants): zeros for
    every tensor input, None for the constant ones, so they can sit inside differentiated code."""

    def bprop(*args):
        return zero_grads(*args[:-2])

    return bprop


for _op in (P.ZerosLike, P.OnesLike, P.Fill, P.OneHot, P.ArgMax, P.Argmin):
    bprop_getters.register(_op)(_zero_bprop)
