"""MindSpore array operator classes that detection and recommendation networks call, composed of other
primitives (so they differentiate, run under ``jit`` and on the CPU and the GPU): ``ArgMaxWithValue`` /
``ArgMinWithValue`` (Argmax/Argmin, then gather_elements of the values at those positions), ``ScatterNd`` /
``scatter_nd`` (TensorScatterAdd into zeros) and ``Flatten`` (Reshape)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.functional_extra import gather_elements
from opforge.ops.host_op import HostOp
from opforge.primitives import array_ops
from opforge.tensor import Tensor

__all__ = ["ArgMaxWithValue", "ArgMinWithValue", "ScatterNd", "scatter_nd", "Flatten"]


def _tensor(op: str, arg: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")
    return x


class _ArgWithValue(HostOp):
    _arg = None  # the Argmax/Argmin primitive class

    def __init__(self, axis=0, keep_dims=False):
        name = type(self).__name__
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For '{name}', the 'axis' must be an int, but got {type(axis).__name__}.")
        if not isinstance(keep_dims, bool):
            raise TypeError(f"For '{name}', the 'keep_dims' must be a bool, but got {type(keep_dims).__name__}.")
        self.axis, self.keep_dims = axis, keep_dims

    def __call__(self, x):
        name = type(self).__name__
        x = _tensor(name, "x", x)
        ndim = max(x.ndim, 1)
        if not -ndim <= self.axis < ndim:
            raise ValueError(f"For '{name}', the 'axis' must be in [{-ndim}, {ndim}), but got {self.axis}.")
        xs = F.reshape(x, (1,)) if x.ndim == 0 else x
        axis = self.axis % ndim
        index = self._arg(axis=axis, output_type=mstype.int32)(xs)
        value = F.squeeze(gather_elements(xs, axis, F.expand_dims(index, axis)), axis)
        if self.keep_dims:
            index, value = F.expand_dims(index, axis), F.expand_dims(value, axis)
        elif x.ndim == 0:
            index, value = F.reshape(index, ()), F.reshape(value, ())
        return index, value


class ArgMaxWithValue(_ArgWithValue):
    r"""MindSpore's ``ops.ArgMaxWithValue(axis=0, keep_dims=False)``: ``(index, values)`` of the maximum of
    ``x`` along ``axis``, ``index`` int32 (the first maximum) and ``values`` of ``x``'s dtype,
    :math:`values = x[..., index, ...]`; with ``keep_dims`` the reduced dim kept as 1. Any real dtype
    Argmax takes. The gradient of ``values`` goes to the positions ``index`` names (gather_elements' bprop)."""

    _arg = array_ops.Argmax


class ArgMinWithValue(_ArgWithValue):
    r"""MindSpore's ``ops.ArgMinWithValue(axis=0, keep_dims=False)``: ``(index, values)`` of the minimum of
    ``x`` along ``axis`` (as ``ArgMaxWithValue``, with Argmin)."""

    _arg = array_ops.Argmin


def _shape(op: str, shape) -> tuple:
    if not isinstance(shape, (tuple, list)) or not shape:
        raise TypeError(f"For '{op}', the 'shape' must be a non-empty tuple of ints, but got {shape!r}.")
    if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in shape):
        raise ValueError(f"For '{op}', the 'shape' must hold positive ints, but got {shape!r}.")
    return tuple(int(d) for d in shape)


class ScatterNd(HostOp):
    r"""MindSpore's ``ops.ScatterNd()(indices, updates, shape)``: a zero Tensor of ``shape`` (updates' dtype)
    with each ``updates[i...]`` added at ``indices[i...]`` (duplicate indices accumulate):

    .. math:: out = 0_{shape};\quad out[indices[i_0, ..., i_{k-1}]] \mathrel{+}= updates[i_0, ..., i_{k-1}]

    ``indices``: int32 or int64, its last dim indexing the first dims of ``shape``; ``updates``:
    ``indices.shape[:-1] + shape[indices.shape[-1]:]``, a number dtype TensorScatterAdd takes (bool is
    scattered as uint8 and cast back). TensorScatterAdd into zeros, so ``updates`` differentiates."""

    def __call__(self, indices, updates, shape):
        indices = _tensor("ScatterNd", "indices", indices)
        updates = _tensor("ScatterNd", "updates", updates)
        shape = _shape("ScatterNd", shape)
        if indices.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For 'ScatterNd', the 'indices' must be int32 or int64, but got {indices.dtype}.")
        depth = indices.shape[-1] if indices.ndim else 0
        expected = tuple(indices.shape[:-1]) + shape[depth:]
        if indices.ndim < 1 or depth > len(shape) or tuple(updates.shape) != expected:
            raise ValueError(
                f"For 'ScatterNd', the 'updates' must have shape indices.shape[:-1] + shape[indices.shape[-1]:] = "
                f"{list(expected)}, but got {list(updates.shape)} (indices {list(indices.shape)}, shape {list(shape)})."
            )
        dtype = updates.dtype
        values = F.cast(updates, mstype.uint8) if dtype == mstype.bool_ else updates
        out = array_ops.TensorScatterAdd()(F.zeros(shape, values.dtype), indices, values)
        return F.cast(out, dtype) if dtype == mstype.bool_ else out


def scatter_nd(indices, updates, shape):
    """MindSpore's ``ops.scatter_nd``: ``ScatterNd()(indices, updates, shape)``."""
    return ScatterNd()(indices, updates, shape)


class Flatten(HostOp):
    r"""MindSpore's ``ops.Flatten()(input_x)``: ``input_x`` [N, ...] reshaped to [N, prod(...)] (a 1-D input to
    [N, 1]); any dtype. Reshape, so it differentiates."""

    def __call__(self, input_x):
        x = _tensor("Flatten", "input_x", input_x)
        if x.ndim == 0:
            raise ValueError("For 'Flatten', the 'input_x' must have at least 1 dim, but got a 0-d Tensor.")
        return F.reshape(x, (x.shape[0], -1))
