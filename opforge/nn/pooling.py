"""Pooling layers beyond layers_conv.py's (MindSpore's ``nn.AdaptiveAvgPool1d``, ``nn.AdaptiveMaxPool1d``,
``nn.AdaptiveMaxPool2d``, ``nn.MaxPool3d`` and ``nn.AvgPool3d``), composed of primitives so each differentiates:

- adaptive average pooling: the AdaptiveAvgPool2D primitive over an inserted H dim of 1;
- adaptive max pooling: per output window a StridedSlice and a ReduceMax, joined by Concat, one spatial dim at a
  time (a box's max is the max over its rows of the max over its columns); with ``return_indices`` an Argmax per
  window, mapped to the flat ``h * W + w`` index by a Gather;
- 3-D pooling: the 2-D MaxPool / AvgPool primitive over (H, W) of every depth slice, then over (D, 1) of the
  result (both are separable: a max of maxes, and a mean of means over a box, the padded elements excluded).

Adaptive windows follow MindSpore's: output ``i`` of ``n`` over a dim of size ``L`` pools
``[floor(i * L / n), ceil((i + 1) * L / n))``."""

from __future__ import annotations

import numpy as np

from opforge import ops
from opforge.nn.cell import Cell
from opforge.tensor import Tensor

__all__ = ["AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxPool3d", "AvgPool3d"]


def _windows(size: int, out: int) -> list:
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _check_size(cell: str, value, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"For '{cell}', the 'output_size' must hold positive ints, but got {value!r}.")
    return int(value)


def _check_rank(cell: str, x, ranks: tuple) -> None:
    if x.ndim not in ranks:
        raise ValueError(
            f"For '{cell}', the input must have rank {' or '.join(map(str, ranks))}, but got shape {list(x.shape)}."
        )


def _slice(x, axis: int, start: int, stop: int):
    begin, end = [0] * x.ndim, list(x.shape)
    begin[axis], end[axis] = start, stop
    return ops.StridedSlice()(x, tuple(begin), tuple(end), (1,) * x.ndim)


def _adaptive_max(x, axis: int, out: int):
    """The max of each adaptive window of ``axis``: StridedSlice and ReduceMax per window, then Concat."""
    windows = _windows(x.shape[axis], out)
    reduce_max = ops.ReduceMax(keep_dims=True)
    parts = [reduce_max(_slice(x, axis, a, b), axis) for a, b in windows]
    return parts[0] if len(parts) == 1 else ops.Concat(axis)(tuple(parts))


class AdaptiveAvgPool1d(Cell):
    r"""MindSpore's ``nn.AdaptiveAvgPool1d(output_size)``: [N, C, L] (or [C, L]) to [N, C, output_size], output
    ``i`` the mean of ``x[..., floor(i L / n):ceil((i + 1) L / n)]``. The AdaptiveAvgPool2D primitive over an
    inserted H dim of 1. float16, float32, float64."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _check_size("AdaptiveAvgPool1d", output_size)
        self.pool = ops.AdaptiveAvgPool2D((1, self.output_size))

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        _check_rank("AdaptiveAvgPool1d", input, (2, 3))
        return ops.squeeze(self.pool(ops.expand_dims(input, -2)), -2)


class AdaptiveMaxPool1d(Cell):
    r"""MindSpore's ``nn.AdaptiveMaxPool1d(output_size)``: [N, C, L] (or [C, L]) to [N, C, output_size], output
    ``i`` the max of ``x[..., floor(i L / n):ceil((i + 1) L / n)]`` (StridedSlice, ReduceMax, Concat; the gradient
    goes to the maxima). float16, float32, float64."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _check_size("AdaptiveMaxPool1d", output_size)

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        _check_rank("AdaptiveMaxPool1d", input, (2, 3))
        return _adaptive_max(input, input.ndim - 1, self.output_size)


