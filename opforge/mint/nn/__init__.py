"""MindSpore's ``mindspore.mint.nn``: cells with PyTorch's names and arguments over opforge's ``nn``, and
``functional`` (opforge/mint/nn/functional.py)."""

from __future__ import annotations

from opforge import nn as _nn
from opforge.mint.nn import functional
from opforge.mint.nn import functional as F

__all__ = [
    "functional", "Linear", "ReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Flatten",
    "Identity", "MSELoss", "L1Loss", "Dropout",
]  # fmt: skip

Identity = _nn.Identity


class Linear(_nn.Dense):
    """``Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None)``: y = x @ W.T
    + b, ``weight`` [out_features, in_features] (``nn.Dense``'s initialisation: HeUniform(sqrt(5)) weights, a
    uniform bias, as MindSpore's)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
        kwargs = {k: v for k, v in (("weight_init", weight_init), ("bias_init", bias_init)) if v is not None}
        super().__init__(in_features, out_features, has_bias=bias, **kwargs)
        if dtype is not None:
            self.to_float(dtype)
        self.in_features, self.out_features = in_features, out_features


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


class Softmax(_nn.Cell):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(_nn.Cell):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, input):
        return F.log_softmax(input, self.dim)


class Flatten(_nn.Cell):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)


class MSELoss(_nn.Cell):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def construct(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_nn.Cell):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def construct(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class Dropout(_nn.Cell):
    """Zeros each element with probability ``p`` while training (``set_train()``), scaling the rest."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def construct(self, input):
        return F.dropout(input, self.p, self.training)
