"""Transposed convolution layers beyond 2-D (MindSpore's ``nn.Conv1dTranspose`` and ``nn.Conv3dTranspose``), built
from the pieces of opforge/ops/conv_transpose.py: Conv1dTranspose is Conv2DBackpropInput over an inserted H dim
of 1 (as MindSpore builds it), Conv3dTranspose calls ``ops.Conv3DTranspose``. Output sizes follow MindSpore's
layers: "same" ``L * stride``, "valid" ``L * stride + max(f - stride, 0)`` and "pad" ``(L - 1) * stride + f -
padding_before - padding_after (+ output_padding)``, with ``f = dilation * (kernel_size - 1) + 1``."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.layers_conv import Conv2d
from opforge.ops import conv_transpose
from opforge.tensor import Tensor

__all__ = ["Conv1dTranspose", "Conv3dTranspose"]


def _int(cell: str, name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{cell}', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"For '{cell}', the '{name}' must be at least {minimum}, but got {value}.")
    return int(value)


class _Conv1dTransposePrim:
    """The Conv2D-over-an-inserted-dim transposed convolution of Conv1dTranspose ([N, C, 1, L] in and out)."""

    def __init__(self, out_channels, kernel_size, stride, pad_mode, padding, dilation, group):
        self.out_channels, self.kernel_size, self.stride = out_channels, kernel_size, stride
        self.pad_mode, self.padding, self.dilation, self.group = pad_mode, padding, dilation, group

    def __call__(self, x, weight):
        head, out = conv_transpose.transposed_extent(
            "Conv1dTranspose", x.shape[3], self.kernel_size, self.stride, self.dilation, self.pad_mode,
            (self.padding, self.padding),
        )  # fmt: skip
        return conv_transpose.transposed_conv2d(
            x, weight, self.out_channels, (1, self.stride), (1, self.dilation), self.group, (0, head), (1, out)
        )


class Conv1dTranspose(Conv2d):
    r"""1-D transposed convolution layer (MindSpore's ``nn.Conv1dTranspose``), the gradient of a Conv1d with
    respect to its input, of ``x`` [N, in_channels, L]: output [N, out_channels, L_out] with

    .. math:: out[n, o, t \cdot stride + a \cdot dilation - p] \mathrel{+}= \sum_c x[n, c, t] \, w[c, o', 0, a]

    (the input channels c of o's group, ``p`` the left padding), plus ``bias``. ``L_out`` is ``L * stride``
    ("same", the default), ``L * stride + max(f - stride, 0)`` ("valid") or ``(L - 1) * stride + f - 2 *
    padding`` ("pad"), ``f = dilation * (kernel_size - 1) + 1``. ``kernel_size``, ``stride``, ``dilation`` and
    ``padding`` are ints (``padding`` non-zero in "pad" mode only). The ``weight`` Parameter has MindSpore's
    shape [in_channels, out_channels / group, 1, kernel_size] (a 3-D Tensor ``weight_init`` gets the 1
    inserted); ``weight_init=None`` / ``bias_init=None`` are MindSpore 2.x's HeUniform(sqrt(5)) and
    Uniform(1 / sqrt(fan_in)). Computed as MindSpore does, Conv2DBackpropInput over x expanded to [N, C, 1, L],
    then squeezed. dtypes: Conv2DBackpropInput's (float16, float32, float64)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):  # fmt: skip
        name = "Conv1dTranspose"
        self._k = _int(name, "kernel_size", kernel_size, 1)
        self._s = _int(name, "stride", stride, 1)
        self._d = _int(name, "dilation", dilation, 1)
        self._p = _int(name, "padding", padding, 0)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
            raise ValueError(f"For '{name}', the 'pad_mode' must be 'same', 'valid' or 'pad', but got {pad_mode!r}.")
        self._mode = pad_mode.lower()
        if self._mode != "pad" and self._p:
            raise ValueError(f"For '{name}', the 'padding' must be 0 unless 'pad_mode' is 'pad', but got {padding}.")
        if isinstance(weight_init, (Tensor, np.ndarray)):
            array = np.asarray(weight_init.asnumpy() if isinstance(weight_init, Tensor) else weight_init)
            if array.ndim != 3:
                raise ValueError(
                    f"For '{name}', a Tensor 'weight_init' must be 3-D [in, out / group, k], but got shape "
                    f"{list(array.shape)}."
                )
            weight_init = np.expand_dims(array, 2)
        super().__init__(in_channels, out_channels, (1, self._k), (1, self._s), self._mode, 0, (1, self._d), group,
                         has_bias, weight_init, bias_init, "NCHW", dtype)  # fmt: skip
        self.kernel_size, self.stride, self.dilation, self.padding = self._k, self._s, self._d, self._p
        self.expand_dims = ops.ExpandDims()
        self.squeeze = ops.Squeeze(2)

    def _convolution(self):
        return _Conv1dTransposePrim(self.out_channels, self._k, self._s, self._mode, self._p, self._d, self.group)

    def _weight_shape(self) -> tuple:
        return (self.in_channels, self.out_channels // self.group, 1, self._k)

    def construct(self, x):
        if not isinstance(x, Tensor) or x.ndim != 3:
            shape = list(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"For 'Conv1dTranspose', the input must be a 3-D Tensor (N, C, L), but got {shape}.")
        params = self._params
        out = self.conv2d(self.expand_dims(x, 2), params["weight"])
        if self.has_bias:
            out = self.bias_add(out, params["bias"])
        return self.squeeze(out)

    def extend_repr(self) -> str:
        return (
            f"input_channels={self.in_channels}, output_channels={self.out_channels}, kernel_size={self._k}, "
            f"stride={self._s}, pad_mode={self._mode}, padding={self._p}, dilation={self._d}, group={self.group}, "
            f"has_bias={self.has_bias}"
        )


class Conv3dTranspose(Conv2d):
    r"""3-D transposed convolution layer (MindSpore's ``nn.Conv3dTranspose``), the gradient of a Conv3d with
    respect to its input, of ``x`` [N, in_channels, D, H, W] (NCDHW): ``ops.Conv3DTranspose`` (whose docstring
    gives the formula and output sizes), plus ``bias``. ``weight`` is [in_channels, out_channels / group, kd, kh,
    kw]; ``kernel_size``, ``stride`` and ``dilation`` an int or a triple; ``pad_mode`` "same" (default),
    "valid" or "pad" with ``padding`` an int, a triple (both sides of D, H and W) or (head, tail, top, bottom,
    left, right) and ``output_padding`` an int or a triple (below the stride or the dilation). ``weight_init``
    / ``bias_init`` None: MindSpore 2.x's HeUniform(sqrt(5)) and Uniform(1 / sqrt(fan_in)). dtypes:
    float16, float32 (MindSpore's) and float64."""

    _spatial = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, output_padding=0, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):  # fmt: skip
        self.output_padding = output_padding
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
                         weight_init, bias_init, data_format, dtype)  # fmt: skip

    def _convolution(self):
        return conv_transpose.Conv3DTranspose(
            self.in_channels, self.out_channels, self.kernel_size, pad_mode=self.pad_mode, pad=self.padding,
            stride=self.stride, dilation=self.dilation, group=self.group, output_padding=self.output_padding,
            data_format=self.data_format,
        )  # fmt: skip

    def _weight_shape(self) -> tuple:
        return (self.in_channels, self.out_channels // self.group, *self.kernel_size)

    def construct(self, x):
        if not isinstance(x, Tensor) or x.ndim != 5:
            shape = list(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"For 'Conv3dTranspose', the input must be a 5-D Tensor (N, C, D, H, W), but got {shape}.")
        params = self._params
        out = self.conv2d(x, params["weight"])
        if self.has_bias:
            out = self.bias_add(out, params["bias"])
        return out

    def extend_repr(self) -> str:
        return super().extend_repr() + f", output_padding={self.output_padding}"
