"""MindSpore's convolution-family operators that opforge builds from other primitives, with no kernel of their
own (as the classes of opforge/ops/frontend_ops.py): ``Conv3D`` and ``conv3d``, a 3-D convolution computed as a
sum over its depth taps of Conv2D calls, and the window patches behind ``nn.Unfold`` and ``ops.unfold`` (one
StridedSlice per window tap). Each runs as the primitives it calls (Transpose, Pad, StridedSlice, Reshape,
Conv2D, AddN, Concat, Stack), so gradients (their bprops), ``jit``, ``vmap`` and both backends (their kernels)
come with them.

A 3-D convolution of ``x`` [N, C, D, H, W] with ``w`` [O, C / group, kd, kh, kw] is, for each output depth
``t``, the sum over the depth taps ``k`` of the 2-D convolutions of the input plane at depth ``t * sd + k * dd``
(of ``x`` padded in depth) with ``w[:, :, k]``. The planes of every output depth go into the batch dim, so each
tap is one Conv2D call on [N * Dout, C, H, W] (H and W padded, strided and dilated by Conv2D itself)."""

from __future__ import annotations

import functools
import math

from opforge import dtype as mstype
from opforge.geometry import conv_output_and_pads
from opforge.ops import functional as F
from opforge.primitives import conv_ops, math_ops
from opforge.primitives._utils import require_known, same_shape
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["Conv3D", "conv3d", "unfold", "window_taps"]

_CONV3D_FLOATS = (mstype.float16, mstype.float32)  # MindSpore's Conv3D dtypes
_UNFOLD_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.complex64, mstype.complex128)


# ---------------------------------------------------------------------------------------------
# Arguments


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _triple(op: str, arg: str, value, allow_five: bool = False) -> tuple:
    """MindSpore's 3-D ``int or tuple`` argument: an int, a tuple of 3 positive ints (d, h, w) or, with
    ``allow_five``, a tuple of 5 (1, 1, d, h, w); returns (d, h, w)."""
    lengths = "3 or 5" if allow_five else "3"
    if isinstance(value, bool) or not isinstance(value, (int, tuple)):
        raise TypeError(
            f"For '{op}', the '{arg}' must be an int or a tuple of {lengths} ints, but got {type(value).__name__}."
        )
    if isinstance(value, int):
        value = (value,) * 3
    if len(value) == 5 and allow_five:
        if tuple(value[:2]) != (1, 1):
            raise ValueError(f"For '{op}', a tuple of 5 '{arg}' must be (1, 1, d, h, w), but got {value!r}.")
        value = value[2:]
    elif len(value) != 3:
        raise ValueError(
            f"For '{op}', the '{arg}' must be an int or a tuple of {lengths} ints, but got a tuple of length "
            f"{len(value)}: {value!r}."
        )
    if not all(_is_int(v) and v > 0 for v in value):
        raise ValueError(f"For '{op}', the '{arg}' must hold positive ints, but got {value!r}.")
    return tuple(value)


def _pad6(op: str, pad) -> tuple:
    """An int or a tuple of 6 non-negative ints (head, tail, top, bottom, left, right)."""
    if isinstance(pad, bool) or not isinstance(pad, (int, tuple)):
        raise TypeError(
            f"For '{op}', the 'pad' must be an int or a tuple of 6 ints (head, tail, top, bottom, left, right), "
            f"but got {type(pad).__name__}."
        )
    if isinstance(pad, int):
        pad = (pad,) * 6
    if len(pad) != 6:
        raise ValueError(
            f"For '{op}', the 'pad' must be an int or a tuple of 6 ints (head, tail, top, bottom, left, right), "
            f"but got a tuple of length {len(pad)}: {pad!r}."
        )
    if not all(_is_int(p) for p in pad):
        raise TypeError(f"For '{op}', the 'pad' must hold ints, but got {pad!r}.")
    if any(p < 0 for p in pad):
        raise ValueError(f"For '{op}', the 'pad' must hold non-negative ints, but got {pad!r}.")
    return tuple(pad)


def _tensor(op: str, arg: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(value).__name__}.")
    return value


# ---------------------------------------------------------------------------------------------
# Conv3D


@functools.lru_cache(maxsize=256)
def _conv2d(out_channel, kernel_size, pad, stride, dilation, group) -> conv_ops.Conv2D:
    return conv_ops.Conv2D(
        out_channel, kernel_size, pad_mode="pad", pad=pad, stride=stride, dilation=dilation, group=group
    )


_add_n = math_ops.AddN()


