"""MindSpore's 3-D pooling operators and ``MaxPoolWithArgmax``, built from the 2-D pooling primitives with no
kernel of their own (as ``Conv3D`` in opforge/ops/frontend_conv.py is built from Conv2D):

- ``MaxPool3D`` and ``AvgPool3D`` pad the input explicitly (Pad, and Select with -inf for the max), then pool
  each depth plane over (H, W) with the MaxPool / AvgPool primitive in "valid" mode and the result over (D, 1):
  both pools are separable (a max of maxes; a mean of means of equal-sized boxes). ``AvgPool3D`` rescales the
  mean of the padded box by a constant per output position for ``count_include_pad``, ``ceil_mode`` and
  ``divisor_override`` (the divisor of each box is a product of one count per dim).
- ``MaxPoolWithArgmax`` is MaxPool for the values; the indices come from the window taps (one StridedSlice per
  tap, opforge/ops/frontend_conv.py's ``window_taps``), an Argmax over them and a Gather of each tap's offset.

Everything runs as the primitives it calls (Pad, Select, Reshape, MaxPool, AvgPool, Mul, StridedSlice, Stack,
Argmax, Gather, Add), so gradients (their bprops), ``jit`` and both backends come with them."""

from __future__ import annotations

import functools

import numpy as np

from opforge import dtype as mstype
from opforge.geometry import conv_output_and_pads
from opforge.ops import functional as F
from opforge.ops.frontend_conv import _triple, window_taps
from opforge.primitives import array_ops, conv_ops
from opforge.primitives.conv_ops import _check_format, _int_or_tuple
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["MaxPool3D", "AvgPool3D", "MaxPoolWithArgmax"]

_MAX3D_FLOATS = (mstype.float16, mstype.float32, mstype.float64)  # MindSpore's MaxPool3D dtypes
_AVG3D_FLOATS = (mstype.float16, mstype.float32)  # MindSpore's AvgPool3D dtypes
_ARGMAX_FLOATS = (mstype.float16, mstype.float32)  # MindSpore's MaxPoolWithArgmax dtypes


def _tensor(op: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{op}', the 'x' must be a Tensor, but got {type(value).__name__}.")
    return value


def _pads(op: str, arg: str, value, lengths: tuple) -> tuple:
    """An int, or a tuple/list of 3 (each dim's both sides) or 6 (head, tail, top, bottom, left, right) ints
    (the lengths ``op`` takes), as 6 non-negative ints."""
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
        raise TypeError(f"For '{op}', the '{arg}' must be an int or a tuple of ints, but got {type(value).__name__}.")
    values = (value,) * 6 if isinstance(value, int) else tuple(value)
    if len(values) == 3 and 3 in lengths:
        values = tuple(v for v in values for _ in range(2))
    if len(values) != 6:
        what = " or ".join(map(str, lengths))
        raise ValueError(f"For '{op}', the '{arg}' must be an int or {what} ints, but got {len(values)}: {value!r}.")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"For '{op}', the '{arg}' must hold ints, but got {value!r}.")
        if v < 0:
            raise ValueError(f"For '{op}', the '{arg}' must hold non-negative ints, but got {value!r}.")
    return values


