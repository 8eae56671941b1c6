"""More of ``mindspore.numpy`` (exported by ``opforge.numpy``): the dtype names (``mnp.float32``, ...) and
constants (``mnp.pi``, ``mnp.inf``, ...); element-wise math (``sign``, ``around``/``round``, ``cos``, ``sin``,
``tan``, ``tanh``, ``floor``, ``ceil``, ``reciprocal``, ``remainder``/``mod``, the comparisons, ``isinf``);
matrices (``diag``, ``tril``, ``triu``, ``outer``, ``norm``); and array manipulation (``roll``, ``pad``,
``copy``, ``ravel``, ``swapaxes``, ``vstack``, ``hstack``, ``meshgrid``). Each follows NumPy's (and
MindSpore's) semantics and is composed of opforge's primitives, so it differentiates, runs on the CPU and the
GPU and is recorded by jit."""

from __future__ import annotations

import builtins
import math

import numpy as _np

from opforge import dtype as mstype
from opforge import ops
from opforge.dtype import (  # noqa: F401 (mindspore.numpy's dtype names)
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from opforge.ops import functional as F
from opforge.tensor import Tensor

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "pi", "e", "euler_gamma", "inf", "nan", "PINF", "NINF", "PZERO", "NZERO", "newaxis",
    "sign", "around", "round", "cos", "sin", "tan", "tanh", "floor", "ceil", "reciprocal", "remainder", "mod",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "isinf",
    "diag", "tril", "triu", "outer", "norm", "roll", "pad", "copy", "ravel", "swapaxes", "vstack", "hstack",
    "meshgrid",
]  # fmt: skip

pi, e, euler_gamma = math.pi, math.e, 0.5772156649015329
inf, nan = math.inf, math.nan
PINF, NINF, PZERO, NZERO = math.inf, -math.inf, 0.0, -0.0
newaxis = None


def _tensor(x) -> Tensor:
    """``x`` as a Tensor (numbers and sequences as mindspore.numpy reads them: Python floats as float32)."""
    if isinstance(x, Tensor):
        return x
    data = _np.asarray(x)
    if data.dtype == _np.float64:
        data = data.astype(_np.float32)
    return Tensor(data)


def _out(result: Tensor, dtype) -> Tensor:
    return result if dtype is None else F.cast(result, mstype.to_dtype(dtype))


def _axis(axis: int, ndim: int, where: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, _np.integer)) or not -ndim <= axis < ndim:
        raise ValueError(f"For '{where}', the axis must be an int in [{-ndim}, {ndim}), but got {axis!r}.")
    return int(axis) % ndim


# -- element-wise ----------------------------------------------------------------------------------------


def sign(x, dtype=None):
    """-1, 0 or 1 by the sign of ``x`` (NaN stays NaN)."""
    return _out(F.sign(_tensor(x)), dtype)


def around(a, decimals=0):
    """``a`` rounded to ``decimals`` decimals, halves to even (``np.around``): Round of ``a * 10**decimals``,
    divided back. Integer inputs are returned unchanged for ``decimals`` >= 0."""
    a = _tensor(a)
    if isinstance(decimals, bool) or not isinstance(decimals, (int, _np.integer)):
        raise TypeError(f"For 'around', the 'decimals' must be an int, but got {type(decimals).__name__}.")
    if a.dtype not in mstype.float_type:
        if decimals >= 0:
            return a
        a = F.cast(a, mstype.float32)
    if decimals == 0:
        return F.round(a)
    scale = 10.0 ** int(decimals)
    return F.div(F.round(F.mul(a, scale)), scale)


round = around  # noqa: A001 (NumPy's name)


def cos(x, dtype=None):
    return _out(F.cos(_tensor(x)), dtype)


def sin(x, dtype=None):
    return _out(F.sin(_tensor(x)), dtype)


def tan(x, dtype=None):
    return _out(F.tan(_tensor(x)), dtype)


def tanh(x, dtype=None):
    return _out(F.tanh(_tensor(x)), dtype)


def floor(x, dtype=None):
    return _out(F.floor(_tensor(x)), dtype)


