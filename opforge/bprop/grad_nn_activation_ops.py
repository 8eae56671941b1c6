"""bprops of SeLU, CeLU, Softsign, HShrink, SoftShrink and Mish, each composed of differentiable
primitives (so higher-order gradients follow from theirs):

- SeLU = scale * Elu(alpha): dx = scale * EluGrad(alpha)(dy, Elu(alpha)(x)).
- CeLU: dx = dy * exp(min(x, 0) / alpha) (1 for x > 0, exp(x / alpha) below).
- Softsign: dx = dy / (1 + |x|)^2.
- HShrink, SoftShrink: dx = dy where |x| > lambd, else 0 (MindSpore's: the kinks take no gradient).
- Mish: dx = dy * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)), sp = softplus(x).
"""

from __future__ import annotations

from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import _grad_ops as G
from opforge.primitives import nn_ops as N

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@bprop_getters.register(N.SeLU)
def get_bprop_selu(self):
    elu = N.Elu(alpha=SELU_ALPHA)
    elu_grad = G.EluGrad(alpha=SELU_ALPHA)

    def bprop(x, out, dout):
        return (F.mul(elu_grad(dout, elu(x)), SELU_SCALE),)

    return bprop


@bprop_getters.register(N.CeLU)
def get_bprop_celu(self):
    alpha = self.alpha

    def bprop(x, out, dout):
        return (F.mul(dout, F.exp(F.div(F.minimum(x, 0.0), alpha))),)

    return bprop


@bprop_getters.register(N.Softsign)
def get_bprop_softsign(self):
    def bprop(x, out, dout):
        a = F.add(F.abs(x), 1.0)
        return (F.div(dout, F.mul(a, a)),)

    return bprop


def _get_bprop_shrink(self):
    lambd = self.lambd

    def bprop(x, out, dout):
        outside = F.greater(F.abs(x), lambd)
        return (F.select(outside, dout, F.zeros_like(dout)),)

    return bprop


bprop_getters.register(N.HShrink)(_get_bprop_shrink)
bprop_getters.register(N.SoftShrink)(_get_bprop_shrink)


@bprop_getters.register(N.Mish)
def get_bprop_mish(self):
    softplus = N.Softplus()

    def bprop(x, out, dout):
        t = F.tanh(softplus(x))
        slope = F.add(t, F.mul(F.mul(x, F.sigmoid(x)), F.sub(1.0, F.mul(t, t))))
        return (F.mul(dout, slope),)

    return bprop
