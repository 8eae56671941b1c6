"""bprops of the neural-network operators (primitives/nn_ops.py) and their grad operators."""

from __future__ import annotations

from opforge.bprop._utils import zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import _grad_ops as G
from opforge.primitives import nn_ops as P


@bprop_getters.register(P.ReLU)
def get_bprop_relu(self):
    relu_grad = G.ReluGrad()

    def bprop(x, out, dout):
        return (relu_grad(dout, out),)

    return bprop


@bprop_getters.register(P.Elu)
def get_bprop_elu(self):
    elu_grad = G.EluGrad(alpha=self.alpha)

    def bprop(x, out, dout):
        return (elu_grad(dout, out),)

    return bprop


@bprop_getters.register(P.Sigmoid)
def get_bprop_sigmoid(self):
    sigmoid_grad = G.SigmoidGrad()

    def bprop(x, out, dout):
        return (sigmoid_grad(out, dout),)

    return bprop


@bprop_getters.register(P.Tanh)
def get_bprop_tanh(self):
    tanh_grad = G.TanhGrad()

    def bprop(x, out, dout):
        return (tanh_grad(out, dout),)

    return bprop


@bprop_getters.register(P.BiasAdd)
def get_bprop_bias_add(self):
    channel_last = self.data_format == "NHWC"

    def bprop(x, bias, out, dout):
        channel = x.ndim - 1 if channel_last else 1
        axes = tuple(i for i in range(x.ndim) if i != channel)
        return dout, F.reduce_sum(False)(dout, axes)

    return bprop


# Second order: the grad operators' own bprops.


@bprop_getters.register(G.ReluGrad)
def get_bprop_relu_grad(self):
    relu_grad = G.ReluGrad()

    def bprop(dy, y, out, dout):
        return relu_grad(dout, y), zeros_like(y)

    return bprop


@bprop_getters.register(G.EluGrad)
def get_bprop_elu_grad(self):
    elu_grad = G.EluGrad(alpha=self.alpha)
    relu_grad = G.ReluGrad()

    def bprop(dy, y, out, dout):
        # d/dy of dy * (y + alpha) on y <= 0 is dy; ReluGrad(., -y) keeps exactly that region.
        return elu_grad(dout, y), relu_grad(dout * dy, -y)

    return bprop


@bprop_getters.register(G.SigmoidGrad)
def get_bprop_sigmoid_grad(self):
    sigmoid_grad = G.SigmoidGrad()

    def bprop(y, dy, out, dout):
        # out = dy * y * (1 - y): d/dy = dy * (1 - 2y), d/d(dy) = y * (1 - y).
        return dout * dy * (1.0 - 2.0 * y), sigmoid_grad(y, dout)

    return bprop


@bprop_getters.register(G.TanhGrad)
def get_bprop_tanh_grad(self):
    tanh_grad = G.TanhGrad()

    def bprop(y, dy, out, dout):
        # out = dy * (1 - y^2): d/dy = -2 * y * dy, d/d(dy) = 1 - y^2.
        return dout * dy * y * -2.0, tanh_grad(y, dout)

    return bprop
