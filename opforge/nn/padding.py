"""Padding layers (MindSpore's ``nn.ZeroPad2d``, ``nn.ConstantPad1d/2d/3d``, ``nn.ReflectionPad1d/2d/3d`` and
``nn.ReplicationPad1d/2d/3d``), each ``ops.pad`` of its last 1, 2 or 3 dims: "constant" mode the Pad primitive
(plus a filled border for a non-zero ``value``), "reflect" and "replicate" ``ops.functional.mirror_pad``
(Slice, ReverseV2, Tile and Concat), so every one differentiates.

``padding`` is an int (every side) or a tuple of (before, after) pairs starting from the last dim:
``(left, right)``, ``(left, right, top, bottom)``, ``(left, right, top, bottom, front, back)``. The constant
pads also take negative values, which crop that side (StridedSlice), as MindSpore's do."""

from __future__ import annotations

import numpy as np

from opforge import ops
from opforge.nn.cell import Cell

__all__ = [
    "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
]  # fmt: skip


def _int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class _PadNd(Cell):
    """``ops.pad(x, padding, mode, value)`` over the last ``_dims`` dims of an input of rank ``_dims + 1`` or
    ``_dims + 2`` (unbatched or batched)."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        name = type(self).__name__
        n = 2 * self._dims
        if _int(padding):
            padding = (int(padding),) * n
        if not isinstance(padding, (tuple, list)) or len(padding) != n or not all(_int(p) for p in padding):
            raise TypeError(f"For '{name}', the 'padding' must be an int or a tuple of {n} ints, but got {padding!r}.")
        padding = tuple(int(p) for p in padding)
        if self._mode != "constant" and min(padding) < 0:
            raise ValueError(f"For '{name}', the 'padding' must be non-negative, but got {padding}.")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"For '{name}', the 'value' must be a number, but got {type(value).__name__}.")
        self.padding, self.value = padding, float(value)

    def extend_repr(self) -> str:
        extra = f", value={self.value:g}" if self._mode == "constant" else ""
        return f"padding={self.padding}{extra}"

    def construct(self, x):
        name, d = type(self).__name__, self._dims
        if x.ndim not in (d + 1, d + 2):
            raise ValueError(
                f"For '{name}', the input must have rank {d + 1} or {d + 2}, but got shape {list(x.shape)}."
            )
        padding = self.padding
        if min(padding) < 0:  # crop first: the negative sides of a constant pad
            begin, end = [0] * x.ndim, list(x.shape)
            for k in range(d):
                dim = x.ndim - 1 - k
                before, after = padding[2 * k], padding[2 * k + 1]
                begin[dim], end[dim] = max(-before, 0), x.shape[dim] - max(-after, 0)
                if end[dim] <= begin[dim]:
                    raise ValueError(
                        f"For '{name}', the 'padding' {padding} crops all of dim {dim} of {list(x.shape)}."
                    )
            x = ops.StridedSlice()(x, tuple(begin), tuple(end), (1,) * x.ndim)
            padding = tuple(max(p, 0) for p in padding)
        if self._mode != "constant":
            limit_extra = 1 if self._mode == "reflect" else 0
            for k in range(d):
                size = x.shape[x.ndim - 1 - k]
                if max(padding[2 * k], padding[2 * k + 1]) > size - limit_extra or size == 0:
                    raise ValueError(
                        f"For '{name}', the 'padding' {self.padding} must be less than the size of the dim it pads "
                        f"in {'reflect' if limit_extra else 'replicate'} mode"
                        f"{'' if limit_extra else ' (or at most it)'}, but got input shape {list(x.shape)}."
                    )
            return ops.pad(x, padding, self._mode)
        return ops.pad(x, padding, "constant", self.value if self.value else None)


class ConstantPad1d(_PadNd):
    """MindSpore's ``nn.ConstantPad1d(padding, value)``: the last dim of [C, W] or [N, C, W] padded with
    ``value``, ``padding`` an int or ``(left, right)`` (negative crops). Every dtype the Pad primitive takes."""

    _dims = 1

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(_PadNd):
    """MindSpore's ``nn.ConstantPad2d(padding, value)``: the last 2 dims of [C, H, W] or [N, C, H, W] padded
    with ``value``, ``padding`` an int or ``(left, right, top, bottom)`` (negative crops)."""

    _dims = 2

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad3d(_PadNd):
    """MindSpore's ``nn.ConstantPad3d(padding, value)``: the last 3 dims of [C, D, H, W] or [N, C, D, H, W]
    padded with ``value``, ``padding`` an int or ``(left, right, top, bottom, front, back)`` (negative crops)."""

    _dims = 3

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ZeroPad2d(_PadNd):
    """MindSpore's ``nn.ZeroPad2d(padding)``: ``ConstantPad2d(padding, 0)``."""

    _dims = 2

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ReflectionPad1d(_PadNd):
    """MindSpore's ``nn.ReflectionPad1d(padding)``: the last dim of [C, W] or [N, C, W] padded with its
    reflection, the edge left out (``np.pad``'s "reflect"); each side's padding must be less than W.
    Float and int dtypes."""

    _dims, _mode = 1, "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad2d(_PadNd):
    """MindSpore's ``nn.ReflectionPad2d(padding)``: the last 2 dims of [C, H, W] or [N, C, H, W] padded with
    their reflection (``(left, right, top, bottom)``, each less than the dim it pads)."""

    _dims, _mode = 2, "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad3d(_PadNd):
    """MindSpore's ``nn.ReflectionPad3d(padding)``: the last 3 dims of [C, D, H, W] or [N, C, D, H, W] padded
    with their reflection (``(left, right, top, bottom, front, back)``, each less than the dim it pads)."""

    _dims, _mode = 3, "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad1d(_PadNd):
    """MindSpore's ``nn.ReplicationPad1d(padding)``: the last dim of [C, W] or [N, C, W] padded with copies of
    its edge element (``np.pad``'s "edge")."""

    _dims, _mode = 1, "replicate"

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad2d(_PadNd):
    """MindSpore's ``nn.ReplicationPad2d(padding)``: the last 2 dims of [C, H, W] or [N, C, H, W] padded with
    copies of their edge elements."""

    _dims, _mode = 2, "replicate"

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad3d(_PadNd):
    """MindSpore's ``nn.ReplicationPad3d(padding)``: the last 3 dims of [C, D, H, W] or [N, C, D, H, W] padded
    with copies of their edge elements."""

    _dims, _mode = 3, "replicate"

    def __init__(self, padding):
        super().__init__(padding)