def ceil(x, dtype=None):
    return _out(F.ceil(_tensor(x)), dtype)


def reciprocal(x, dtype=None):
    return _out(F.reciprocal(_tensor(x)), dtype)


def remainder(x1, x2, dtype=None):
    """``x1 mod x2`` with the sign of ``x2`` (``np.remainder``; FloorMod)."""
    return _out(F.floor_mod(_tensor(x1), _tensor(x2)), dtype)


mod = remainder


def greater(x1, x2, dtype=None):
    return _out(F.greater(_tensor(x1), _tensor(x2)), dtype)


def greater_equal(x1, x2, dtype=None):
    return _out(F.greater_equal(_tensor(x1), _tensor(x2)), dtype)


def less(x1, x2, dtype=None):
    return _out(F.less(_tensor(x1), _tensor(x2)), dtype)


def less_equal(x1, x2, dtype=None):
    return _out(F.less_equal(_tensor(x1), _tensor(x2)), dtype)


def equal(x1, x2, dtype=None):
    return _out(F.equal(_tensor(x1), _tensor(x2)), dtype)


def not_equal(x1, x2, dtype=None):
    return _out(F.not_equal(_tensor(x1), _tensor(x2)), dtype)


def isinf(x, dtype=None):
    return _out(ops.isinf(_tensor(x)), dtype)


# -- matrices --------------------------------------------------------------------------------------------


