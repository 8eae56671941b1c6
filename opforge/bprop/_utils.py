"""Helpers shared by bprop definitions, written with primitives so they differentiate again."""

from __future__ import annotations

import numpy as np

from opforge.tensor import Tensor

__all__ = ["sum_to_shape", "zeros_like", "broadcast_axes"]


def broadcast_axes(shape: tuple, out_shape: tuple) -> tuple:
    """Axes of ``out_shape`` along which an input of ``shape`` was broadcast."""
    lead = len(out_shape) - len(shape)
    axes = list(range(lead))
    axes += [lead + i for i, d in enumerate(shape) if d == 1 and out_shape[lead + i] != 1]
    return tuple(axes)


def sum_to_shape(dout: Tensor, shape: tuple) -> Tensor:
    """Reduce a broadcast gradient back to the input's ``shape`` (the adjoint of broadcasting)."""
    from opforge.ops import functional as F

    if dout.shape == tuple(shape):
        return dout
    axes = broadcast_axes(tuple(shape), dout.shape)
    summed = F.reduce_sum(True)(dout, axes) if axes else dout
    return F.reshape(summed, tuple(shape)) if summed.shape != tuple(shape) else summed


def zeros_like(t: Tensor) -> Tensor:
    """A constant zero gradient (for inputs that have none)."""
    return Tensor._from_array(np.zeros(t.shape, t.dtype.np_dtype), t.dtype)
