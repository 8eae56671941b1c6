"""Convolution and pooling layers (MindSpore's ``nn.Conv2d``, ``nn.MaxPool2d``, ``nn.AvgPool2d``,
``nn.AdaptiveAvgPool2d``), NCHW, built from the Conv2D, BiasAdd, MaxPool, AvgPool and AdaptiveAvgPool2D
primitives; ``nn.Conv1d``, ``nn.MaxPool1d`` and ``nn.AvgPool1d`` as MindSpore builds them, the 2-D ones over
an inserted H dim of 1 (ExpandDims, then Squeeze); ``nn.Conv3d`` (NCDHW) on ``ops.Conv3D`` and ``nn.Unfold``
(image patches), both composed of other primitives (opforge/ops/frontend_conv.py)."""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.geometry import conv_output_and_pads
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.ops import frontend_conv
from opforge.primitives._utils import require_known
from opforge.tensor import Parameter, Tensor

__all__ = [
    "Conv2d",
    "Conv2dTranspose",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "Conv1d",
    "MaxPool1d",
    "AvgPool1d",
    "Conv3d",
    "Unfold",
]


def _positive_tuple(cell, name, value, n: int = 2) -> tuple:
    """A positive int (for each of the ``n`` spatial dims) or a tuple of ``n`` positive ints."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),) * n
    if (
        not isinstance(value, tuple)
        or len(value) != n
        or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0 for v in value)
    ):
        raise ValueError(
            f"For '{cell}', the '{name}' must be a positive int or a tuple of {n} positive ints, but got {value!r}."
        )
    return tuple(int(v) for v in value)


class Conv2d(Cell):
    r"""2-D convolution layer (MindSpore's ``nn.Conv2d``): :math:`y = \mathrm{Conv2D}(x, W) + b`.

    ``x`` is [N, in_channels, H, W]; ``weight`` [out_channels, in_channels / group, kh, kw]; ``bias``
    [out_channels] when ``has_bias``. ``pad_mode`` "same" (default), "valid" or "pad" (with
    ``padding``: an int or (top, bottom, left, right)); ``stride`` and ``dilation`` an int or a pair.
    ``weight_init`` / ``bias_init`` take anything ``nn.init.initializer`` takes, or None: MindSpore 2.x's
    defaults, ``HeUniform(negative_slope=sqrt(5))`` and ``Uniform(1 / sqrt(fan_in))``.
    """

    _spatial = 2  # the spatial dims of kernel_size, stride and dilation

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
        cls = type(self).__name__
        for name, value in (("in_channels", in_channels), ("out_channels", out_channels), ("group", group)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"For '{cls}', the '{name}' must be a positive int, but got {value!r}.")
        if in_channels % group or out_channels % group:
            raise ValueError(
                f"For '{cls}', the 'in_channels' ({in_channels}) and 'out_channels' ({out_channels}) must be "
                f"divisible by 'group' ({group})."
            )
        if not isinstance(has_bias, bool):
            raise TypeError(f"For '{cls}', the 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.in_channels, self.out_channels, self.group = int(in_channels), int(out_channels), int(group)
        self.kernel_size = _positive_tuple(cls, "kernel_size", kernel_size, self._spatial)
        self.stride = _positive_tuple(cls, "stride", stride, self._spatial)
        self.dilation = _positive_tuple(cls, "dilation", dilation, self._spatial)
        self.pad_mode, self.padding, self.has_bias, self.data_format = pad_mode, padding, has_bias, data_format
        self.conv2d = self._convolution()
        shape = self._weight_shape()
        if weight_init is None:  # MindSpore 2.x's default
            weight_init = _init.HeUniform(negative_slope=math.sqrt(5))
        if bias_init is None:
            fan_in = math.prod(shape[1:])
            bias_init = _init.Uniform(1 / math.sqrt(fan_in)) if fan_in else "zeros"
        self.weight = Parameter(_init.initializer(weight_init, shape, dtype), "weight")
        self.bias = Parameter(_init.initializer(bias_init, (self.out_channels,), dtype), "bias") if has_bias else None
        self.bias_add = ops.BiasAdd()

    def _convolution(self):
        return ops.Conv2D(
            out_channel=self.out_channels,
            kernel_size=self.kernel_size,
            mode=1,
            pad_mode=self.pad_mode,
            pad=self.padding,
            stride=self.stride,
            dilation=self.dilation,
            group=self.group,
            data_format=self.data_format,
        )

    def _weight_shape(self) -> tuple:
        return (self.out_channels, self.in_channels // self.group, *self.kernel_size)

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


class Conv2dTranspose(Conv2d):
    r"""2-D transposed convolution (MindSpore's ``nn.Conv2dTranspose``): the gradient of a Conv2D with
    respect to its input (``Conv2DBackpropInput``, MindSpore's ``Conv2DTranspose``), plus ``bias``.

    ``x`` is [N, in_channels, H, W]; ``weight`` [in_channels, out_channels / group, kh, kw] (the weight of
    the Conv2D it reverses). The output's height is ``H * stride`` ("same"), ``(H - 1) * stride +
    dilation * (kh - 1) + 1`` ("valid"), or that less the top and bottom ``padding`` plus
    ``output_padding`` ("pad"); the width likewise.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        pad_mode="same",
        padding=0,
        output_padding=0,
        dilation=1,
        group=1,
        has_bias=False,
        weight_init="normal",
        bias_init="zeros",
        dtype=mstype.float32,
    ):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                         weight_init, bias_init, dtype=dtype)  # fmt: skip
        cls = type(self).__name__
        if isinstance(output_padding, bool) or not isinstance(output_padding, int) or output_padding < 0:
            raise ValueError(
                f"For '{cls}', the 'output_padding' must be a non-negative int, but got {output_padding!r}."
            )
        if output_padding and (pad_mode != "pad" or output_padding >= min(self.stride)):
            raise ValueError(
                f"For '{cls}', the 'output_padding' must be below the stride {self.stride}, with pad_mode 'pad', but "
                f"got {output_padding} with pad_mode {pad_mode!r}."
            )
        self.output_padding = output_padding
        self.pads = (padding,) * 4 if isinstance(padding, int) else tuple(padding)

    def _convolution(self):  # (self.conv2d: the Conv2DTranspose)
        return ops.Conv2DTranspose(
            out_channel=self.in_channels,
            kernel_size=self.kernel_size,
            pad_mode=self.pad_mode,
            pad=self.padding,
            stride=self.stride,
            dilation=self.dilation,
            group=self.group,
        )

    def _weight_shape(self) -> tuple:
        # The Conv2D it reverses maps out_channels to in_channels: its weight is this one's.
        return (self.in_channels, self.out_channels // self.group, *self.kernel_size)

    def _out_size(self, size: int, axis: int) -> int:
        stride, dilation, k = self.stride[axis], self.dilation[axis], self.kernel_size[axis]
        if self.pad_mode == "same":
            return size * stride
        full = (size - 1) * stride + dilation * (k - 1) + 1
        if self.pad_mode == "valid":
            return full
        return full - self.pads[2 * axis] - self.pads[2 * axis + 1] + self.output_padding

    def construct(self, x):
        if x.ndim != 4:
            raise ValueError(
                f"For 'Conv2dTranspose', the input must be 4-D (N, C, H, W), but got shape {list(x.shape)}."
            )
        n, _, h, w = x.shape
        params = self._params
        size = (n, self.out_channels, self._out_size(h, 0), self._out_size(w, 1))
        out = self.conv2d(x, params["weight"], size)
        if self.has_bias:
            out = self.bias_add(out, params["bias"])
        return out


class _Pool2d(Cell):
    _prim = None

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _positive_tuple(name, "kernel_size", kernel_size)
        self.stride = _positive_tuple(name, "stride", stride)
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


class AdaptiveAvgPool2d(Cell):
    """2-D adaptive average pooling (MindSpore's ``nn.AdaptiveAvgPool2d``) of [N, C, H, W] or [C, H, W] to
    ``output_size`` (an int, or a pair of ints or None: None keeps that dim): the AdaptiveAvgPool2D primitive,
    whose docstring gives the windows."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size
        self.adaptive_avgpool2d = ops.AdaptiveAvgPool2D(output_size)

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        return self.adaptive_avgpool2d(input)

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"


def _positive_int(cell, name, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{cell}', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"For '{cell}', the '{name}' must be at least 1, but got {value}.")
    return int(value)


def _check_ncl(cell, x) -> None:
    if x.ndim != 3:
        raise ValueError(f"For '{cell}', the input must be 3-D (N, C, L), but got shape {list(x.shape)}.")


class Conv1d(Conv2d):
    r"""1-D convolution layer (MindSpore's ``nn.Conv1d``) of ``x`` [N, in_channels, L]:
    :math:`out_j = \sum_i \mathrm{ccor}(W_{ij}, x_i) + b_j`, computed as MindSpore does: Conv2D over x
    expanded to [N, C, 1, L] with a (1, kernel_size) window, then the H dim squeezed out.

    ``kernel_size``, ``stride`` and ``dilation`` are ints; ``padding`` a non-negative int (left and right) or a
    pair (left, right), used with ``pad_mode`` "pad" ("same" by default, or "valid"). The ``weight`` Parameter
    has MindSpore's shape [out_channels, in_channels / group, 1, kernel_size] (a 3-D Tensor ``weight_init``
    gets the 1 inserted), ``bias`` [out_channels] when ``has_bias``. dtypes: Conv2D's.
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
        dtype=mstype.float32,
    ):
        kernel_size = _positive_int("Conv1d", "kernel_size", kernel_size)
        stride = _positive_int("Conv1d", "stride", stride)
        dilation = _positive_int("Conv1d", "dilation", dilation)
        if isinstance(padding, tuple) and len(padding) == 2:
            left, right = padding
        else:
            left = right = padding
        for p in (left, right):
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 0:
                raise ValueError(
                    f"For 'Conv1d', the 'padding' must be a non-negative int or a pair of them, but got {padding!r}."
                )
        if isinstance(weight_init, (Tensor, np.ndarray)):
            array = np.asarray(weight_init.asnumpy() if isinstance(weight_init, Tensor) else weight_init)
            if array.ndim != 3:
                raise ValueError(
                    f"For 'Conv1d', a Tensor 'weight_init' must be 3-D [out, in / group, k], "
                    f"but got shape {list(array.shape)}."
                )
            weight_init = np.expand_dims(array, 2)
        super().__init__(
            in_channels,
            out_channels,
            (1, kernel_size),
            (1, stride),
            pad_mode,
            (0, 0, int(left), int(right)),
            (1, dilation),
            group,
            has_bias,
            weight_init,
            bias_init,
            "NCHW",
            dtype,
        )
        self.expand_dims = ops.ExpandDims()
        self.squeeze = ops.Squeeze(2)

    def construct(self, x):
        _check_ncl("Conv1d", x)
        return self.squeeze(super().construct(self.expand_dims(x, 2)))


class _Pool1d(Cell):
    _prim = None

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid"):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _positive_int(name, "kernel_size", kernel_size)
        self.stride = _positive_int(name, "stride", stride)
        self.pad_mode = pad_mode
        self.pool = getattr(ops, self._prim)(
            kernel_size=(1, self.kernel_size), strides=(1, self.stride), pad_mode=pad_mode
        )
        self.expand_dims = ops.ExpandDims()
        self.squeeze = ops.Squeeze(2)
        self.squeeze_batch = ops.Squeeze(0)

    def construct(self, x):
        if x.ndim not in (2, 3):
            raise ValueError(
                f"For '{type(self).__name__}', the input must be 3-D (N, C, L) or 2-D (C, L), "
                f"but got shape {list(x.shape)}."
            )
        if x.ndim == 2:  # an unbatched (C, L)
            return self.squeeze_batch(self._pool3d(self.expand_dims(x, 0)))
        return self._pool3d(x)

    def _pool3d(self, x):
        return self.squeeze(self.pool(self.expand_dims(x, 2)))

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool1d(_Pool1d):
    """1-D max pooling (MindSpore's ``nn.MaxPool1d``) of [N, C, L] (or [C, L]): each output is the maximum of its
    ``kernel_size`` window, windows ``stride`` apart; ``pad_mode`` "valid" or "same" (padded with -inf). The
    MaxPool primitive over an inserted H dim of 1, as MindSpore builds it. dtypes: MaxPool's."""

    _prim = "MaxPool"


class AvgPool1d(_Pool1d):
    """1-D average pooling (MindSpore's ``nn.AvgPool1d``) of [N, C, L] (or [C, L]): each output is the mean of
    the elements of its ``kernel_size`` window inside the input, windows ``stride`` apart; ``pad_mode``
    "valid" or "same". The AvgPool primitive over an inserted H dim of 1. dtypes: AvgPool's."""

    _prim = "AvgPool"


class Conv3d(Conv2d):
    r"""3-D convolution layer (MindSpore's ``nn.Conv3d``) of ``x`` [N, in_channels, D, H, W] (NCDHW):
    :math:`y = \mathrm{Conv3D}(x, W) + b`.

    ``weight`` is [out_channels, in_channels / group, kd, kh, kw], ``bias`` [out_channels] when ``has_bias``;
    ``kernel_size``, ``stride`` and ``dilation`` an int or a triple (d, h, w); ``pad_mode`` "same" (default),
    "valid" or "pad" with ``padding`` an int, a triple (both sides of D, H and W) or (head, tail, top, bottom,
    left, right). ``weight_init`` / ``bias_init`` as Conv2d's (None: MindSpore 2.x's HeUniform and Uniform).
    ``ops.Conv3D`` has no kernel of its own: it runs as one Conv2D call per depth tap
    (opforge/ops/frontend_conv.py), with MindSpore's dtypes float16 and float32.
    """

    _spatial = 3

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
        weight_init=None,
        bias_init=None,
        data_format="NCDHW",
        dtype=mstype.float32,
    ):
        if isinstance(padding, tuple) and len(padding) == 3:  # (d, h, w): both sides of each
            padding = tuple(p for p in padding for _ in range(2))
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                         weight_init, bias_init, data_format, dtype)  # fmt: skip

    def _convolution(self):  # (self.conv2d: the Conv3D)
        return frontend_conv.Conv3D(
            out_channel=self.out_channels,
            kernel_size=self.kernel_size,
            mode=1,
            pad_mode=self.pad_mode,
            pad=self.padding,
            stride=self.stride,
            dilation=self.dilation,
            group=self.group,
            data_format=self.data_format,
        )