def diag(v, k=0):
    """``np.diag``: a 1-D ``v`` as the ``k``-th diagonal of a square matrix of side ``len(v) + |k|`` (0
    elsewhere: a Gather of ``v`` under a host mask), or the ``k``-th diagonal of a 2-D ``v`` (GatherNd of the
    host coordinates). Differentiable in ``v``."""
    v = _tensor(v)
    if isinstance(k, bool) or not isinstance(k, (int, _np.integer)):
        raise TypeError(f"For 'diag', the 'k' must be an int, but got {type(k).__name__}.")
    k = int(k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        rows, cols = _np.indices((n, n))
        mask = cols - rows == k
        source = _np.where(mask, rows if k >= 0 else cols, 0).astype(_np.int64)
        picked = F.gather(v, Tensor(source, device=v.device), 0) if v.shape[0] else F.fill(v.dtype, (n, n), 0)
        return F.select(Tensor(mask, device=v.device), picked, F.zeros_like(picked))
    if v.ndim == 2:
        rows, cols = v.shape
        start_r, start_c = (0, k) if k >= 0 else (-k, 0)
        length = builtins.max(0, builtins.min(rows - start_r, cols - start_c))
        if length == 0:
            return F.fill(v.dtype, (0,), 0)
        steps = _np.arange(length)
        coords = _np.stack([start_r + steps, start_c + steps], -1).astype(_np.int64)
        return F.gather_nd(v, Tensor(coords, device=v.device))
    raise ValueError(f"For 'diag', the input must be 1-D or 2-D, but got shape {list(v.shape)}.")


def tril(m, k=0):
    """The lower triangle of the last two dims of ``m`` (``np.tril``): 0 above the ``k``-th diagonal."""
    m = _tensor(m)
    if m.ndim == 1:  # NumPy broadcasts a vector to a square matrix first
        m = F.broadcast_to(m, (m.shape[0], m.shape[0]))
    return ops.tril(m, k)


def triu(m, k=0):
    """The upper triangle of the last two dims of ``m`` (``np.triu``): 0 below the ``k``-th diagonal."""
    m = _tensor(m)
    if m.ndim == 1:
        m = F.broadcast_to(m, (m.shape[0], m.shape[0]))
    return ops.triu(m, k)


def outer(a, b):
    """:math:`out_{ij} = a_i b_j` of the flattened inputs (``np.outer``)."""
    return ops.outer(F.reshape(_tensor(a), (-1,)), F.reshape(_tensor(b), (-1,)))


def _vector_norm(x: Tensor, ord, axis: int, keepdims: bool) -> Tensor:  # noqa: A002 (NumPy's name)
    keep = F.reduce_sum_op(keepdims)
    absx = F.abs(x)
    if ord is None or ord == 2:
        return F.sqrt(keep(F.square(x), axis))
    if ord == math.inf:
        return F.reduce_max_op(keepdims)(absx, axis)
    if ord == -math.inf:
        return F.reduce_min_op(keepdims)(absx, axis)
    if ord == 0:
        return keep(F.cast(F.not_equal(x, 0), x.dtype), axis)
    if ord == 1:
        return keep(absx, axis)
    if isinstance(ord, str):
        raise ValueError(f"For 'norm', the 'ord' {ord!r} is not a vector norm.")
    p = float(ord)
    return F.pow(keep(F.pow(absx, p), axis), 1.0 / p)


def _matrix_norm(x: Tensor, ord, axes: tuple, keepdims: bool) -> Tensor:  # noqa: A002 (NumPy's name)
    r, c = axes
    if ord in (None, "fro"):
        out = F.sqrt(F.reduce_sum_op(False)(F.square(x), axes))
    elif ord in (1, -1, math.inf, -math.inf):
        summed, other = (r, c) if ord in (1, -1) else (c, r)  # 1: column sums (over rows); inf: row sums
        sums = F.reduce_sum_op(False)(F.abs(x), summed)
        pick = F.reduce_max_op(False) if ord in (1, math.inf) else F.reduce_min_op(False)
        out = pick(sums, other - (1 if other > summed else 0))
    elif ord in (2, -2, "nuc"):
        rest = [d for d in builtins.range(x.ndim) if d not in axes]
        moved = F.transpose(x, tuple(rest) + (r, c))
        singular = ops.svd(moved, compute_uv=False)
        reduce = {2: F.reduce_max_op(False), -2: F.reduce_min_op(False), "nuc": F.reduce_sum_op(False)}[ord]
        out = reduce(singular, -1)
    else:
        raise ValueError(f"For 'norm', the 'ord' {ord!r} is not a matrix norm.")
    if keepdims:
        shape = list(x.shape)
        shape[r], shape[c] = 1, 1
        out = F.reshape(out, tuple(shape))
    return out


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (NumPy's name)
    """``np.linalg.norm``: with ``axis`` None the 2-norm of the flattened ``x`` when ``ord`` is None (else
    ``x`` must be 1-D or 2-D and ``ord`` applies to it); an int ``axis`` gives vector norms (``ord`` None/2,
    1, inf, -inf, 0 (the count of nonzeros) or any p), a pair of axes matrix norms (None/"fro", "nuc", 1,
    -1, inf, -inf, 2, -2; the last three from the singular values)."""
    x = _tensor(x)
    if x.dtype not in mstype.float_type:
        x = F.cast(x, mstype.float32)
    if axis is None:
        if ord is None:
            out = F.sqrt(F.reduce_sum_op(False)(F.square(x), ()))
            return F.reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim not in (1, 2):
            raise ValueError(f"For 'norm', with an 'ord' and no 'axis' the input must be 1-D or 2-D, got {x.ndim}-D.")
        axis = tuple(builtins.range(x.ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(_axis(a, x.ndim, "norm") for a in axis)
        if len(axes) == 1:
            return _vector_norm(x, ord, axes[0], keepdims)
        if len(axes) != 2 or axes[0] == axes[1]:
            raise ValueError(f"For 'norm', the 'axis' must be an int or two different axes, but got {axis!r}.")
        return _matrix_norm(x, ord, axes, keepdims)
    return _vector_norm(x, ord, _axis(axis, x.ndim, "norm"), keepdims)


# -- array manipulation ----------------------------------------------------------------------------------


def roll(a, shift, axis=None):
    """``a``'s elements shifted cyclically by ``shift`` along ``axis`` (``np.roll``: the flattened array when
    None, then the shape restored; ``shift`` and ``axis`` may be tuples, a scalar shift broadcast to them)."""
    a = _tensor(a)
    if axis is None:
        return F.reshape(ops.roll(F.reshape(a, (-1,)), shift, 0), tuple(a.shape))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"For 'roll', the 'shift' {shift!r} and 'axis' {axis!r} must have one length.")
    total: dict = {}
    for s, ax in zip(shifts, axes):  # NumPy adds the shifts of a repeated axis
        ax = _axis(ax, a.ndim, "roll")
        total[ax] = total.get(ax, 0) + int(s)
    return ops.roll(a, tuple(total.values()), tuple(total.keys()))


def pad(arr, pad_width, mode="constant", constant_values=0):
    """``np.pad`` with ``mode`` "constant" (``constant_values``, a number or per-axis (before, after) pairs),
    "edge", "reflect", "symmetric", "wrap" or "empty" (zeros here); ``pad_width`` an int, a (before, after)
    pair for every axis, or one pair per axis. Concat of the pads, each a Fill or a Gather of ``arr``'s
    indices as NumPy would pad them (so the result differentiates in ``arr``)."""
    arr = _tensor(arr)
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (arr.ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"For 'pad', the 'pad_width' must be non-negative, but got {pad_width!r}.")
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap", "empty"):
        raise ValueError(
            "For 'pad', the 'mode' must be 'constant', 'edge', 'reflect', 'symmetric', 'wrap' or 'empty' in "
            f"opforge, but got {mode!r}."
        )
    values = _np.broadcast_to(_np.asarray(constant_values if mode == "constant" else 0), (arr.ndim, 2))
    out = arr
    for axis in builtins.range(arr.ndim):
        before, after = (int(w) for w in widths[axis])
        if before == 0 and after == 0:
            continue
        n = out.shape[axis]
        if mode in ("constant", "empty"):
            parts = []
            for width, value in ((before, values[axis][0]), (after, values[axis][1])):
                shape = list(out.shape)
                shape[axis] = width
                parts.append(F.fill(out.dtype, tuple(shape), value.item()))
            out = F.concat((parts[0], out, parts[1]), axis)
            continue
        if n == 0:
            raise ValueError(f"For 'pad', mode {mode!r} cannot pad an empty axis {axis}.")
        index = _np.pad(_np.arange(n), (before, after), mode=mode)
        out = F.gather(out, Tensor(index.astype(_np.int64), device=arr.device), axis)
    return out


def copy(a):
    """A new Tensor with ``a``'s data (a number or a sequence made a Tensor)."""
    a = _tensor(a)
    return F.reshape(a, tuple(a.shape)) if a.ndim else F.reshape(F.reshape(a, (1,)), ())


def ravel(x):
    """``x`` flattened (row-major)."""
    return F.reshape(_tensor(x), (-1,))


def swapaxes(x, axis1, axis2):
    return ops.swapaxes(_tensor(x), axis1, axis2)


def _at_least(x: Tensor, ndim: int) -> Tensor:
    if x.ndim >= ndim:
        return x
    shape = (1,) * (ndim - x.ndim) + tuple(x.shape) if ndim == 2 else tuple(x.shape) + (1,) * (ndim - x.ndim)
    return F.reshape(x, shape)


def vstack(tup):
    """The inputs stacked as rows (1-D ones become [1, n]) and concatenated along axis 0."""
    return F.concat(tuple(_at_least(_tensor(t), 2) for t in tup), 0)


def hstack(tup):
    """The inputs concatenated along axis 1 (along axis 0 when they are 1-D)."""
    tensors = tuple(_at_least(_tensor(t), 1) for t in tup)
    return F.concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def meshgrid(*xi, sparse=False, indexing="xy"):
    """Coordinate matrices from 1-D coordinate vectors (``np.meshgrid``): "xy" (Cartesian) or "ij" (matrix)
    indexing; ``sparse`` keeps each output with size 1 in the other dims."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"For 'meshgrid', the 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
    vectors = [F.reshape(_tensor(x), (-1,)) for x in xi]
    n = len(vectors)
    if not sparse:
        return tuple(ops.meshgrid(*vectors, indexing=indexing)) if n > 1 else tuple(vectors)
    out = []
    for i, v in enumerate(vectors):
        shape = [1] * n
        shape[i] = v.shape[0]
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(F.reshape(v, tuple(shape)))
    return tuple(out)