class Conv3D:
    r"""3-D convolution (cross-correlation, MindSpore's ``ops.Conv3D``) of ``x`` [N, C, D, H, W] with ``weight``
    [out_channel, C / group, kd, kh, kw]:

    .. math:: out[n, o, t, i, j] = \sum_{c, a, p, q} x[n, g C_g + c, t s_d + a d_d - pad_{head},
              i s_h + p d_h - pad_{top}, j s_w + q d_w - pad_{left}] \cdot w[o, c, a, p, q]

    (zero outside the input; :math:`g` the group of output channel :math:`o`). Output [N, out_channel, Dout,
    Hout, Wout], each size as Conv2D's (opforge/geometry.py): "valid" ``ceil((n - d * (k - 1)) / s)``, "same"
    ``ceil(n / s)`` (padded by ``max(0, (out - 1) * s + d * (k - 1) + 1 - n)``, the odd one after), "pad"
    ``floor((n + before + after - d * (k - 1) - 1) / s) + 1``.

    Attrs as MindSpore 2.x: ``out_channel``, ``kernel_size`` (an int or (kd, kh, kw)), ``mode`` (1), ``pad_mode``
    ("valid", "same" or "pad"), ``pad`` (an int or (head, tail, top, bottom, left, right); non-zero in "pad" mode
    only), ``stride`` and ``dilation`` (an int, (d, h, w) or (1, 1, d, h, w); stored as the 5-tuples),
    ``group`` (dividing ``out_channel`` and C), ``data_format`` ("NCDHW"). Called as ``Conv3D(...)(x, weight)``;
    MindSpore's optional ``bias`` input must be None.

    No kernel of its own: it runs as one Conv2D call per depth tap on the planes of every output depth batched
    together (the module docstring), summed with AddN, so its gradient, ``jit`` and ``vmap`` are those of the
    primitives it calls. dtypes: float16 and float32 (MindSpore's), on the CPU and the GPU (Conv2D's kernels;
    float16 accumulates in float32 within a Conv2D, the depth taps are summed in float16).
    """

    def __init__(
        self,
        out_channel,
        kernel_size,
        mode=1,
        pad_mode="valid",
        pad=0,
        stride=1,
        dilation=1,
        group=1,
        data_format="NCDHW",
    ):
        name = self.name = type(self).__name__
        self.out_channel = validator.check_positive_int(out_channel, "out_channel", name)
        self.kernel_size = _triple(name, "kernel_size", kernel_size)
        self.stride = (1, 1, *_triple(name, "stride", stride, allow_five=True))
        self.dilation = (1, 1, *_triple(name, "dilation", dilation, allow_five=True))
        validator.check_value_type("pad_mode", pad_mode, [str], name)
        self.pad_mode = validator.check_string(pad_mode.lower(), ["valid", "same", "pad"], "pad_mode", name)
        self.pad = self.padding = _pad6(name, pad)
        if self.pad_mode != "pad" and self.padding != (0,) * 6:
            raise ValueError(
                f"For '{name}', the 'pad' must be zero when 'pad_mode' is not 'pad', but got 'pad' {pad!r} and "
                f"'pad_mode' '{self.pad_mode}'."
            )
        self.mode = validator.check_equal_int(mode, 1, "mode", name)
        self.group = self.groups = validator.check_positive_int(group, "group", name)
        self.data_format = self.format = validator.check_string(data_format, ["NCDHW"], "data_format", name)
        if self.out_channel % self.group:
            raise ValueError(
                f"For '{name}', the 'out_channel' must be divisible by 'group', but got out_channel "
                f"{self.out_channel} and group {self.group}."
            )

    def __repr__(self) -> str:
        return (
            f"{self.name}(out_channel={self.out_channel}, kernel_size={self.kernel_size}, pad_mode={self.pad_mode!r}, "
            f"pad={self.padding}, stride={self.stride}, dilation={self.dilation}, group={self.group})"
        )

    def _sizes(self, x_shape) -> list:
        """((out, before, after) of D, H and W) for an input of ``x_shape``."""
        pairs = (self.padding[0:2], self.padding[2:4], self.padding[4:6])
        return [
            conv_output_and_pads(self.name, n, k, s, d, self.pad_mode, pair)
            for n, k, s, d, pair in zip(x_shape[2:], self.kernel_size, self.stride[2:], self.dilation[2:], pairs)
        ]

    def infer_shape(self, x_shape, w_shape) -> list:
        """[N, out_channel, Dout, Hout, Wout]; ``x`` and ``weight`` must be 5-D, ``weight`` [out_channel,
        C / group, *kernel_size]."""
        for arg, shape in (("x", x_shape), ("weight", w_shape)):
            if len(shape) != 5:
                raise ValueError(
                    f"For '{self.name}', the '{arg}' must be 5-D (N, C, D, H, W), but got shape {list(shape)}."
                )
        if not same_shape(w_shape, [self.out_channel, w_shape[1], *self.kernel_size]):
            raise ValueError(
                f"For '{self.name}', the 'weight' must have shape [out_channel={self.out_channel}, C/group, "
                f"{', '.join(map(str, self.kernel_size))}], but got {list(w_shape)}."
            )
        c = x_shape[1]
        if c >= 0 and w_shape[1] >= 0 and c != w_shape[1] * self.group:
            raise ValueError(
                f"For '{self.name}', the 'x' channels {c} must equal the 'weight' dim 1 ({w_shape[1]}) times "
                f"'group' ({self.group}), but they do not."
            )
        return [x_shape[0], self.out_channel, *(out for out, _, _ in self._sizes(x_shape))]

    def infer_dtype(self, x_dtype, w_dtype):
        """The dtype of ``x`` and ``weight``: float16 or float32, both the same."""
        args = {"x": x_dtype, "weight": w_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, _CONV3D_FLOATS, self.name)

    def __call__(self, x, weight, bias=None):
        x, weight = _tensor(self.name, "x", x), _tensor(self.name, "weight", weight)
        if bias is not None:
            raise ValueError(
                f"For '{self.name}', the 'bias' currently only supports None, but got {type(bias).__name__}."
            )
        self.infer_dtype(x.dtype, weight.dtype)
        out_shape = self.infer_shape(list(x.shape), list(weight.shape))
        why = "Conv3D runs as Conv2D calls over its depth taps, which need the sizes"
        require_known(self.name, "x", x.shape, axes=(1, 2, 3, 4), why=why)
        require_known(self.name, "weight", weight.shape, why=why)
        return self._by_depth_taps(x, weight, out_shape)

    def _by_depth_taps(self, x, weight, out_shape):
        n, c, _, h, w = x.shape
        o, d_out, h_out, w_out = out_shape[1:]
        batch = -1 if n < 0 else n * d_out  # an unknown batch (a placeholder's) stays unknown
        kd, kh, kw = self.kernel_size
        sd, dd = self.stride[2], self.dilation[2]
        (_, head, tail), (_, top, bottom), (_, left, right) = self._sizes(x.shape)
        xt = F.transpose(x, (0, 2, 1, 3, 4))  # [N, D, C, H, W]: the depth planes next to the batch
        if head or tail:
            xt = F._pad(((0, 0), (head, tail), (0, 0), (0, 0), (0, 0)))(xt)
        taps = F.unstack(weight, axis=2) if kd > 1 else (F.reshape(weight, (o, weight.shape[1], kh, kw)),)
        conv = _conv2d(o, (kh, kw), (top, bottom, left, right), self.stride[3:], self.dilation[3:], self.group)
        take = F._strided_slice(begin_mask=0b11101, end_mask=0b11101)  # every N, C, H, W; a stride of depths
        outs = []
        for k in range(kd):
            start = k * dd
            planes = xt
            if d_out != xt.shape[1] or start or sd != 1:
                planes = take(xt, (0, start, 0, 0, 0), (0, start + (d_out - 1) * sd + 1, 0, 0, 0), (1, sd, 1, 1, 1))
            outs.append(conv(F.reshape(planes, (batch, c, h, w)), taps[k]))  # [N * Dout, O, Hout, Wout]
        y = outs[0] if kd == 1 else _add_n(tuple(outs))
        return F.transpose(F.reshape(y, (n, d_out, o, h_out, w_out)), (0, 2, 1, 3, 4))


