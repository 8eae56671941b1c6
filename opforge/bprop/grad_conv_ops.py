"""bprops of convolution and pooling (primitives/conv_ops.py), as MindSpore writes them.

Conv2D's gradients are Conv2DBackpropInput and Conv2DBackpropFilter; those two are bilinear, so their
own bprops are Conv2D and the other gradient (second order). MaxPool -> MaxPoolGrad, AvgPool ->
AvgPoolGrad; AvgPoolGrad is linear in its ``grad`` input, whose gradient is AvgPool again; MaxPoolGrad is
linear in its ``grad`` input too, whose gradient is the gather at the maxima MaxPoolGradGrad, whose own
gradient is MaxPoolGrad. The positions of the maxima have zero gradient. AdaptiveAvgPool2D ->
AdaptiveAvgPool2DGrad, linear in its input, whose gradient is AdaptiveAvgPool2D to its input's size."""

from __future__ import annotations

from opforge.bprop._utils import needs_input_grad, zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.primitives import conv_ops as P


def _conv_attrs(prim) -> dict:
    return dict(
        out_channel=prim.out_channel,
        kernel_size=prim.kernel_size,
        pad_mode=prim.pad_mode,
        pad=prim.padding,
        mode=prim.mode,
        stride=prim.stride,
        dilation=prim.dilation,
        group=prim.group,
        data_format=prim.format,
    )


def _conv_ops(prim):
    attrs = _conv_attrs(prim)
    return P.Conv2D(**attrs), P.Conv2DBackpropInput(**attrs), P.Conv2DBackpropFilter(**attrs)


@bprop_getters.register(P.Conv2D)
def get_bprop_conv2d(self):
    _, input_grad, filter_grad = _conv_ops(self)

    def bprop(x, w, out, dout):
        dx = input_grad(dout, w, tuple(x.shape)) if needs_input_grad(0) else None
        dw = filter_grad(dout, x, tuple(w.shape)) if needs_input_grad(1) else None
        return dx, dw

    return bprop


@bprop_getters.register(P.Conv2DBackpropInput)
def get_bprop_conv2d_backprop_input(self):
    conv, _, filter_grad = _conv_ops(self)

    def bprop(dy, w, input_sizes, out, dout):
        # out = the adjoint of conv(., w) applied to dy: linear in dy and in w.
        d_dy = conv(dout, w) if needs_input_grad(0) else None
        d_w = filter_grad(dy, dout, tuple(w.shape)) if needs_input_grad(1) else None
        return d_dy, d_w, None

    return bprop


@bprop_getters.register(P.Conv2DBackpropFilter)
def get_bprop_conv2d_backprop_filter(self):
    conv, input_grad, _ = _conv_ops(self)

    def bprop(dy, x, filter_sizes, out, dout):
        d_dy = conv(x, dout) if needs_input_grad(0) else None
        d_x = input_grad(dy, dout, tuple(x.shape)) if needs_input_grad(1) else None
        return d_dy, d_x, None

    return bprop


def _pool_attrs(prim) -> dict:
    return dict(kernel_size=prim.kernel_size, strides=prim.strides, pad_mode=prim.pad_mode, data_format=prim.format)


@bprop_getters.register(P.MaxPool)
def get_bprop_max_pool(self):
    grad = P.MaxPoolGrad(**_pool_attrs(self))

    def bprop(x, out, dout):
        return (grad(x, out, dout),)

    return bprop


@bprop_getters.register(P.AvgPool)
def get_bprop_avg_pool(self):
    grad = P.AvgPoolGrad(**_pool_attrs(self))

    def bprop(x, out, dout):
        return (grad(x, out, dout),)

    return bprop


@bprop_getters.register(P.AvgPoolGrad)
def get_bprop_avg_pool_grad(self):
    pool = P.AvgPool(**_pool_attrs(self))

    def bprop(x, out_origin, grad, out, dout):
        d_x = zeros_like(x) if needs_input_grad(0) else None
        d_out = zeros_like(out_origin) if needs_input_grad(1) else None
        return d_x, d_out, pool(dout)

    return bprop


@bprop_getters.register(P.MaxPoolGrad)
def get_bprop_max_pool_grad(self):
    grad_grad = P.MaxPoolGradGrad(**_pool_attrs(self))

    def bprop(x, out_origin, grad, out, dout):
        d_x = zeros_like(x) if needs_input_grad(0) else None
        d_out = zeros_like(out_origin) if needs_input_grad(1) else None
        return d_x, d_out, grad_grad(x, out_origin, dout)

    return bprop


@bprop_getters.register(P.MaxPoolGradGrad)
def get_bprop_max_pool_grad_grad(self):
    pool_grad = P.MaxPoolGrad(**_pool_attrs(self))

    def bprop(x, out_origin, grad, out, dout):
        d_x = zeros_like(x) if needs_input_grad(0) else None
        d_out = zeros_like(out_origin) if needs_input_grad(1) else None
        return d_x, d_out, pool_grad(x, out_origin, dout)

    return bprop


@bprop_getters.register(P.AdaptiveAvgPool2D)
def get_bprop_adaptive_avg_pool2d(self):
    grad = P.AdaptiveAvgPool2DGrad()

    def bprop(x, out, dout):
        return (grad(dout, tuple(x.shape)),)

    return bprop


@bprop_getters.register(P.AdaptiveAvgPool2DGrad)
def get_bprop_adaptive_avg_pool2d_grad(self):
    def bprop(dy, orig_input_shape, out, dout):
        # Linear in dy: its adjoint is the pooling back to dy's size.
        return P.AdaptiveAvgPool2D(tuple(dy.shape[-2:]))(dout), None

    return bprop