def _unfold_arg(name: str, value) -> tuple:
    """``[1, row, col, 1]`` (a tuple or a list) as ``(row, col)``."""
    what = name[:-1]  # ksize, stride, rate
    form = f"[1, {what}_row, {what}_col, 1]"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"For 'Unfold', the '{name}' must be a tuple or a list {form}, but got {type(value).__name__}.")
    if len(value) != 4 or value[0] != 1 or value[3] != 1:
        raise ValueError(f"For 'Unfold', the '{name}' must have the form {form}, but got {value!r}.")
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in value[1:3]):
        raise ValueError(
            f"For 'Unfold', the {what}_row and {what}_col of '{name}' must be positive ints, but got {value!r}."
        )
    return int(value[1]), int(value[2])


class Unfold(Cell):
    r"""Image patches (MindSpore's ``nn.Unfold``, TensorFlow's ``extract_image_patches``): the windows of ``x``
    [N, C, H, W] of ``ksizes`` [1, kh, kw, 1] with ``strides`` [1, sh, sw, 1] and ``rates`` (dilations)
    [1, rh, rw, 1] as the channels of [N, kh * kw * C, Hout, Wout]. Channel ``(i * kw + j) * C + c`` is channel
    c at window tap (i, j): output (r, s) of it is ``x_padded[n, c, r * sh + i * rh, s * sw + j * rw]``.

    ``padding`` "valid" (default; ``Hout = (H - rh * (kh - 1) - 1) // sh + 1``) or "same" (``Hout = ceil(H /
    sh)``, zero-padded by ``max(0, (Hout - 1) * sh + rh * (kh - 1) + 1 - H)``, the odd one after), either
    case; W likewise. One StridedSlice per window tap, then Concat (``frontend_conv.window_taps``). dtypes:
    any (bool, ints, floats, complex), on the CPU and the GPU.
    """

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        self.ksizes = _unfold_arg("ksizes", ksizes)
        self.strides = _unfold_arg("strides", strides)
        self.rates = _unfold_arg("rates", rates)
        if not isinstance(padding, str):
            raise TypeError(f"For 'Unfold', the 'padding' must be str, but got {type(padding).__name__}.")
        if padding.lower() not in ("same", "valid"):
            raise ValueError(f"For 'Unfold', the 'padding' must be 'same' or 'valid', but got {padding!r}.")
        self.padding = padding.lower()

    def construct(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'Unfold', the input must be a Tensor, but got {type(x).__name__}.")
        if x.ndim != 4:
            raise ValueError(f"For 'Unfold', the input must be 4-D (N, C, H, W), but got shape {list(x.shape)}.")
        require_known("Unfold", "input", x.shape, axes=(2, 3), why="its windows need the sizes")
        pads = (0, 0, 0, 0)
        if self.padding == "same":
            pads = tuple(
                p
                for n, k, s, r in zip(x.shape[2:], self.ksizes, self.strides, self.rates)
                for p in conv_output_and_pads("Unfold", n, k, s, r, "same")[1:]
            )
        taps = frontend_conv.window_taps("Unfold", x, self.ksizes, self.strides, self.rates, pads)
        return ops.concat(taps, 1)

    def extend_repr(self) -> str:
        return f"ksizes={self.ksizes}, strides={self.strides}, rates={self.rates}, padding={self.padding}"