def _dim(op: str, n: int, k: int, s: int, mode: str, before: int, after: int, ceil_mode: bool) -> tuple:
    """(out, pad before, pad after the input that the last window reaches (>= 0), pad after as given) of one dim:
    the convolution's rule (opforge/geometry.py: "VALID", "SAME", and "CALCULATED", MindSpore's name of "pad"),
    with ``ceil_mode`` rounding "CALCULATED"'s window count up, less one where the last window would start past
    the input and the head padding."""
    if mode == "CALCULATED" and ceil_mode:
        span = n + before + after - k
        out = -(-span // s) + 1
        if (out - 1) * s >= n + before:
            out -= 1
        if out <= 0:
            raise ValueError(
                f"For '{op}', the kernel {k} (padding {before}+{after}) is larger than the input dim {n}: the "
                f"output would have size {out}, but it must be positive."
            )
    else:
        pad_mode = {"VALID": "valid", "SAME": "same"}.get(mode, "pad")
        out, before, after = conv_output_and_pads(op, n, k, s, 1, pad_mode, (before, after))
    return out, before, max(0, (out - 1) * s + k - n - before), after


@functools.lru_cache(maxsize=256)
def _pool2d(kind: str, kernel: tuple, strides: tuple):
    return (conv_ops.MaxPool if kind == "max" else conv_ops.AvgPool)(kernel, strides, "valid")


def _pad_with(x, pads: tuple, value: float):
    """``x`` [N, C, D, H, W] padded by ``pads`` ((head, tail), (top, bottom), (left, right)) with ``value``: Pad,
    then Select of a constant mask where the value is not 0 (so -inf stays out of the products)."""
    pairs = ((0, 0), (0, 0), *pads)
    out = F._pad(pairs)(x)
    if value == 0:
        return out
    inside = np.pad(np.ones(tuple(x.shape[2:]), np.bool_), pads)[None, None]
    fill = Tensor(np.array(value, mstype.dtype_to_nptype(x.dtype)), device=x.device)
    return F.where(Tensor(inside, device=x.device), out, fill)


def _separable_pool(kind: str, x, kernel: tuple, strides: tuple):
    """The "valid" 3-D max or mean pool of ``x`` [N, C, D, H, W]: the 2-D primitive over (H, W) of every depth
    plane, then over (D, 1) of the result."""
    n, c, d, h, w = x.shape
    kd, kh, kw = kernel
    sd, sh, sw = strides
    y = x
    if (kh, kw, sh, sw) != (1, 1, 1, 1):
        y = _pool2d(kind, (kh, kw), (sh, sw))(F.reshape(x, (n, c * d, h, w)))
    h2, w2 = y.shape[-2:]
    if (kd, sd) != (1, 1):
        y = _pool2d(kind, (kd, 1), (sd, 1))(F.reshape(y, (n, c, d, h2 * w2)))
        d = y.shape[2]
    return F.reshape(y, (n, c, d, h2, w2))


class _Pool3D:
    """The arguments and shapes MaxPool3D and AvgPool3D share."""

    _dtypes = _MAX3D_FLOATS

    def _init_pool(self, kernel_size, strides, pad_mode, pads, pad_arg: str, pad_lengths: tuple):
        name = self.name = type(self).__name__
        self.kernel_size = (1, 1, *_triple(name, "kernel_size", kernel_size))
        self.strides = (1, 1, *_triple(name, "strides", strides))
        validator.check_value_type("pad_mode", pad_mode, [str], name)
        mode = validator.check_string(pad_mode.upper(), ["VALID", "SAME", "PAD"], "pad_mode", name)
        self.pad_mode = "CALCULATED" if mode == "PAD" else mode  # MindSpore's attr value for "pad"
        self.pad_list = _pads(name, pad_arg, pads, pad_lengths)
        if self.pad_mode != "CALCULATED" and any(self.pad_list):
            raise ValueError(
                f"For '{name}', the '{pad_arg}' must be zero or (0, 0, 0, 0, 0, 0) when 'pad_mode' is not \"pad\", "
                f"but got '{pad_arg}' {pads!r} and 'pad_mode' {pad_mode!r}."
            )

    def _dims(self, shape) -> list:
        return [
            _dim(self.name, n, k, s, self.pad_mode, self.pad_list[2 * i], self.pad_list[2 * i + 1], self.ceil_mode)
            for i, (n, k, s) in enumerate(zip(shape[2:], self.kernel_size[2:], self.strides[2:]))
        ]

    def infer_shape(self, x_shape) -> list:
        if len(x_shape) != 5:
            raise ValueError(f"For '{self.name}', the 'x' must be 5-D (N, C, D, H, W), but got shape {list(x_shape)}.")
        return [x_shape[0], x_shape[1], *(out for out, *_ in self._dims(x_shape))]

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, self._dtypes, self.name)

    def _checked(self, x):
        x = _tensor(self.name, x)
        self.infer_dtype(x.dtype)
        self.infer_shape(list(x.shape))
        if any(d < 0 for d in x.shape[2:]):
            raise ValueError(f"For '{self.name}', the pooled dims of 'x' must be known, but got {list(x.shape)}.")
        return x

    def __repr__(self) -> str:
        return (
            f"{self.name}(kernel_size={self.kernel_size}, strides={self.strides}, pad_mode={self.pad_mode!r}, "
            f"pad_list={self.pad_list}, ceil_mode={self.ceil_mode})"
        )


