"""bprops of the array operators (primitives/array_ops.py)."""

from __future__ import annotations

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
