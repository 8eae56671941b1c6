"""MindSpore's combined cells ``nn.Conv2dBnAct`` and ``nn.DenseBnAct``: a Conv2d or a Dense, optionally followed
by a batch normalisation and an activation, with MindSpore's attribute names (``conv`` / ``dense``,
``batchnorm``, ``activation``), so their checkpoints' parameter names match."""

from __future__ import annotations

from opforge.nn import activation as _activation_cells  # noqa: F401 (registers its names with get_activation)
from opforge.nn.cell import Cell
from opforge.nn.layers import Dense, LeakyReLU, get_activation
from opforge.nn.layers_conv import Conv2d
from opforge.nn.normalization import BatchNorm1d, BatchNorm2d
from opforge.primitives.primitive import Primitive

__all__ = ["Conv2dBnAct", "DenseBnAct"]


def _check_bool(cls: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _activation(cls: str, activation, alpha):
    """The activation cell: LeakyReLU(alpha) for "leakyrelu", ``get_activation`` for another name, a Cell or
    Primitive as given, None for none."""
    if activation is None:
        return None
    if activation == "leakyrelu":
        return LeakyReLU(alpha)
    act = get_activation(activation) if isinstance(activation, str) else activation
    if not isinstance(act, (Cell, Primitive)):
        raise TypeError(
            f"For '{cls}', the 'activation' must be str or Cell or Primitive, but got {type(activation).__name__}."
        )
    return act


class Conv2dBnAct(Cell):
    """``Conv2dBnAct(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
    group=1, has_bias=False, weight_init='normal', bias_init='zeros', has_bn=False, momentum=0.997, eps=1e-5,
    activation=None, alpha=0.2, after_fake=True)``: ``nn.Conv2d`` with these arguments, then (``has_bn``)
    ``nn.BatchNorm2d(out_channels, eps, momentum)``, then the ``activation`` (a name of ``get_activation``,
    "leakyrelu" with slope ``alpha``, or a Cell or Primitive). ``after_fake`` is MindSpore's quantisation
    flag, checked and kept."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        pad_mode="same",
        padding=0,
        dilation=1,
        group=1,
        has_bias=False,
        weight_init="normal",
        bias_init="zeros",
        has_bn=False,
        momentum=0.997,
        eps=1e-5,
        activation=None,
        alpha=0.2,
        after_fake=True,
    ):
        super().__init__()
        self.conv = Conv2d(
            in_channels, out_channels, kernel_size=kernel_size, stride=stride, pad_mode=pad_mode, padding=padding,
            dilation=dilation, group=group, has_bias=has_bias, weight_init=weight_init, bias_init=bias_init,
        )  # fmt: skip
        self.has_bn = _check_bool("Conv2dBnAct", "has_bn", has_bn)
        self.after_fake = _check_bool("Conv2dBnAct", "after_fake", after_fake)
        if has_bn:
            self.batchnorm = BatchNorm2d(out_channels, eps, momentum)
        self.activation = _activation("Conv2dBnAct", activation, alpha)
        self.has_act = self.activation is not None

    def construct(self, x):
        x = self.conv(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


class DenseBnAct(Cell):
    """``DenseBnAct(in_channels, out_channels, weight_init='normal', bias_init='zeros', has_bias=True,
    has_bn=False, momentum=0.9, eps=1e-5, activation=None, alpha=0.2, after_fake=True)``: ``nn.Dense``, then
    (``has_bn``) ``nn.BatchNorm1d(out_channels, eps, momentum)``, then the ``activation`` (as Conv2dBnAct's).
    Input [N, in_channels]."""

    def __init__(
        self,
        in_channels,
        out_channels,
        weight_init="normal",
        bias_init="zeros",
        has_bias=True,
        has_bn=False,
        momentum=0.9,
        eps=1e-5,
        activation=None,
        alpha=0.2,
        after_fake=True,
    ):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init, bias_init, has_bias)
        self.has_bn = _check_bool("DenseBnAct", "has_bn", has_bn)
        self.after_fake = _check_bool("DenseBnAct", "after_fake", after_fake)
        if has_bn:
            self.batchnorm = BatchNorm1d(out_channels, eps, momentum)
        self.activation = _activation("DenseBnAct", activation, alpha)
        self.has_act = self.activation is not None

    def construct(self, x):
        x = self.dense(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x