class MaxPool3D(_Pool3D):
    r"""3-D max pooling (MindSpore's ``ops.MaxPool3D(kernel_size=1, strides=1, pad_mode="VALID", pad_list=0,
    ceil_mode=None, data_format="NCDHW")``) of ``x`` [N, C, D, H, W]: each output the max of its ``kernel_size``
    box, boxes ``strides`` apart. ``kernel_size`` and ``strides`` are an int or 3 ints (stored as (1, 1, d, h,
    w)); ``pad_mode`` "valid", "same" (padded so the output is ``ceil(n / s)``, the odd padding after) or "pad"
    (``pad_list``: an int, 3 ints or 6 (head, tail, top, bottom, left, right), padded with -inf); ``ceil_mode``
    (True or False with "pad" only; None is False) rounds the output size up, a last window starting past the
    input and its head padding being dropped. Output sizes as the module's ``_dim``.

    The Pad and Select (-inf), then the MaxPool primitive over (H, W) of every depth plane and over D (the
    module docstring), so it differentiates through MaxPool's bprop (each gradient to its window's first max).
    dtypes: float16, float32, float64, on the CPU and the GPU."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", pad_list=0, ceil_mode=None, data_format="NCDHW"):
        self._init_pool(kernel_size, strides, pad_mode, pad_list, "pad_list", (3, 6))
        if ceil_mode is None:
            self.ceil_mode = False
        else:
            self.ceil_mode = validator.check_value_type("ceil_mode", ceil_mode, [bool], self.name)
            if self.pad_mode != "CALCULATED":
                raise ValueError(
                    f"For '{self.name}', when the 'pad_mode' is 'same' or 'valid', the 'ceil_mode' only supports "
                    f"None, but got {ceil_mode!r}."
                )
        self.data_format = validator.check_string(data_format, ["NCDHW"], "data_format", self.name)

    def __call__(self, x):
        x = self._checked(x)
        dims = self._dims(x.shape)
        pads = tuple((before, reach) for _, before, reach, _ in dims)
        if any(p for pair in pads for p in pair):
            x = _pad_with(x, pads, -np.inf)
        return _separable_pool("max", x, self.kernel_size[2:], self.strides[2:])


class AvgPool3D(_Pool3D):
    r"""3-D average pooling (MindSpore's ``ops.AvgPool3D(kernel_size=1, strides=1, pad_mode="valid", pad=0,
    ceil_mode=False, count_include_pad=True, divisor_override=0, data_format="NCDHW")``) of ``x`` [N, C, D, H,
    W]: each output the sum of its ``kernel_size`` box (boxes ``strides`` apart, zero padding) divided by
    ``divisor_override`` when it is not 0, else by the number of the box's positions inside the padded input
    (``count_include_pad``; positions a ``ceil_mode`` window reaches past the padding are not counted) or
    inside the input (``count_include_pad=False``). ``pad_mode`` "valid", "same" or "pad" (``pad``: an int or
    6 ints (head, tail, top, bottom, left, right)); output sizes as ``MaxPool3D``'s (``ceil_mode`` acts in "pad"
    mode).

    Pad, the AvgPool primitive over (H, W) of every depth plane and over D (the mean of the padded box), then a
    Mul by a constant per output position for the divisor, so it differentiates through AvgPool's bprop.
    dtypes: float16, float32, on the CPU and the GPU."""

    _dtypes = _AVG3D_FLOATS

    def __init__(
        self,
        kernel_size=1,
        strides=1,
        pad_mode="valid",
        pad=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=0,
        data_format="NCDHW",
    ):
        self._init_pool(kernel_size, strides, pad_mode, pad, "pad", (6,))
        self.ceil_mode = validator.check_value_type("ceil_mode", ceil_mode, [bool], self.name)
        self.count_include_pad = validator.check_value_type("count_include_pad", count_include_pad, [bool], self.name)
        self.divisor_override = validator.check_non_negative_int(divisor_override, "divisor_override", self.name)
        self.data_format = validator.check_string(data_format, ["NCDHW"], "data_format", self.name)

    def _scale(self, shape, dims) -> np.ndarray:
        """The factor of each output position (D, H, W): the box size over its divisor."""
        if self.divisor_override:
            divisor = np.full([out for out, *_ in dims], float(self.divisor_override))
        else:
            counts = []
            for n, k, s, (out, before, _, after) in zip(shape[2:], self.kernel_size[2:], self.strides[2:], dims):
                start = np.arange(out) * s - before
                if self.count_include_pad:
                    counts.append(np.minimum(start + k, n + after) - start)
                else:
                    counts.append(np.minimum(start + k, n) - np.maximum(start, 0))
            divisor = counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]
        return float(np.prod(self.kernel_size[2:])) / divisor

    def __call__(self, x):
        x = self._checked(x)
        shape = tuple(x.shape)
        dims = self._dims(shape)
        pads = tuple((before, reach) for _, before, reach, _ in dims)
        if any(p for pair in pads for p in pair):
            x = _pad_with(x, pads, 0)
        y = _separable_pool("avg", x, self.kernel_size[2:], self.strides[2:])
        scale = self._scale(shape, dims)
        if np.all(scale == 1.0):
            return y
        return F.mul(y, Tensor(scale.astype(mstype.dtype_to_nptype(y.dtype)), device=y.device))

    def __repr__(self) -> str:
        return (
            f"{super().__repr__()[:-1]}, count_include_pad={self.count_include_pad}, "
            f"divisor_override={self.divisor_override})"
        )


class MaxPoolWithArgmax:
    r"""2-D max pooling with the position of each max (MindSpore's ``ops.MaxPoolWithArgmax(kernel_size=1,
    strides=1, pad_mode="valid", data_format="NCHW")``): ``(output, mask)`` for ``x`` [N, C, H, W], ``output``
    as ``ops.MaxPool``'s and ``mask`` (int32, ``output``'s shape) the index ``h * W + w`` within its (H, W) plane
    of the input element each output took (the first max of the window in row-major order). ``kernel_size`` and
    ``strides`` an int or 2 ints; ``pad_mode`` "valid" or "same" (padded with -inf, the odd padding after).

    ``output`` is the MaxPool primitive's (it differentiates through MaxPool's bprop); ``mask`` comes from the
    window taps of the -inf-padded input (one StridedSlice each), Argmax over them and a Gather of each tap's
    offset, added to each window's origin (no gradient). dtypes: float16, float32, on the CPU and the GPU."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        name = self.name = type(self).__name__
        validator.check_value_type("pad_mode", pad_mode, [str], name)
        self.pad_mode = validator.check_string(pad_mode.upper(), ["VALID", "SAME"], "pad_mode", name)
        self.kernel_size = _int_or_tuple(name, "kernel_size", kernel_size, ret_four=True)
        self.strides = _int_or_tuple(name, "strides", strides, ret_four=True)
        self.format = self.data_format = _check_format(name, data_format)
        self._max_pool = conv_ops.MaxPool(self.kernel_size[2:], self.strides[2:], self.pad_mode)

    def __repr__(self) -> str:
        return f"{self.name}(kernel_size={self.kernel_size}, strides={self.strides}, pad_mode={self.pad_mode!r})"

    def __call__(self, x):
        x = _tensor(self.name, x)
        validator.check_tensor_dtype_valid("x", x.dtype, _ARGMAX_FLOATS, self.name)
        if x.ndim != 4:
            raise ValueError(f"For '{self.name}', the 'x' must be 4-D (N, C, H, W), but got shape {list(x.shape)}.")
        if any(d < 0 for d in x.shape[2:]):
            raise ValueError(f"For '{self.name}', the pooled dims of 'x' must be known, but got {list(x.shape)}.")
        output = self._max_pool(x)
        return output, self._argmax(x, output.shape[2:])

    def _argmax(self, x, out_hw):
        (kh, kw), (sh, sw), (h, w) = self.kernel_size[2:], self.strides[2:], x.shape[2:]
        pads = [(0, 0), (0, 0)]
        for n, k, s, out in ((h, kh, sh, out_hw[0]), (w, kw, sw, out_hw[1])):
            total = max(0, (out - 1) * s + k - n) if self.pad_mode == "SAME" else 0
            pads.append((total // 2, total - total // 2))
        (top, _), (left, _) = pads[2:]
        if any(p for pair in pads for p in pair):
            inside = np.pad(np.ones((h, w), np.bool_), pads[2:])[None, None]
            fill = Tensor(np.array(-np.inf, mstype.dtype_to_nptype(x.dtype)), device=x.device)
            x = F.where(Tensor(inside, device=x.device), F._pad(tuple(pads))(x), fill)
        taps = window_taps(self.name, x, (kh, kw), (sh, sw), (1, 1), (0, 0, 0, 0))
        tap = array_ops.Argmax(axis=2, output_type=mstype.int32)(F.stack(taps, axis=2))  # [N, C, Hout, Wout]
        offsets = np.array([i * w + j for i in range(kh) for j in range(kw)], np.int32)
        rows = np.arange(out_hw[0]) * sh - top
        cols = np.arange(out_hw[1]) * sw - left
        origin = (rows[:, None] * w + cols[None, :]).astype(np.int32)
        picked = F.gather(Tensor(offsets, device=x.device), tap, 0)
        return F.add(picked, Tensor(origin, device=x.device))
