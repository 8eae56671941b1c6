"""``opforge.numpy``: the common ``mindspore.numpy`` functions networks call, each a thin function over
opforge's primitives (so they run on the CPU and the GPU, are differentiable and are recorded by jit).

Creation: ``zeros``, ``ones``, ``full``, ``zeros_like``, ``ones_like``, ``full_like``, ``empty``, ``arange``,
``linspace``, ``eye``, ``array``/``asarray``. Shape: ``reshape``, ``transpose``, ``expand_dims``, ``squeeze``,
``concatenate``, ``stack``, ``split``, ``tile``, ``repeat``, ``flip``, ``broadcast_to``. Math: ``add``, ``subtract``,
``multiply``, ``divide``, ``true_divide``, ``power``, ``negative``, ``abs``/``absolute``, ``exp``, ``log``,
``sqrt``, ``square``, ``maximum``, ``minimum``, ``clip``, ``where``, ``matmul``, ``dot``. Reductions: ``sum``,
``mean``, ``max``/``amax``, ``min``/``amin``, ``prod``, ``argmax``, ``argmin``, ``cumsum``. Tests: ``isnan``,
``isfinite``. In opforge/numpy/extended.py: the dtype names and constants, ``sign``, ``around``/``round``,
``cos``, ``sin``, ``tan``, ``tanh``, ``floor``, ``ceil``, ``reciprocal``, ``remainder``, the comparisons,
``isinf``, ``diag``, ``tril``, ``triu``, ``outer``, ``norm``, ``roll``, ``pad``, ``copy``, ``ravel``,
``swapaxes``, ``vstack``, ``hstack``, ``meshgrid``. In opforge/numpy/array_ext.py: ``rand``, ``take_along_axis``,
``unravel_index``, ``array_split``, ``column_stack``, ``floor_divide``.

Not here yet (MindSpore has them): the FFT, random, set and sorting families, the rest of linear algebra,
``histogram`` and most of the less common element-wise functions. ``dtype`` arguments accept opforge
dtypes, NumPy dtypes and their names ("float32").
"""

from __future__ import annotations

import builtins

import numpy as _np

from opforge import dtype as mstype
from opforge import ops
from opforge.numpy import array_ext as _array_ext
from opforge.numpy import extended as _extended
from opforge.numpy.array_ext import *  # noqa: F403 (rand, take_along_axis, unravel_index, array_split, ...)
from opforge.numpy.extended import *  # noqa: F403 (dtype names, constants, diag, roll, pad, norm, ...)
from opforge.ops import functional as F
from opforge.tensor import Tensor

__all__ = [
    "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "empty", "arange", "linspace", "eye",
    "array", "asarray", "reshape", "transpose", "expand_dims", "squeeze", "concatenate", "stack",
    "tile", "repeat", "flip", "broadcast_to", "add", "subtract", "multiply", "divide", "true_divide", "power",
    "negative", "abs", "absolute", "exp", "log", "sqrt", "square", "maximum", "minimum", "clip", "where",
    "matmul", "dot", "sum", "mean", "max", "amax", "min", "amin", "prod", "argmax", "argmin", "cumsum",
    "isnan", "isfinite", *_extended.__all__, *_array_ext.__all__,
]  # fmt: skip

_fill = ops.Fill()


def _dtype(dtype, default=mstype.float32):
    return default if dtype is None else mstype.to_dtype(dtype)


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(int(d) for d in shape)


# -- creation ----------------------------------------------------------------------------------------


def full(shape, fill_value, dtype=None):
    """A Tensor of ``shape`` filled with ``fill_value`` (the Fill primitive)."""
    if dtype is None:
        dtype = mstype.bool_ if isinstance(fill_value, bool) else (
            mstype.int32 if isinstance(fill_value, int) else mstype.float32
        )  # fmt: skip
    return _fill(_dtype(dtype), _shape(shape), fill_value)


def zeros(shape, dtype=mstype.float32):
    return full(shape, 0, _dtype(dtype))


def ones(shape, dtype=mstype.float32):
    return full(shape, 1, _dtype(dtype))