@functools.lru_cache(maxsize=256)
def _conv3d_prim(out_channel, kernel_size, pad_mode, pad, stride, dilation, group) -> Conv3D:
    return Conv3D(out_channel, kernel_size, pad_mode=pad_mode, pad=pad, stride=stride, dilation=dilation, group=group)


def _as_tuple(value):
    return tuple(value) if isinstance(value, list) else value


def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """3-D convolution of ``input`` [N, C, D, H, W] with ``weight`` [O, C / groups, kd, kh, kw], plus ``bias``
    [O] when given (MindSpore's ``ops.conv3d``): ``Conv3D``, then BiasAdd. ``padding``: an int, 3 ints (each
    dim's both sides) or 6 (head, tail, top, bottom, left, right), with ``pad_mode`` "pad"."""
    shape = _tensor("conv3d", "weight", weight).shape
    if len(shape) != 5:
        raise ValueError(f"For 'conv3d', the 'weight' must be 5-D, but got shape {list(shape)}.")
    padding = _as_tuple(padding)
    if isinstance(padding, tuple) and len(padding) == 3:
        padding = tuple(p for p in padding for _ in range(2))
    args = (shape[0], tuple(shape[2:]), pad_mode, padding, _as_tuple(stride), _as_tuple(dilation), groups)
    try:
        prim = _conv3d_prim(*args)
    except TypeError:  # an unhashable argument: Conv3D says what is wrong with it
        prim = Conv3D(*args[:2], pad_mode=args[2], pad=args[3], stride=args[4], dilation=args[5], group=args[6])
    out = prim(input, weight)
    return out if bias is None else F._bias_add(out, bias)


