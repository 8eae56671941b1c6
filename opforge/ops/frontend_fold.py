"""MindSpore's ``ops.fold`` (PyTorch's ``fold``, ``col2im``): sliding-window columns summed back into an image, the
adjoint of ``ops.unfold`` (opforge/ops/frontend_conv.py). No kernel of its own: each window tap's columns are
placed into the zero-padded image with StridedSliceGrad (the adjoint of the StridedSlice ``unfold`` reads the tap
with), the taps summed (AddN; Add for complex) and the padding sliced off, so the gradient (``unfold``'s
StridedSlices), ``jit``, ``vmap`` and both backends come with those primitives."""

from __future__ import annotations

import functools
import math

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.frontend_conv import _is_int
from opforge.primitives import _grad_ops, array_ops, math_ops
from opforge.primitives._utils import require_known
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["fold"]

_FOLD_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.complex64, mstype.complex128)
_place = _grad_ops.StridedSliceGrad(begin_mask=0b11, end_mask=0b11)  # every N and C: unfold's StridedSlice
_add_n = math_ops.AddN()
_slice = array_ops.Slice()


def _pair(op: str, arg: str, value, minimum: int) -> tuple:
    """An int, or a tuple / list of 1 or 2 ints, each >= ``minimum``, as (h, w)."""
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
        raise TypeError(f"For '{op}', the '{arg}' must be an int, a tuple or a list, but got {type(value).__name__}.")
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) not in (1, 2) or not all(_is_int(v) and v >= minimum for v in values):
        what = "positive" if minimum else "non-negative"
        raise ValueError(f"For '{op}', the '{arg}' must be 1 or 2 {what} ints, but got {value!r}.")
    return values * 2 if len(values) == 1 else values


def _output_size(op: str, value) -> tuple:
    """MindSpore's 1-D int Tensor of 2 elements (H, W); a tuple / list of 2 ints, or an int, as PyTorch's."""
    if isinstance(value, Tensor):
        if value.dtype not in (mstype.int32, mstype.int64) or value.ndim != 1 or value.shape[0] != 2:
            raise ValueError(
                f"For '{op}', the 'output_size' Tensor must be 1-D int32 or int64 of 2 elements, but got "
                f"{value.dtype} of shape {list(value.shape)}."
            )
        value = tuple(int(v) for v in value.asnumpy())  # a shape: read on the host
    elif isinstance(value, (tuple, list)):
        value = tuple(int(v) if isinstance(v, np.integer) else v for v in value)
    return _pair(op, "output_size", value, 1)


@functools.lru_cache(maxsize=64)
def _geometry(op, channels, blocks, size, kernel, dilation, padding, stride) -> tuple:
    """(C, Hout, Wout) of a fold, checked: the columns' channels a multiple of kh * kw, and their count the number
    of windows of the padded ``size``."""
    taps = kernel[0] * kernel[1]
    if channels % taps:
        raise ValueError(
            f"For '{op}', the 'input' dim 1 ({channels}) must be divisible by kernel_size[0] * kernel_size[1] "
            f"({taps}), but it is not."
        )
    counts = []
    for n, k, d, p, s, side in zip(size, kernel, dilation, padding, stride, ("height", "width")):
        span = n + 2 * p - d * (k - 1) - 1
        if span < 0:
            raise ValueError(
                f"For '{op}', the window (kernel_size {k}, dilation {d}) does not fit the padded output {side} "
                f"{n} + 2 * {p}."
            )
        counts.append(span // s + 1)
    if blocks != counts[0] * counts[1]:
        raise ValueError(
            f"For '{op}', the 'input' dim 2 ({blocks}) must equal the number of sliding blocks of output_size "
            f"{list(size)} ({counts[0]} * {counts[1]} = {counts[0] * counts[1]}), but it does not."
        )
    return channels // taps, counts[0], counts[1]


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002 (MindSpore's name)
    r"""Combines sliding-window columns into an image (MindSpore 2.x's ``ops.fold``), the adjoint of ``ops.unfold``:
    ``input`` [N, C * kh * kw, L] (row ``c * kh * kw + i * kw + j`` holding channel c at window tap (i, j), column
    ``r * Wout + s`` the window at output (r, s)) gives [N, C, H, W], (H, W) = ``output_size``, with

    .. math:: out[n, c, y, x] = \sum_{i, j, r, s:\ r s_h + i d_h - p_h = y,\ s s_w + j d_w - p_w = x}
              input[n, c k_h k_w + i k_w + j, r W_{out} + s]

    (overlapping windows add up). ``L`` must be ``Hout * Wout``, ``Hout = floor((H + 2 p_h - d_h (k_h - 1) - 1) /
    s_h) + 1`` (Wout likewise). ``output_size``: a 1-D int Tensor of 2 elements (MindSpore's), or 2 ints;
    ``kernel_size``, ``dilation``, ``padding`` (zero padding of both sides) and ``stride``: an int or 1 or 2 ints.
    dtypes: float16, float32, float64, complex64, complex128 (MindSpore's), on the CPU and the GPU. One
    StridedSliceGrad per window tap, AddN (complex: Add), and a Slice taking the padding off."""
    op = "fold"
    if not isinstance(input, Tensor):
        raise TypeError(f"For '{op}', the 'input' must be a Tensor, but got {type(input).__name__}.")
    validator.check_tensor_dtype_valid("input", input.dtype, _FOLD_DTYPES, op)
    if input.ndim != 3:
        raise ValueError(f"For '{op}', the 'input' must be 3-D (N, C * kh * kw, L), but got shape {list(input.shape)}.")
    size = _output_size(op, output_size)
    kernel = _pair(op, "kernel_size", kernel_size, 1)
    dilation = _pair(op, "dilation", dilation, 1)
    padding = _pair(op, "padding", padding, 0)
    stride = _pair(op, "stride", stride, 1)
    require_known(op, "input", input.shape, axes=(0, 1, 2), why="its windows need the sizes")
    n, channels, blocks = input.shape
    c, h_out, w_out = _geometry(op, channels, blocks, size, kernel, dilation, padding, stride)
    h_pad, w_pad = size[0] + 2 * padding[0], size[1] + 2 * padding[1]
    taps = F.unstack(F.reshape(input, (n, c, math.prod(kernel), h_out, w_out)), 2)
    placed = []
    for t, tap in enumerate(taps):
        i, j = divmod(t, kernel[1])
        begin = (0, 0, i * dilation[0], j * dilation[1])
        end = (0, 0, begin[2] + (h_out - 1) * stride[0] + 1, begin[3] + (w_out - 1) * stride[1] + 1)
        placed.append(_place(tap, (n, c, h_pad, w_pad), begin, end, (1, 1, *stride)))
    if len(placed) == 1:
        image = placed[0]
    elif input.dtype.kind == "c":  # AddN has no complex kernels
        image = functools.reduce(lambda a, b: a + b, placed)
    else:
        image = _add_n(tuple(placed))
    if any(padding):
        image = _slice(image, (0, 0, padding[0], padding[1]), (n, c, size[0], size[1]))
    return image
