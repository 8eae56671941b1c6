"""Convolution and pooling layers (MindSpore's ``nn.Conv2d``, ``nn.MaxPool2d``, ``nn.AvgPool2d``), NCHW,
built from the Conv2D, BiasAdd, MaxPool and AvgPool primitives."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.tensor import Parameter

__all__ = ["Conv2d", "MaxPool2d", "AvgPool2d"]


def _positive_pair(cell, name, value) -> tuple:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value), int(value))
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0 for v in value)
    ):
        raise ValueError(
            f"For '{cell}', the '{name}' must be a positive int or a tuple of 2 positive ints, but got {value!r}."
        )
    return tuple(int(v) for v in value)


class Conv2d(Cell):
    r"""2-D convolution layer (MindSpore's ``nn.Conv2d``): :math:`y = \mathrm{Conv2D}(x, W) + b`.

    ``x`` is [N, in_channels, H, W]; ``weight`` [out_channels, in_channels / group, kh, kw]; ``bias``
    [out_channels] when ``has_bias``. ``pad_mode`` "same" (default), "valid" or "pad" (with
    ``padding``: an int or (top, bottom, left, right)); ``stride`` and ``dilation`` an int or a pair.
    ``weight_init`` / ``bias_init`` take anything ``nn.init.initializer`` takes.
    """

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
        data_format="NCHW",
        dtype=mstype.float32,
    ):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("out_channels", out_channels), ("group", group)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"For 'Conv2d', the '{name}' must be a positive int, but got {value!r}.")
        if in_channels % group or out_channels % group:
            raise ValueError(
                f"For 'Conv2d', the 'in_channels' ({in_channels}) and 'out_channels' ({out_channels}) must be "
                f"divisible by 'group' ({group})."
            )
        if not isinstance(has_bias, bool):
            raise TypeError(f"For 'Conv2d', the 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.in_channels, self.out_channels, self.group = int(in_channels), int(out_channels), int(group)
        self.kernel_size = _positive_pair("Conv2d", "kernel_size", kernel_size)
        self.stride = _positive_pair("Conv2d", "stride", stride)
        self.dilation = _positive_pair("Conv2d", "dilation", dilation)
        self.pad_mode, self.padding, self.has_bias, self.data_format = pad_mode, padding, has_bias, data_format
        self.conv2d = ops.Conv2D(
            out_channel=self.out_channels,
            kernel_size=self.kernel_size,
            mode=1,
            pad_mode=pad_mode,
            pad=padding,
            stride=self.stride,
            dilation=self.dilation,
            group=self.group,
            data_format=data_format,
        )
        shape = (self.out_channels, self.in_channels // self.group, *self.kernel_size)
        self.weight = Parameter(_init.initializer(weight_init, shape, dtype), "weight")
        self.bias = Parameter(_init.initializer(bias_init, (self.out_channels,), dtype), "bias") if has_bias else None
        self.bias_add = ops.BiasAdd()

    def construct(self, x):
        params = self._params
        out = self.conv2d(x, params["weight"])
        if self.has_bias:
            out = self.bias_add(out, params["bias"])
        return out

    def extend_repr(self) -> str:
        return (
            f"input_channels={self.in_channels}, output_channels={self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
            f"group={self.group}, has_bias={self.has_bias}"
        )


class _Pool2d(Cell):
    _prim = None

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _positive_pair(name, "kernel_size", kernel_size)
        self.stride = _positive_pair(name, "stride", stride)
        self.pad_mode = pad_mode
        self.pool = getattr(ops, self._prim)(
            kernel_size=self.kernel_size, strides=self.stride, pad_mode=pad_mode, data_format=data_format
        )

    def construct(self, x):
        return self.pool(x)

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool2d(_Pool2d):
    """2-D max pooling (MindSpore's ``nn.MaxPool2d``): the MaxPool primitive, NCHW."""

    _prim = "MaxPool"


class AvgPool2d(_Pool2d):
    """2-D average pooling (MindSpore's ``nn.AvgPool2d``): the AvgPool primitive, NCHW."""

    _prim = "AvgPool"