# ---------------------------------------------------------------------------------------------
# Window patches: nn.Unfold, ops.unfold


def window_taps(op: str, x, kernel: tuple, stride: tuple, dilation: tuple, pads: tuple) -> tuple:
    """The window taps of a 4-D ``x`` [N, C, H, W] zero-padded by ``pads`` (top, bottom, left, right): one
    [N, C, Hout, Wout] Tensor per tap (i, j) in row-major order, tap (i, j) at output (r, c) being
    ``x_padded[:, :, r * stride[0] + i * dilation[0], c * stride[1] + j * dilation[1]]``. One StridedSlice per
    tap (Pad first when padded); the sizes as Conv2D's "pad" mode, a window wider than the padded input an
    error naming ``op``."""
    top, bottom, left, right = pads
    h_out = conv_output_and_pads(op, x.shape[2], kernel[0], stride[0], dilation[0], "pad", (top, bottom))[0]
    w_out = conv_output_and_pads(op, x.shape[3], kernel[1], stride[1], dilation[1], "pad", (left, right))[0]
    if any(pads):
        x = F._pad(((0, 0), (0, 0), (top, bottom), (left, right)))(x)
    take = F._strided_slice(begin_mask=0b11, end_mask=0b11)  # every N and C
    taps = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            begin = (0, 0, i * dilation[0], j * dilation[1])
            end = (0, 0, begin[2] + (h_out - 1) * stride[0] + 1, begin[3] + (w_out - 1) * stride[1] + 1)
            taps.append(take(x, begin, end, (1, 1, *stride)))
    return tuple(taps)


def _unfold_pair(arg: str, value, minimum: int) -> tuple:
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
        raise TypeError(f"For 'unfold', the '{arg}' must be an int, a tuple or a list, but got {type(value).__name__}.")
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) not in (1, 2) or not all(_is_int(v) and v >= minimum for v in values):
        what = "positive" if minimum else "non-negative"
        raise ValueError(f"For 'unfold', the '{arg}' must be 1 or 2 {what} ints, but got {value!r}.")
    return values * 2 if len(values) == 1 else values


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002 (MindSpore's name)
    r"""The sliding windows of ``input`` [N, C, H, W] as columns (MindSpore 2.x's ``ops.unfold``, PyTorch's
    ``unfold``): [N, C * kh * kw, L], ``L = Hout * Wout``, column ``r * Wout + c`` holding the window at output
    (r, c) channel by channel, row ``c * kh * kw + i * kw + j`` being channel c at window tap (i, j). ``padding``
    zero-pads both sides of H (``padding[0]``) and W; ``kernel_size``, ``dilation``, ``padding`` and ``stride``
    are an int or 1 or 2 ints. Hout is ``floor((H + 2 * padding[0] - dilation[0] * (kh - 1) - 1) / stride[0]) +
    1``, Wout likewise. StridedSlice per window tap (``window_taps``), Stack and Reshape. dtypes: float16,
    float32, float64, complex64, complex128 (MindSpore's), on the CPU and the GPU."""
    x = _tensor("unfold", "input", input)
    validator.check_tensor_dtype_valid("input", x.dtype, _UNFOLD_DTYPES, "unfold")
    if x.ndim != 4:
        raise ValueError(f"For 'unfold', the 'input' must be 4-D (N, C, H, W), but got shape {list(x.shape)}.")
    kernel = _unfold_pair("kernel_size", kernel_size, 1)
    dilation = _unfold_pair("dilation", dilation, 1)
    pad_h, pad_w = _unfold_pair("padding", padding, 0)
    stride = _unfold_pair("stride", stride, 1)
    require_known("unfold", "input", x.shape, axes=(1, 2, 3), why="its windows need the sizes")
    taps = window_taps("unfold", x, kernel, stride, dilation, (pad_h, pad_h, pad_w, pad_w))
    patches = F.stack(taps, axis=2)  # [N, C, kh * kw, Hout, Wout]
    n_out = patches.shape[3] * patches.shape[4]
    return F.reshape(patches, (x.shape[0], x.shape[1] * math.prod(kernel), n_out))
