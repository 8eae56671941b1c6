"""MindSpore's ``mindspore.mint.nn``: cells with PyTorch's names and arguments over opforge's ``nn``, and
``functional`` (opforge/mint/nn/functional.py)."""

from __future__ import annotations

import math

from opforge import nn as _nn
from opforge.mint.nn import functional
from opforge.mint.nn import functional as F
from opforge.nn.init import HeUniform, Uniform

__all__ = [
    "functional", "Linear", "ReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Flatten",
    "Identity", "MSELoss", "L1Loss", "Dropout", "Conv2d", "MaxPool2d", "AvgPool2d", "BatchNorm2d",
]  # fmt: skip

Identity = _nn.Identity


def _default_inits(fan_in: int, weight_init, bias_init) -> tuple:
    """PyTorch's (and mint's) defaults: HeUniform(sqrt(5)) weights, a bias uniform in +-1/sqrt(fan_in)."""
    weight_init = HeUniform(math.sqrt(5)) if weight_init is None else weight_init
    return weight_init, Uniform(1 / math.sqrt(fan_in)) if bias_init is None else bias_init


class Linear(_nn.Dense):
    """``Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None)``: y = x @ W.T
    + b, ``weight`` [out_features, in_features], initialised as mint's (and PyTorch's): HeUniform(sqrt(5)) weights,
    a bias uniform in +-1/sqrt(in_features)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
        weight_init, bias_init = _default_inits(in_features, weight_init, bias_init)
        super().__init__(in_features, out_features, weight_init, bias_init, has_bias=bias)
        if dtype is not None:
            self.to_float(dtype)
        self.in_features, self.out_features = in_features, out_features


class Conv2d(_nn.Conv2d):
    """``Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode="zeros", dtype=None)``: ``padding`` an int, (pad_h, pad_w), "valid" or "same"; initialised as
    ``Linear`` (fan_in = in_channels / groups * kh * kw). ``padding_mode`` "zeros" only."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", dtype=None):  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f"For 'Conv2d', the 'padding_mode' {padding_mode!r} is not supported: only 'zeros'.")
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        weight_init, bias_init = _default_inits(in_channels // groups * kh * kw, None, None)
        pad_mode, pads = F.conv_padding(padding)
        super().__init__(in_channels, out_channels, (kh, kw), stride, pad_mode, pads, dilation, groups, bias,
                         weight_init, bias_init)  # fmt: skip
        if dtype is not None:
            self.to_float(dtype)


class MaxPool2d(_nn.Cell):
    """``MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)``
    (``mint.nn.functional.max_pool2d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.args = (kernel_size, stride, padding, dilation, ceil_mode, return_indices)

    def construct(self, input):
        return F.max_pool2d(input, *self.args)


class AvgPool2d(_nn.Cell):
    """``AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)`` (``mint.nn.functional.avg_pool2d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):  # fmt: skip
        super().__init__()
        self.args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def construct(self, input):
        return F.avg_pool2d(input, *self.args)


class BatchNorm2d(_nn.BatchNorm2d):
    """``BatchNorm2d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, dtype=None)``:
    PyTorch's momentum (the weight of the batch's statistics in the running ones: MindSpore's 1 - momentum);
    without running statistics it normalises by the batch's in evaluation too."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, dtype=None):
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"For 'BatchNorm2d', the 'momentum' must be a float in [0, 1], but got {momentum!r}.")
        super().__init__(num_features, eps, 1.0 - momentum, affine,
                         use_batch_statistics=None if track_running_stats else True)  # fmt: skip
        if dtype is not None:
            self.to_float(dtype)


class _Unary(_nn.Cell):
    _fn = None

    def construct(self, input):
        return type(self)._fn(input)


class ReLU(_Unary):
    _fn = staticmethod(F.relu)


class SiLU(_Unary):
    _fn = staticmethod(F.silu)


class Sigmoid(_Unary):
    _fn = staticmethod(F.sigmoid)


class Tanh(_Unary):
    _fn = staticmethod(F.tanh)


class GELU(_nn.Cell):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def construct(self, input):
        return F.gelu(input, self.approximate)


class _AlongDim(_nn.Cell):
    """A function of its input along ``dim`` (the last dim when None)."""

    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, input):
        return type(self)._fn(input, self.dim)


class Softmax(_AlongDim):
    _fn = staticmethod(F.softmax)


class LogSoftmax(_AlongDim):
    _fn = staticmethod(F.log_softmax)


class Flatten(_nn.Cell):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)


class _Loss(_nn.Cell):
    """A loss of (input, target) with ``reduction`` "mean", "sum" or "none"."""

    _fn = None

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def construct(self, input, target):
        return type(self)._fn(input, target, self.reduction)


class MSELoss(_Loss):
    _fn = staticmethod(F.mse_loss)


class L1Loss(_Loss):
    _fn = staticmethod(F.l1_loss)


class Dropout(_nn.Cell):
    """Zeros each element with probability ``p`` while training (``set_train()``), scaling the rest."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def construct(self, input):
        return F.dropout(input, self.p, self.training)