def empty(shape, dtype=mstype.float32):
    """As MindSpore's: a Tensor of ``shape`` (zero-filled, so no uninitialised memory is ever read)."""
    return zeros(shape, dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def array(obj, dtype=None, copy=True, ndmin=0):
    """A Tensor from a Python sequence, a NumPy array or a Tensor."""
    if isinstance(obj, Tensor):
        out = obj if dtype is None else F.cast(obj, _dtype(dtype))
    else:
        data = _np.array(obj, copy=True, ndmin=ndmin)
        if dtype is None and data.dtype == _np.float64:
            data = data.astype(_np.float32)  # MindSpore's default float type
        out = Tensor(data) if dtype is None else Tensor(data, dtype=_dtype(dtype))
    for _ in builtins.range(ndmin - out.ndim):
        out = F.expand_dims(out, 0)
    return out


def asarray(a, dtype=None):
    return array(a, dtype, copy=False)


def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in [start, stop) (the Range primitive)."""
    out = F.range(start, stop, step)
    return out if dtype is None else F.cast(out, _dtype(dtype))


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    values = _np.linspace(start, stop, int(num), endpoint=endpoint)
    return Tensor(values.astype(_dtype(dtype).np_dtype))


def eye(N, M=None, k=0, dtype=mstype.float32):  # noqa: N803 (NumPy's names)
    return Tensor(_np.eye(N, M, k).astype(_dtype(dtype).np_dtype))


# -- shapes ------------------------------------------------------------------------------------------


def reshape(x, newshape):
    return F.reshape(x, _shape(newshape))


def transpose(a, axes=None):
    axes = tuple(builtins.range(a.ndim - 1, -1, -1)) if axes is None else tuple(axes)
    return F.transpose(a, axes)


def expand_dims(a, axis):
    return F.expand_dims(a, axis)


def squeeze(a, axis=None):
    return F.squeeze(a, () if axis is None else axis)


def concatenate(arrays, axis=0):
    """MindSpore's ``mindspore.numpy.concatenate``: the arrays joined along ``axis``, first cast to their
    promoted dtype when they differ (float16 with float32 gives float32; Concat itself takes one dtype).
    ``axis`` None (or 32 and more, NumPy's limit on dims) joins them flattened; a single Tensor is the
    sequence of its slices along dim 0."""
    flat = axis is None or axis >= _MAX_DIMS
    if isinstance(arrays, Tensor):
        if flat:
            return F.reshape(arrays, (-1,))
        shape = arrays.shape
        axis = _norm_axis_of(axis, len(shape) - 1)
        order = (*builtins.range(1, axis + 1), 0, *builtins.range(axis + 1, len(shape)))
        joined = (*shape[1 : axis + 1], shape[0] * shape[axis + 1], *shape[axis + 2 :])
        return F.reshape(F.transpose(arrays, order), joined)
    arrays = tuple(arrays)
    if flat:
        arrays, axis = tuple(F.reshape(a, (-1,)) for a in arrays), -1
    elif len(arrays) == 1:
        return arrays[0]
    dtype = mstype.result_type(tuple(a.dtype for a in arrays))
    return F.concat(tuple(a if a.dtype is dtype else F.cast(a, dtype) for a in arrays), axis)


_MAX_DIMS = 32


def _norm_axis_of(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"For 'concatenate', the 'axis' must be in [{-ndim}, {ndim}), but got {axis}.")
    return axis + ndim if axis < 0 else axis


def stack(arrays, axis=0):
    return F.stack(tuple(arrays), axis)


def tile(a, reps):
    return F.tile(a, _shape(reps))


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times (an int, or one count per element along ``axis``), along
    ``axis`` (the flattened array when None): a Gather of the repeated indices, so the gradient sums the
    copies back."""
    if axis is None:
        a, axis = F.reshape(a, (-1,)), 0
    axis = axis + a.ndim if axis < 0 else axis
    counts = _np.asarray(repeats)
    if counts.dtype.kind not in "iu" or (counts < 0).any() or counts.ndim > 1:
        raise ValueError(f"For 'repeat', the 'repeats' must be non-negative ints, but got {repeats!r}.")
    index = _np.repeat(_np.arange(a.shape[axis]), counts)
    return F.gather(a, Tensor(index.astype(_np.int32)), axis)


def flip(m, axis=None):
    return F.flip(m, tuple(builtins.range(m.ndim)) if axis is None else axis)


def broadcast_to(array, shape):  # noqa: A002 (NumPy's name)
    return F.broadcast_to(array, shape)


# -- math --------------------------------------------------------------------------------------------

add, subtract, multiply, divide = F.add, F.sub, F.mul, F.div
true_divide = divide
negative, exp, log, sqrt, square = F.neg, F.exp, F.log, F.sqrt, F.square
maximum, minimum = F.maximum, F.minimum
_pow, _abs = ops.Pow(), ops.Abs()
_select, _isnan, _isfinite = ops.Select(), ops.IsNan(), ops.IsFinite()


def power(x1, x2):
    return _pow(x1, x2)


def abs(x):  # noqa: A001 (NumPy's name)
    return _abs(x)


absolute = abs


def clip(x, xmin, xmax, dtype=None):
    """``mindspore.numpy.clip(x, xmin, xmax, dtype=None)``: the result cast to ``dtype`` when one is given."""
    out = F.clip_by_value(x, xmin, xmax)
    return out if dtype is None else F.cast(out, dtype)


def where(condition, x, y):
    return _select(condition, x, y)


def matmul(x1, x2, dtype=None):
    """``mindspore.numpy.matmul(x1, x2, dtype=None)``: ``np.matmul``, the result cast to ``dtype`` when one is given."""
    out = F.matmul(x1, x2)
    return out if dtype is None else F.cast(out, dtype)


def dot(a, b):
    return matmul(a, b)


def isnan(x):
    return _isnan(x)


def isfinite(x):
    return _isfinite(x)


# -- reductions --------------------------------------------------------------------------------------


def _axis(axis):
    return () if axis is None else axis


def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001 (NumPy's name)
    out = F.reduce_sum_op(keepdims)(a, _axis(axis))
    return out if dtype is None else F.cast(out, _dtype(dtype))


def mean(a, axis=None, dtype=None, keepdims=False):
    out = F.reduce_mean_op(keepdims)(a, _axis(axis))
    return out if dtype is None else F.cast(out, _dtype(dtype))


def amax(a, axis=None, keepdims=False):
    return F.reduce_max_op(keepdims)(a, _axis(axis))


def amin(a, axis=None, keepdims=False):
    return F.reduce_min_op(keepdims)(a, _axis(axis))


max = amax  # noqa: A001 (NumPy's name)
min = amin  # noqa: A001 (NumPy's name)


def prod(a, axis=None, keepdims=False):
    return F.reduce_prod_op(keepdims)(a, _axis(axis))


def argmax(a, axis=None):
    return F.argmax(reshape(a, (-1,)) if axis is None else a, -1 if axis is None else axis)


def argmin(a, axis=None):
    return F.argmin(reshape(a, (-1,)) if axis is None else a, -1 if axis is None else axis)


def cumsum(a, axis=None, dtype=None):
    out = F.cumsum(reshape(a, (-1,)) if axis is None else a, 0 if axis is None else axis)
    return out if dtype is None else F.cast(out, _dtype(dtype))