class AdaptiveMaxPool2d(Cell):
    r"""MindSpore's ``nn.AdaptiveMaxPool2d(output_size, return_indices=False)``: [N, C, H, W] (or [C, H, W]) to
    [..., oh, ow], output ``(i, j)`` the max of the window rows ``[floor(i H / oh), ceil((i + 1) H / oh))`` and
    columns likewise. ``output_size`` is an int or a pair (None keeps that dim). With ``return_indices`` also the
    int64 flat index ``h * W + w`` of each maximum in its plane (the first one on ties). float16, float32,
    float64."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        name = "AdaptiveMaxPool2d"
        pair = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size, output_size)
        if len(pair) != 2:
            raise ValueError(f"For '{name}', the 'output_size' must be an int or a pair, but got {output_size!r}.")
        self.output_size = tuple(_check_size(name, v, allow_none=True) for v in pair)
        if not isinstance(return_indices, bool):
            raise TypeError(
                f"For '{name}', the 'return_indices' must be bool, but got {type(return_indices).__name__}."
            )
        self.return_indices = return_indices

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}, return_indices={self.return_indices}"

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        _check_rank("AdaptiveMaxPool2d", input, (3, 4))
        h, w = input.shape[-2:]
        oh, ow = (
            (h if self.output_size[0] is None else self.output_size[0]),
            (w if self.output_size[1] is None else self.output_size[1]),
        )
        out = _adaptive_max(_adaptive_max(input, input.ndim - 2, oh), input.ndim - 1, ow)
        if not self.return_indices:
            return out
        rows = []
        for a, b in _windows(h, oh):
            cols = []
            for c, d in _windows(w, ow):
                window = _slice(_slice(input, input.ndim - 2, a, b), input.ndim - 1, c, d)
                flat = ops.reshape(window, tuple(input.shape[:-2]) + ((b - a) * (d - c),))
                table = np.array([r * w + s for r in range(a, b) for s in range(c, d)], np.int64)
                cols.append(ops.gather(Tensor(table), ops.argmax(flat, -1, True), 0))
            rows.append(ops.concat(tuple(cols), -1))
        indices = ops.stack(tuple(rows), -2)
        return out, ops.reshape(indices, out.shape)


def _triple(cell: str, name: str, value) -> tuple:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * 3
    if len(values) != 3 or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in values):
        raise ValueError(f"For '{cell}', the '{name}' must be a positive int or 3 of them, but got {value!r}.")
    return tuple(int(v) for v in values)


class _Pool3d(Cell):
    _prim = None  # the 2-D pooling primitive class

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, **unsupported):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _triple(name, "kernel_size", kernel_size)
        self.stride = _triple(name, "stride", stride)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same"):
            raise ValueError(
                f"For '{name}', the 'pad_mode' must be 'valid' or 'same' (opforge composes the 3-D pooling of 2-D "
                f"ones and does not implement 'pad'), but got {pad_mode!r}."
            )
        if padding not in (0, (0, 0, 0), (0,) * 6) or ceil_mode:
            raise ValueError(f"For '{name}', opforge implements 'padding'=0 and 'ceil_mode'=False only.")
        for key, (value, default) in unsupported.items():
            if value != default:
                raise ValueError(f"For '{name}', opforge implements '{key}'={default!r} only, but got {value!r}.")
        self.pad_mode = pad_mode.lower()
        kd, kh, kw = self.kernel_size
        sd, sh, sw = self.stride
        prim = self._prim
        self.pool_hw = prim(kernel_size=(kh, kw), strides=(sh, sw), pad_mode=self.pad_mode)
        self.pool_d = prim(kernel_size=(kd, 1), strides=(sd, 1), pad_mode=self.pad_mode)

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"

    def construct(self, x):
        name = type(self).__name__
        _check_rank(name, x, (4, 5))
        unbatched = x.ndim == 4
        if unbatched:
            x = ops.expand_dims(x, 0)
        n, c, d, h, w = x.shape
        y = self.pool_hw(ops.reshape(x, (n, c * d, h, w)))
        h2, w2 = y.shape[-2:]
        y = self.pool_d(ops.reshape(y, (n, c, d, h2 * w2)))
        y = ops.reshape(y, (n, c, y.shape[2], h2, w2))
        return ops.squeeze(y, 0) if unbatched else y


class MaxPool3d(_Pool3d):
    r"""MindSpore's ``nn.MaxPool3d(kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
    ceil_mode=False, return_indices=False)``: each output of [N, C, D, H, W] (or [C, D, H, W]) the max of its
    ``kernel_size`` box, boxes ``stride`` apart; ``pad_mode`` "valid" or "same" (padded with -inf). The MaxPool
    primitive over (H, W), then over D. opforge implements padding=0, dilation=1, ceil_mode=False and no
    indices; other values raise ValueError. float16, float32, float64."""

    _prim = ops.MaxPool

    def __init__(
        self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, ceil_mode=False, return_indices=False
    ):
        super().__init__(
            kernel_size,
            stride,
            pad_mode,
            padding,
            ceil_mode,
            dilation=(dilation, 1),
            return_indices=(return_indices, False),
        )


class AvgPool3d(_Pool3d):
    r"""MindSpore's ``nn.AvgPool3d(kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None)``: each output of [N, C, D, H, W] (or [C, D, H, W]) the mean
    of its ``kernel_size`` box, boxes ``stride`` apart; ``pad_mode`` "valid" or "same" (the mean of the elements
    inside the input). The AvgPool primitive over (H, W), then over D. opforge implements padding=0,
    ceil_mode=False and divisor_override=None; other values raise ValueError. float16, float32, float64."""

    _prim = ops.AvgPool

    def __init__(
        self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
        divisor_override=None,
    ):  # fmt: skip
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, divisor_override=(divisor_override, None))
        self.count_include_pad = count_include_pad
