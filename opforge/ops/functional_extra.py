"""MindSpore 2.x functional ops that are compositions of existing primitives (no kernel of their own).

Each follows MindSpore's signature (argument names, order and defaults) and is built from primitives that
have CPU and GPU kernels, a bprop and a batching rule, so the ops differentiate, run under ``vmap`` and
``jit`` and on both backends. Constants (masks, index grids) are computed on the host from the static
shapes. Grouped as: reductions with indices (``max``, ``min``, ``median``, ``argsort``), matrices
(``tril``, ``triu``, ``eye``, ``diag``, ``trace``, ``dot``, ``outer``, ``inner``, ``addmm``, ``baddbmm``,
``kron``, ``cross``), distances (``cdist``, ``dist``, ``cosine_similarity``), element-wise math
(``isclose``, ``allclose``, ``isinf``, ``nan_to_num``, ``log2``, ``log10``, ``hypot``, ``lerp``,
``addcmul``, ``addcdiv``, ``div_no_nan``), statistics (``logsumexp``, ``std``, ``var``, ``std_mean``,
``var_mean``, ``count_nonzero``), data movement (``roll``, ``chunk``, ``unbind``, ``narrow``,
``index_select``, ``gather_elements``, ``swapaxes``, ``moveaxis``, ``repeat_interleave``), creation
(``logspace``, ``scalar_to_tensor``), activations (``softmin``,
``glu``), normalisation (``layer_norm``, ``batch_norm``, ``group_norm``), data-dependent shapes read on the
host (``nonzero``, ``masked_select``, ``bincount``) and sorted searches (``searchsorted``, ``bucketize``).
Their operator-class
spellings (``ops.Tril``, ``ops.GatherD``, ...) are in opforge/ops/frontend_ops.py.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from opforge import dtype as mstype
from opforge.bprop.grad_operation import stop_gradient
from opforge.ops import functional as F
from opforge.primitives import array_ops, nn_ops
from opforge.tensor import Tensor

__all__ = [
    "max", "min", "median", "argsort", "tril", "triu", "eye", "diag", "trace", "roll", "chunk", "unbind",
    "narrow", "index_select", "gather_elements", "gather_d", "dot", "outer", "inner", "addmm", "baddbmm",
    "kron", "cross", "cdist", "dist", "cosine_similarity", "isclose", "allclose", "isinf", "nan_to_num",
    "logsumexp", "log2", "log10", "hypot", "lerp", "addcmul", "addcdiv", "std", "var", "std_mean", "var_mean",
    "count_nonzero", "swapaxes", "moveaxis", "div_no_nan", "scalar_to_tensor", "logspace",
    "repeat_interleave", "softmin", "glu", "layer_norm", "batch_norm", "group_norm", "nonzero", "masked_select",
    "bincount", "searchsorted", "bucketize",
]  # fmt: skip

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


# -- argument checks -----------------------------------------------------------------------------------


def _tensor(op: str, name: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _int(op: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{op}', the '{name}' must be an int, but got {type(value).__name__}.")
    return int(value)


def _bool(op: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{op}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _number(op: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"For '{op}', the '{name}' must be a number, but got {type(value).__name__}.")
    return value


def _axis(op: str, name: str, axis, ndim: int) -> int:
    """``axis`` in [-ndim, ndim) as a non-negative int (a 0-D tensor has the one axis -1/0)."""
    axis = _int(op, name, axis)
    n = builtins.max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError(f"For '{op}', the '{name}' must be in [{-n}, {n}), but got {axis}.")
    return axis % n


def _axes(op: str, name: str, axis, ndim: int) -> tuple:
    """``axis`` (None: every dim; an int; a tuple or list) as a sorted tuple of non-negative ints."""
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return tuple(builtins.range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(_axis(op, name, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"For '{op}', the '{name}' has a repeated axis: {axis!r}.")
        return tuple(sorted(axes))
    return (_axis(op, name, axis, ndim),)


def _float(op: str, name: str, x: Tensor) -> Tensor:
    if x.dtype not in _FLOATS:
        raise TypeError(
            f"For '{op}', the '{name}' must be a Tensor of float16, bfloat16, float32 or float64, but got {x.dtype}."
        )
    return x


def _const(array: np.ndarray, like: Tensor) -> Tensor:
    """A host-computed constant on ``like``'s device."""
    return Tensor(array, device=like.device)


def _zeros(x: Tensor, shape=None) -> Tensor:
    return F.fill(x.dtype, tuple(x.shape) if shape is None else tuple(shape), 0)


def _slice_axis(x: Tensor, axis: int, start: int, length: int) -> Tensor:
    begin = [0] * x.ndim
    size = list(x.shape)
    begin[axis], size[axis] = start, length
    return F.slice_(x, tuple(begin), tuple(size))


def _keep(x: Tensor, axes: tuple, ndim: int) -> Tensor:
    """``x`` reduced without keepdims, with its reduced ``axes`` put back as size-1 dims."""
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return F.reshape(x, tuple(shape)) if len(shape) == ndim else x


# -- reductions with indices ----------------------------------------------------------------------------


def _extreme(op: str, reduce, arg_prim, better, input, axis, keepdims, initial, where):  # noqa: A002
    x = _tensor(op, "input", input)
    _bool(op, "keepdims", keepdims)
    if initial is not None:
        _number(op, "initial", initial)
    if where is not None:
        if initial is None:
            raise ValueError(f"For '{op}', the 'initial' must be given with 'where'.")
        x = F.where(_tensor(op, "where", where), x, F.fill(x.dtype, tuple(x.shape), initial))
    if axis is None:
        values = reduce(False)(x, ())
        index = F.fill(mstype.int32, (), 0)  # MindSpore documents the index as 0 when axis is None
    else:
        axis = _axis(op, "axis", axis, x.ndim)
        if x.ndim == 0:
            values, index = x, F.fill(mstype.int32, (), 0)
        else:
            values = reduce(keepdims)(x, axis)
            index = arg_prim(axis)(x)
            if keepdims:
                index = F.expand_dims(index, axis)
    if initial is not None:
        values = F.cast(better(values, initial), x.dtype)
    return values, index


@functools.cache
def _argmax32(axis: int):
    return array_ops.Argmax(axis, mstype.int32)


@functools.cache
def _argmin32(axis: int):
    return array_ops.Argmin(axis, mstype.int32)


def max(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001, A002 (MindSpore's names)
    r"""MindSpore 2's ``ops.max``: ``(values, index)``, the largest value along ``axis`` and its (first)
    index (int32), :math:`values = \max_{axis} x`. ``axis`` None: the maximum of every element, with index 0
    (as MindSpore documents). ``initial``: a lower bound of the result; ``where`` (bool, with ``initial``):
    the elements that take part (the others read as ``initial``). The values are differentiable.
    dtypes: float16, bfloat16, float32, float64, int8-int64, uint8-uint64 (not bool or complex)."""
    return _extreme("max", F.reduce_max_op, _argmax32, F.maximum, input, axis, keepdims, initial, where)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001, A002 (MindSpore's names)
    r"""MindSpore 2's ``ops.min``: ``(values, index)``, the smallest value along ``axis`` and its (first)
    index (int32), :math:`values = \min_{axis} x`; ``axis`` None: over every element, index 0. ``initial``:
    an upper bound of the result; ``where`` as in ``ops.max``. dtypes as ``ops.max``."""
    return _extreme("min", F.reduce_min_op, _argmin32, F.minimum, input, axis, keepdims, initial, where)


def argsort(input, axis=-1, descending=False):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.argsort``: the int32 indices that sort ``input`` along ``axis`` (ascending, or
    descending; stable, NaN last ascending): ``ops.sort(input, axis, descending)[1]``.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8."""
    x = _tensor("argsort", "input", input)
    axis = _axis("argsort", "axis", axis, x.ndim)
    return F.sort(x, axis, _bool("argsort", "descending", descending))[1]


def median(input, axis=-1, keepdims=False):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.median``: ``(y, indices)``, the median along ``axis`` and its index (int64). For
    an even count it is the lower of the two middle values (:math:`y = sorted(x)_{\lfloor (n - 1) / 2 \rfloor}`),
    as MindSpore's CPU and GPU kernels; ties pick the index that a stable sort puts there. Differentiable
    (Sort and Slice). dtypes: int16, int32, int64, float32, float64 (and float16, bfloat16)."""
    x = _tensor("median", "input", input)
    axis = _axis("median", "axis", axis, x.ndim)
    _bool("median", "keepdims", keepdims)
    if x.ndim == 0:
        return x, F.fill(mstype.int64, (), 0)
    n = x.shape[axis]
    if n == 0:
        raise ValueError(f"For 'median', the dim {axis} of 'input' is empty: there is no median.")
    values, indices = F.sort(x, axis, False)
    k = (n - 1) // 2
    y, i = _slice_axis(values, axis, k, 1), F.cast(_slice_axis(indices, axis, k, 1), mstype.int64)
    if not keepdims:
        y, i = F.squeeze(y, (axis,)), F.squeeze(i, (axis,))
    return y, i


# -- matrices --------------------------------------------------------------------------------------------


def _triangle(op: str, input, diagonal, upper: bool):  # noqa: A002
    x = _tensor(op, "input", input)
    diagonal = _int(op, "diagonal", diagonal)
    if x.ndim < 2:
        raise ValueError(f"For '{op}', the 'input' must have at least 2 dims, but got shape {list(x.shape)}.")
    rows, cols = x.shape[-2], x.shape[-1]
    keep = np.triu(np.ones((rows, cols), bool), diagonal) if upper else np.tril(np.ones((rows, cols), bool), diagonal)
    mask = F.broadcast_to(_const(keep, x), tuple(x.shape))
    return F.select(mask, x, _zeros(x))


def tril(input, diagonal=0):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.tril``: the lower triangle of the last two dims of ``input`` (rank >= 2), the
    rest 0: :math:`out_{..., i, j} = x_{..., i, j}` if :math:`j - i \le diagonal`, else 0 (Select with a
    host mask). dtypes: all (bool and numbers)."""
    return _triangle("tril", input, diagonal, False)


def triu(input, diagonal=0):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.triu``: the upper triangle, :math:`x_{..., i, j}` if :math:`j - i \ge diagonal`,
    else 0. dtypes: all."""
    return _triangle("triu", input, diagonal, True)


def eye(n, m=None, dtype=None):
    """MindSpore's ``ops.eye``: the [n, m] (m defaults to n) identity matrix, ones on the main diagonal,
    of ``dtype`` (float32 by default; any number type or bool). A constant: nothing to differentiate."""
    n = _int("eye", "n", n)
    m = n if m is None else _int("eye", "m", m)
    if n < 0 or m < 0:
        raise ValueError(f"For 'eye', the 'n' and 'm' must be >= 0, but got {n} and {m}.")
    dtype = mstype.float32 if dtype is None else mstype.to_dtype(dtype)
    return Tensor(np.eye(n, m, dtype=dtype.np_dtype), dtype=dtype)


def diag(input):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.diag``: from ``input`` of shape :math:`(D_1, ..., D_k)` (k >= 1) the tensor of
    shape :math:`(D_1, ..., D_k, D_1, ..., D_k)` with :math:`out[i_1..i_k, i_1..i_k] = input[i_1..i_k]` and
    0 elsewhere (Select of the flattened input against a host identity mask). dtypes: all."""
    x = _tensor("diag", "input", input)
    if x.ndim < 1:
        raise ValueError("For 'diag', the 'input' must have at least 1 dim, but got a scalar.")
    shape = tuple(x.shape)
    p = int(np.prod(shape, dtype=np.int64))
    flat = F.broadcast_to(F.reshape(x, (p, 1)), (p, p))
    out = F.select(_const(np.eye(p, dtype=bool), x), flat, _zeros(x, (p, p)))
    return F.reshape(out, shape + shape)


def trace(input):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.trace``: the sum of the main diagonal of a 2-D ``input``,
    :math:`\sum_i x_{i, i}`, of ``input``'s dtype. dtypes: float16, bfloat16, float32, float64, int8-int64,
    uint8-uint64."""
    x = _tensor("trace", "input", input)
    if x.ndim != 2:
        raise ValueError(f"For 'trace', the 'input' must be 2-D, but got shape {list(x.shape)}.")
    mask = _const(np.eye(x.shape[0], x.shape[1], dtype=bool), x)
    return F.reduce_sum_op(False)(F.select(mask, x, _zeros(x)), ())


def dot(input=None, other=None, *, x1=None, x2=None):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.dot``: the contraction of the last dim of ``input`` with the second-last of
    ``other`` (both of rank >= 2, the same dtype), :math:`out[a, b, c] = \sum_k input[a, k] \, other[b, k, c]`
    with ``a`` the leading dims of ``input``, ``b`` those of ``other`` before its last two and ``c`` its last;
    the shape is ``input.shape[:-1] + other.shape[:-2] + other.shape[-1:]`` (MatMul of the flattened
    operands). dtypes: float16, bfloat16, float32, float64. The keyword-only ``x1`` and ``x2`` are MindSpore
    1.x's names of ``input`` and ``other`` (``dot(x1, x2)``): ``dot(x1=a, x2=b)`` is ``dot(a, b)``."""
    for name, value, old, old_value in (("input", input, "x1", x1), ("other", other, "x2", x2)):
        if value is not None and old_value is not None:
            raise TypeError(f"For 'dot', got both '{name}' and '{old}' (its MindSpore 1.x name): give one.")
        if value is None and old_value is None:
            raise TypeError(f"For 'dot', the '{name}' (MindSpore 1.x: '{old}') is missing.")
    a = _tensor("dot", "input", input if x1 is None else x1)
    b = _tensor("dot", "other", other if x2 is None else x2)
    for name, t in (("input", a), ("other", b)):
        _float("dot", name, t)
        if t.ndim < 2:
            raise ValueError(f"For 'dot', the '{name}' must have at least 2 dims, but got shape {list(t.shape)}.")
    if a.dtype != b.dtype:
        raise TypeError(f"For 'dot', the 'input' and 'other' must have one dtype, but got {a.dtype} and {b.dtype}.")
    k = a.shape[-1]
    if b.shape[-2] != k:
        raise ValueError(
            f"For 'dot', the last dim of 'input' ({k}) must equal the second-last dim of 'other' ({b.shape[-2]})."
        )
    perm = (b.ndim - 2, *builtins.range(b.ndim - 2), b.ndim - 1)
    b2 = F.reshape(F.transpose(b, perm), (k, -1))
    out = F.matmul(F.reshape(a, (-1, k)), b2)
    return F.reshape(out, tuple(a.shape[:-1]) + tuple(b.shape[:-2]) + (b.shape[-1],))


def outer(input, vec2):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.outer``: the outer product of two 1-D tensors, :math:`out_{i, j} = input_i \cdot
    vec2_j` (Mul of a column by a row). dtypes: numbers (as Mul)."""
    a, b = _tensor("outer", "input", input), _tensor("outer", "vec2", vec2)
    for name, t in (("input", a), ("vec2", b)):
        if t.ndim != 1:
            raise ValueError(f"For 'outer', the '{name}' must be 1-D, but got shape {list(t.shape)}.")
    return F.mul(F.reshape(a, (-1, 1)), F.reshape(b, (1, -1)))


def inner(input, other):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.inner``: the sum of products over the last dims,
    :math:`out[a, b] = \sum_k input[a, k] \, other[b, k]`, shape ``input.shape[:-1] + other.shape[:-1]``;
    a 0-D operand multiplies the other. dtypes: float16, bfloat16, float32, float64, int32, int64."""
    a, b = _tensor("inner", "input", input), _tensor("inner", "other", other)
    if a.ndim == 0 or b.ndim == 0:
        return F.mul(a, b)
    k = a.shape[-1]
    if b.shape[-1] != k:
        raise ValueError(f"For 'inner', the last dims of 'input' ({k}) and 'other' ({b.shape[-1]}) must be equal.")
    out = F.matmul(F.reshape(a, (-1, k)), F.transpose(F.reshape(b, (-1, k)), (1, 0)))
    return F.reshape(out, tuple(a.shape[:-1]) + tuple(b.shape[:-1]))


def _scaled(x, factor):
    return x if (not isinstance(factor, Tensor) and factor == 1) else F.mul(x, factor)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.addmm``: :math:`out = \beta \, input + \alpha \, (mat1 @ mat2)`, ``mat1`` [n, m],
    ``mat2`` [m, p], ``input`` broadcastable to [n, p]. dtypes: float16, bfloat16, float32, float64, int32,
    int64 (as MatMul)."""
    x, a, b = (_tensor("addmm", n, t) for n, t in (("input", input), ("mat1", mat1), ("mat2", mat2)))
    for name, t in (("mat1", a), ("mat2", b)):
        if t.ndim != 2:
            raise ValueError(f"For 'addmm', the '{name}' must be 2-D, but got shape {list(t.shape)}.")
    return F.add(_scaled(x, beta), _scaled(F.matmul(a, b), alpha))


def baddbmm(input, batch1, batch2, beta=1, alpha=1):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.baddbmm``: :math:`out_i = \beta \, input_i + \alpha \, (batch1_i @ batch2_i)`,
    ``batch1`` [b, n, m], ``batch2`` [b, m, p], ``input`` broadcastable to [b, n, p] (BatchMatMul).
    dtypes: float16, bfloat16, float32, float64, int32, int64."""
    x, a, b = (_tensor("baddbmm", n, t) for n, t in (("input", input), ("batch1", batch1), ("batch2", batch2)))
    for name, t in (("batch1", a), ("batch2", b)):
        if t.ndim != 3:
            raise ValueError(f"For 'baddbmm', the '{name}' must be 3-D, but got shape {list(t.shape)}.")
    return F.add(_scaled(x, beta), _scaled(F.bmm(a, b), alpha))


def kron(input, other):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.kron``: the Kronecker product, :math:`out[i \cdot B + j] = input[i] \cdot other[j]`
    per dim (the operands padded with leading 1-dims to one rank; ``np.kron``): Mul of interleaved
    reshapes. dtypes: numbers (as Mul)."""
    a, b = _tensor("kron", "input", input), _tensor("kron", "other", other)
    n = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + tuple(a.shape)
    sb = (1,) * (n - b.ndim) + tuple(b.shape)
    ra = F.reshape(a, tuple(v for d in sa for v in (d, 1)))
    rb = F.reshape(b, tuple(v for d in sb for v in (1, d)))
    return F.reshape(F.mul(ra, rb), tuple(x * y for x, y in zip(sa, sb)))


def cross(input, other, dim=None):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.cross``: the cross product of 3-vectors along ``dim`` (None: the first dim of
    size 3), :math:`out = (a_1 b_2 - a_2 b_1, a_2 b_0 - a_0 b_2, a_0 b_1 - a_1 b_0)`, the operands
    broadcast to one shape. dtypes: float16, bfloat16, float32, float64, int8-int64 (Mul and Sub)."""
    a, b = _tensor("cross", "input", input), _tensor("cross", "other", other)
    if a.dtype != b.dtype:
        raise TypeError(f"For 'cross', the 'input' and 'other' must have one dtype, but got {a.dtype} and {b.dtype}.")
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    a, b = (F.broadcast_to(t, shape) if tuple(t.shape) != shape else t for t in (a, b))
    if dim is None:
        dim = next((i for i, d in enumerate(shape) if d == 3), None)
        if dim is None:
            raise ValueError(f"For 'cross', no dim of the shape {list(shape)} has size 3.")
    dim = _axis("cross", "dim", dim, len(shape))
    if shape[dim] != 3:
        raise ValueError(f"For 'cross', the dim {dim} must have size 3, but the shape is {list(shape)}.")
    a0, a1, a2 = (_slice_axis(a, dim, i, 1) for i in builtins.range(3))
    b0, b1, b2 = (_slice_axis(b, dim, i, 1) for i in builtins.range(3))
    parts = (
        F.sub(F.mul(a1, b2), F.mul(a2, b1)),
        F.sub(F.mul(a2, b0), F.mul(a0, b2)),
        F.sub(F.mul(a0, b1), F.mul(a1, b0)),
    )
    return F.concat(parts, dim)


# -- distances -------------------------------------------------------------------------------------------


def _p_norm(op: str, diff: Tensor, p, axes: tuple, keep: bool = False) -> Tensor:
    """The p-norm of ``diff`` over ``axes``: p = 0 counts the non-zeros, inf the largest magnitude."""
    p = float(_number(op, "p", p))
    if p < 0:
        raise ValueError(f"For '{op}', the 'p' must be >= 0, but got {p}.")
    if p == 0:
        return F.reduce_sum_op(keep)(F.cast(F.not_equal(diff, 0), diff.dtype), axes)
    magnitude = F.abs(diff)
    if p == math.inf:
        return F.reduce_max_op(keep)(magnitude, axes)
    if p == 1:
        return F.reduce_sum_op(keep)(magnitude, axes)
    if p == 2:
        return F.sqrt(F.reduce_sum_op(keep)(F.square(diff), axes))
    return F.pow(F.reduce_sum_op(keep)(F.pow(magnitude, p), axes), 1.0 / p)


def cdist(x1, x2, p=2.0):
    r"""MindSpore's ``ops.cdist``: the p-norm distance between each row of ``x1`` [B, P, M] (or [P, M]) and
    each row of ``x2`` [B, R, M] (or [R, M]), :math:`out_{b, i, j} = \lVert x1_{b, i} - x2_{b, j} \rVert_p`,
    shape [B, P, R]; ``p`` >= 0 (0: the count of differing coordinates, inf: the largest difference).
    Broadcast Sub, then the norm's reduction; the gradient of p = 2 at a zero distance is NaN (as sqrt's).
    dtypes: float16, bfloat16, float32, float64."""
    a, b = _float("cdist", "x1", _tensor("cdist", "x1", x1)), _float("cdist", "x2", _tensor("cdist", "x2", x2))
    if a.ndim not in (2, 3) or b.ndim != a.ndim:
        raise ValueError(
            f"For 'cdist', the 'x1' and 'x2' must both be 2-D or both 3-D, but got shapes {list(a.shape)} and "
            f"{list(b.shape)}."
        )
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"For 'cdist', the last dims of 'x1' ({a.shape[-1]}) and 'x2' ({b.shape[-1]}) must match.")
    diff = F.sub(F.expand_dims(a, -2), F.expand_dims(b, -3))
    return _p_norm("cdist", diff, p, (diff.ndim - 1,))


def dist(input, other, p=2):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.dist``: the p-norm of ``input - other`` (broadcast) over every element, a 0-D
    tensor: :math:`(\sum |x - y|^p)^{1/p}`; p = 0 counts the non-zeros, inf takes the largest.
    dtypes: float16, bfloat16, float32, float64."""
    a = _float("dist", "input", _tensor("dist", "input", input))
    b = _float("dist", "other", _tensor("dist", "other", other))
    diff = F.sub(a, b)
    return _p_norm("dist", diff, p, tuple(builtins.range(diff.ndim)))


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    r"""MindSpore's ``ops.cosine_similarity``: along ``dim``,
    :math:`\frac{x1 \cdot x2}{\max(\lVert x1 \rVert_2 \cdot \lVert x2 \rVert_2, \epsilon)}` (the operands
    broadcast). dtypes: float16, bfloat16, float32, float64."""
    a = _float("cosine_similarity", "x1", _tensor("cosine_similarity", "x1", x1))
    b = _float("cosine_similarity", "x2", _tensor("cosine_similarity", "x2", x2))
    eps = float(_number("cosine_similarity", "eps", eps))
    ndim = builtins.max(a.ndim, b.ndim)
    dim = _axis("cosine_similarity", "dim", dim, ndim)
    dot_ = F.reduce_sum_op(False)(F.mul(a, b), dim)
    na = F.reduce_sum_op(False)(F.square(a), dim)
    nb = F.reduce_sum_op(False)(F.square(b), dim)
    return F.div(dot_, F.maximum(F.sqrt(F.mul(na, nb)), eps))


# -- element-wise math -----------------------------------------------------------------------------------


def _isinf(x: Tensor) -> Tensor:
    if x.dtype not in _FLOATS:
        return F.fill(mstype.bool_, tuple(x.shape), False)
    return F.logical_and(F.logical_not(F.isfinite(x)), F.logical_not(F.isnan(x)))


def isinf(input):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.isinf``: a bool tensor, True where ``input`` is +inf or -inf (not finite and not
    NaN); all False for integer and bool inputs. dtypes: bool, integers, float16, bfloat16, float32, float64."""
    return _isinf(_tensor("isinf", "input", input))


def _as_float(x: Tensor) -> Tensor:
    return x if x.dtype in _FLOATS else F.cast(x, mstype.float64 if x.dtype == mstype.int64 else mstype.float32)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.isclose``: a bool tensor, :math:`|input - other| \le atol + rtol \cdot |other|`
    element-wise (broadcast), True where the two are equal (infinities of one sign included), and where
    both are NaN when ``equal_nan``. Integers are compared in floating point. dtypes: bool, integers,
    float16, bfloat16, float32, float64."""
    a, b = _tensor("isclose", "input", input), _tensor("isclose", "other", other)
    rtol, atol = _number("isclose", "rtol", rtol), _number("isclose", "atol", atol)
    _bool("isclose", "equal_nan", equal_nan)
    if rtol < 0 or atol < 0:
        raise ValueError(f"For 'isclose', the 'rtol' and 'atol' must be >= 0, but got {rtol} and {atol}.")
    if a.dtype == mstype.bool_ or b.dtype == mstype.bool_:
        a, b = F.cast(a, mstype.float32), F.cast(b, mstype.float32)
    af, bf = _as_float(a), _as_float(b)
    if af.dtype != bf.dtype:
        wide = mstype.float64 if mstype.float64 in (af.dtype, bf.dtype) else mstype.float32
        af, bf = F.cast(af, wide), F.cast(bf, wide)
    close = F.less_equal(F.abs(F.sub(af, bf)), F.add(F.mul(F.abs(bf), float(rtol)), float(atol)))
    close = F.logical_or(F.equal(af, bf), F.logical_and(close, F.isfinite(F.sub(af, bf))))
    if equal_nan:
        close = F.logical_or(close, F.logical_and(F.isnan(af), F.isnan(bf)))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``allclose`` (``Tensor.allclose``, ``mint.allclose``): whether ``isclose`` holds for
    every element, as a 0-D bool tensor (ReduceAll; ``bool(...)`` reads it). dtypes as ``isclose``."""
    return F.reduce_all_op(False)(isclose(input, other, rtol, atol, equal_nan), ())


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.nan_to_num``: ``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf
    by ``neginf`` (None: the largest and the lowest finite value of the dtype); Select, so the gradient
    flows to the finite elements. dtypes: float16, bfloat16, float32, float64."""
    x = _float("nan_to_num", "input", _tensor("nan_to_num", "input", input))
    info = np.finfo(np.float32 if x.dtype == mstype.bfloat16 else x.dtype.np_dtype)
    if x.dtype == mstype.bfloat16:
        info_max = 3.3895313892515355e38
    else:
        info_max = float(info.max)
    nan = float(_number("nan_to_num", "nan", nan))
    posinf = info_max if posinf is None else float(_number("nan_to_num", "posinf", posinf))
    neginf = -info_max if neginf is None else float(_number("nan_to_num", "neginf", neginf))
    shape = tuple(x.shape)
    inf = _isinf(x)
    out = F.select(F.isnan(x), F.fill(x.dtype, shape, nan), x)
    out = F.select(F.logical_and(inf, F.greater(x, 0.0)), F.fill(x.dtype, shape, posinf), out)
    return F.select(F.logical_and(inf, F.less(x, 0.0)), F.fill(x.dtype, shape, neginf), out)


def _float_input(op: str, x) -> Tensor:
    x = _tensor(op, "input", x)
    if x.dtype == mstype.bool_ or x.dtype.kind in ("i", "u"):
        return F.cast(x, mstype.float32)
    return _float(op, "input", x)


def log2(input):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.log2``: :math:`\log_2 x = \ln x / \ln 2` (NaN below 0, -inf at 0). Integer and
    bool inputs are computed in float32. dtypes: float16, bfloat16, float32, float64 (and integers, bool)."""
    x = _float_input("log2", input)
    return F.mul(F.log(x), 1.0 / math.log(2.0))


def log10(input):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.log10``: :math:`\log_{10} x = \ln x / \ln 10`. dtypes as ``ops.log2``."""
    x = _float_input("log10", input)
    return F.mul(F.log(x), 1.0 / math.log(10.0))


def hypot(input, other):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.hypot``: :math:`\sqrt{x^2 + y^2}` element-wise (broadcast), Square, Add and Sqrt
    (so it overflows where :math:`x^2` does; the gradient at (0, 0) is NaN, as sqrt's).
    dtypes: float16, bfloat16, float32, float64 (integers computed in float32)."""
    a, b = _float_input("hypot", input), _float_input("hypot", other)
    return F.sqrt(F.add(F.square(a), F.square(b)))


def lerp(input, end, weight):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.lerp``: :math:`out = input + weight \cdot (end - input)` (broadcast), ``weight``
    a float or a Tensor. dtypes: float16, bfloat16, float32, float64."""
    x = _float("lerp", "input", _tensor("lerp", "input", input))
    e = _float("lerp", "end", _tensor("lerp", "end", end))
    if not isinstance(weight, Tensor):
        weight = float(_number("lerp", "weight", weight))
    return F.add(x, F.mul(F.sub(e, x), weight))


def _addc(op: str, input, tensor1, tensor2, value, combine):  # noqa: A002
    x, a, b = (_tensor(op, n, t) for n, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)))
    if not isinstance(value, Tensor):
        value = _number(op, "value", value)
    return F.add(x, _scaled(combine(a, b), value))


def addcmul(input, tensor1, tensor2, value=1):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.addcmul``: :math:`out = input + value \cdot tensor1 \cdot tensor2` (broadcast).
    dtypes: numbers (as Mul and Add)."""
    return _addc("addcmul", input, tensor1, tensor2, value, F.mul)


def addcdiv(input, tensor1, tensor2, value=1):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.addcdiv``: :math:`out = input + value \cdot tensor1 / tensor2` (broadcast; RealDiv).
    dtypes: float16, bfloat16, float32, float64."""
    return _addc("addcdiv", input, tensor1, tensor2, value, F.div)


def div_no_nan(x1, x2):
    r"""The DivNoNan primitive as a function: :math:`x1 / x2`, and 0 where :math:`x2 = 0` (broadcast).
    dtypes: float16, bfloat16, float32, float64."""
    return F._div_no_nan(x1, x2)


# -- statistics ------------------------------------------------------------------------------------------


def logsumexp(input, axis, keep_dims=False):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.logsumexp``: :math:`\log \sum_{axis} e^{x}`, computed as
    :math:`m + \log \sum e^{x - m}` with m the (stop-gradient) maximum, so it does not overflow.
    ``axis`` an int or a tuple. dtypes: float16, bfloat16, float32, float64."""
    x = _float("logsumexp", "input", _tensor("logsumexp", "input", input))
    _bool("logsumexp", "keep_dims", keep_dims)
    axes = _axes("logsumexp", "axis", axis, x.ndim) if x.ndim else ()
    m = stop_gradient(F.reduce_max_op(True)(x, axes))
    m = F.select(F.isfinite(m), m, F.fill(x.dtype, tuple(m.shape), 0.0))
    out = F.add(F.log(F.reduce_sum_op(True)(F.exp(F.sub(x, m)), axes)), m)
    return out if keep_dims or not axes else F.squeeze(out, axes)


def _moments(op: str, input, axis, ddof, keepdims):  # noqa: A002
    x = _tensor(op, "input", input)
    if isinstance(ddof, bool):
        ddof = int(ddof)
    ddof = _int(op, "ddof", ddof)
    _bool(op, "keepdims", keepdims)
    if x.dtype not in _FLOATS:
        x = F.cast(x, mstype.float32)
    axes = _axes(op, "axis", axis, x.ndim) if x.ndim else ()
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    mean = F.reduce_mean_op(True)(x, axes)
    centered = F.sub(x, mean)
    var = F.div(F.reduce_sum_op(keepdims)(F.square(centered), axes), float(n - ddof))
    return var, (mean if keepdims or not axes else F.squeeze(mean, axes))


def var(input, axis=None, ddof=0, keepdims=False):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.var``: :math:`\frac{1}{N - ddof} \sum (x - \bar x)^2` over ``axis`` (None: every
    dim; an int or a tuple), N the count of reduced elements; ``ddof`` an int, or a bool (True: 1).
    Integer inputs are computed in float32. dtypes: float16, bfloat16, float32, float64, integers."""
    return _moments("var", input, axis, ddof, keepdims)[0]


def std(input, axis=None, ddof=0, keepdims=False):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.std``: :math:`\sqrt{var}` (``ops.var``'s arguments)."""
    return F.sqrt(_moments("std", input, axis, ddof, keepdims)[0])


def var_mean(input, axis=None, ddof=0, keepdims=False):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.var_mean``: ``(var, mean)`` over ``axis`` (``ops.var``'s arguments)."""
    return _moments("var_mean", input, axis, ddof, keepdims)


def std_mean(input, axis=None, ddof=0, keepdims=False):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.std_mean``: ``(std, mean)`` over ``axis`` (``ops.std``'s arguments)."""
    v, mean = _moments("std_mean", input, axis, ddof, keepdims)
    return F.sqrt(v), mean


def count_nonzero(x, axis=(), keep_dims=False, dtype=mstype.int32):
    """MindSpore's ``ops.count_nonzero``: the number of non-zero elements over ``axis`` (() : every dim),
    of ``dtype`` (int32 by default). dtypes: all number types and bool."""
    x = _tensor("count_nonzero", "x", x)
    _bool("count_nonzero", "keep_dims", keep_dims)
    axes = _axes("count_nonzero", "axis", axis, x.ndim) if x.ndim else ()
    nonzero = F.cast(F.not_equal(x, F.fill(x.dtype, (), 0)) if x.dtype != mstype.bool_ else x, mstype.int64)
    return F.cast(F.reduce_sum_op(keep_dims)(nonzero, axes), mstype.to_dtype(dtype))


# -- data movement ---------------------------------------------------------------------------------------


def roll(input, shifts, dims=None):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.roll``: ``input`` shifted cyclically by ``shifts`` along ``dims``,
    :math:`out[(i + s) \bmod n] = x[i]` (``np.roll``); ``shifts`` and ``dims`` ints or tuples of one
    length; ``dims`` None rolls the flattened tensor and restores the shape. Two Slices and a Concat per
    dim. dtypes: all."""
    x = _tensor("roll", "input", input)
    shifts_t = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    shifts_t = tuple(_int("roll", "shifts", s) for s in shifts_t)
    if dims is None:
        if len(shifts_t) != 1:
            raise ValueError(f"For 'roll', the 'shifts' must be one int when 'dims' is None, but got {shifts!r}.")
        flat = F.reshape(x, (-1,))
        return F.reshape(roll(flat, shifts_t, (0,)), tuple(x.shape))
    dims_t = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims_t) != len(shifts_t):
        raise ValueError(
            f"For 'roll', the 'shifts' and 'dims' must have one length, but got {len(shifts_t)} and {len(dims_t)}."
        )
    out = x
    for s, d in zip(shifts_t, dims_t):
        d = _axis("roll", "dims", d, x.ndim)
        n = x.shape[d]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = F.concat((_slice_axis(out, d, n - s, s), _slice_axis(out, d, 0, n - s)), d)
    return out


def chunk(input, chunks, axis=0):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.chunk``: ``input`` split along ``axis`` into at most ``chunks`` parts of
    :math:`\lceil n / chunks \rceil` elements (the last smaller; fewer parts when that runs out), a tuple.
    dtypes: all."""
    x = _tensor("chunk", "input", input)
    chunks = _int("chunk", "chunks", chunks)
    if chunks <= 0:
        raise ValueError(f"For 'chunk', the 'chunks' must be > 0, but got {chunks}.")
    axis = _axis("chunk", "axis", axis, x.ndim)
    n = x.shape[axis]
    size = builtins.max(-(-n // chunks), 1)
    return F.split(x, size, axis)


def unbind(input, dim=0):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.unbind``: the slices of ``input`` along ``dim``, that dim removed, as a tuple
    (Unstack). dtypes: all."""
    x = _tensor("unbind", "input", input)
    return F.unstack(x, _axis("unbind", "dim", dim, x.ndim))


def narrow(input, axis, start, length):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.narrow``: ``length`` elements of ``input`` from ``start`` along ``axis`` (Slice).
    dtypes: all."""
    x = _tensor("narrow", "input", input)
    axis = _axis("narrow", "axis", axis, x.ndim)
    start, length = _int("narrow", "start", start), _int("narrow", "length", length)
    n = x.shape[axis]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise ValueError(
            f"For 'narrow', the 'start' {start} and 'length' {length} must lie within the dim {axis} of size {n}."
        )
    return _slice_axis(x, axis, start, length)


def _int_index(op: str, name: str, index) -> Tensor:
    index = _tensor(op, name, index)
    if index.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the '{name}' must be an int32 or int64 Tensor, but got {index.dtype}.")
    return index


def index_select(input, axis, index):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.index_select``: the entries of ``input`` along ``axis`` at the 1-D int ``index``
    (Gather). dtypes: all; ``index`` int32 or int64."""
    x = _tensor("index_select", "input", input)
    axis = _axis("index_select", "axis", axis, x.ndim)
    index = _int_index("index_select", "index", index)
    if index.ndim != 1:
        raise ValueError(f"For 'index_select', the 'index' must be 1-D, but got shape {list(index.shape)}.")
    return F.gather(x, index, axis)


def gather_elements(input, dim, index):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.gather_elements`` (``GatherD``): along ``dim``,
    :math:`out[i_0, .., i_{dim}, .., i_n] = input[i_0, .., index[i_0, .., i_n], .., i_n]`; ``index`` has
    ``input``'s rank and no dim larger than ``input``'s (except along ``dim``), and gives the output's
    shape. GatherNd with a host coordinate grid, so it is differentiable in ``input``. dtypes: all;
    ``index`` int32 or int64."""
    x = _tensor("gather_elements", "input", input)
    index = _int_index("gather_elements", "index", index)
    dim = _axis("gather_elements", "dim", dim, x.ndim)
    if index.ndim != x.ndim:
        raise ValueError(
            f"For 'gather_elements', the 'index' must have the rank of 'input' ({x.ndim}), but got shape "
            f"{list(index.shape)}."
        )
    if any(index.shape[d] > x.shape[d] for d in builtins.range(x.ndim) if d != dim):
        raise ValueError(
            f"For 'gather_elements', the 'index' shape {list(index.shape)} must not exceed the 'input' shape "
            f"{list(x.shape)} outside dim {dim}."
        )
    shape = tuple(index.shape)
    grid = np.indices(shape, dtype=np.int64) if shape else np.zeros((0,), np.int64)
    coords = [
        F.cast(index, mstype.int64) if d == dim else _const(np.ascontiguousarray(grid[d]), x)
        for d in builtins.range(x.ndim)
    ]
    return F.gather_nd(x, F.stack(coords, -1))


gather_d = gather_elements  # MindSpore's ops.gather_d


def swapaxes(input, axis0, axis1):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.swapaxes``: ``input`` with dims ``axis0`` and ``axis1`` exchanged (Transpose).
    dtypes: all."""
    x = _tensor("swapaxes", "input", input)
    a, b = _axis("swapaxes", "axis0", axis0, x.ndim), _axis("swapaxes", "axis1", axis1, x.ndim)
    perm = list(builtins.range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return F.transpose(x, tuple(perm)) if x.ndim else x


def moveaxis(x, source, destination):
    """MindSpore's ``ops.moveaxis``: the dims ``source`` (an int or a tuple) moved to ``destination`` (the
    others keep their order; ``np.moveaxis``), by Transpose. dtypes: all."""
    x = _tensor("moveaxis", "x", x)
    src = tuple(source) if isinstance(source, (tuple, list)) else (source,)
    dst = tuple(destination) if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise ValueError(
            f"For 'moveaxis', the 'source' and 'destination' must have one length, but got {source!r} and "
            f"{destination!r}."
        )
    src = tuple(_axis("moveaxis", "source", s, x.ndim) for s in src)
    dst = tuple(_axis("moveaxis", "destination", d, x.ndim) for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("For 'moveaxis', the 'source' and 'destination' must not repeat an axis.")
    rest = [d for d in builtins.range(x.ndim) if d not in src]
    perm = [None] * x.ndim
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = tuple(p if p is not None else next(it) for p in perm)
    return F.transpose(x, perm) if x.ndim else x


def repeat_interleave(input, repeats, axis=None):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.repeat_interleave``: each element of ``input`` repeated ``repeats`` times along
    ``axis`` (None: of the flattened input; ``np.repeat``); ``repeats`` an int, a tuple or list of one per
    element, or an int Tensor (read on the host: the output's length depends on it, so inside ``jit`` a
    traced one raises). Gather with host indices, differentiable in ``input``. dtypes: all."""
    x = _tensor("repeat_interleave", "input", input)
    if axis is None:
        x, axis = F.reshape(x, (-1,)), 0
    axis = _axis("repeat_interleave", "axis", axis, x.ndim)
    if isinstance(repeats, Tensor):
        if repeats.dtype.kind not in ("i", "u"):
            raise TypeError(f"For 'repeat_interleave', the 'repeats' Tensor must be int, but got {repeats.dtype}.")
        repeats = repeats.asnumpy().reshape(-1).tolist()
        repeats = repeats[0] if len(repeats) == 1 else repeats
    if isinstance(repeats, (list, tuple)):
        counts = [_int("repeat_interleave", "repeats", r) for r in repeats]
        if len(counts) != x.shape[axis]:
            raise ValueError(
                f"For 'repeat_interleave', the 'repeats' must have {x.shape[axis]} entries (one per element of "
                f"dim {axis}), but got {len(counts)}."
            )
    else:
        counts = _int("repeat_interleave", "repeats", repeats)
    if np.any(np.asarray(counts) < 0):
        raise ValueError(f"For 'repeat_interleave', the 'repeats' must be >= 0, but got {repeats!r}.")
    idx = np.repeat(np.arange(x.shape[axis], dtype=np.int64), counts)
    return F.gather(x, _const(idx, x), axis)


# -- creation ---------------------------------------------------------------------------------------------


scalar_to_tensor = F.scalar_to_tensor  # (defined in functional.py: MindSpore's F has it)


def logspace(start, end, steps, base=10, *, dtype=mstype.float32):
    r"""MindSpore's ``ops.logspace``: ``steps`` values :math:`base^{t}` for t evenly spaced from ``start``
    to ``end`` (both included), of ``dtype`` (float32 by default; computed in float64 on the host).
    A constant."""
    start, end = float(_number("logspace", "start", start)), float(_number("logspace", "end", end))
    steps, base = _int("logspace", "steps", steps), _int("logspace", "base", base)
    if steps < 0:
        raise ValueError(f"For 'logspace', the 'steps' must be >= 0, but got {steps}.")
    dtype = mstype.to_dtype(dtype)
    values = np.power(float(base), np.linspace(start, end, steps, dtype=np.float64))
    return Tensor(values.astype(dtype.np_dtype), dtype=dtype)


# -- activations and normalisation -----------------------------------------------------------------------


def softmin(x, axis=-1, *, dtype=None):
    r"""MindSpore's ``ops.softmin``: :math:`\frac{e^{-x_i}}{\sum_j e^{-x_j}}` along ``axis``
    (``softmax(-x)``), cast to ``dtype`` first when given. dtypes: float16, bfloat16, float32, float64."""
    x = _tensor("softmin", "x", x)
    if dtype is not None:
        x = F.cast(x, mstype.to_dtype(dtype))
    _float("softmin", "x", x)
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise ValueError(f"For 'softmin', the 'axis' must be one int, but got {axis!r}.")
        axis = axis[0]
    return F.softmax(F.neg(x), _axis("softmin", "axis", axis, x.ndim))


def glu(x, axis=-1):
    r"""MindSpore's ``ops.glu``: ``x`` split in halves a, b along ``axis`` (even-sized),
    :math:`a \otimes \sigma(b)`. dtypes: float16, bfloat16, float32, float64."""
    x = _float("glu", "x", _tensor("glu", "x", x))
    axis = _axis("glu", "axis", axis, x.ndim)
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"For 'glu', the dim {axis} of 'x' must have an even size, but got {n}.")
    a, b = _slice_axis(x, axis, 0, n // 2), _slice_axis(x, axis, n // 2, n // 2)
    return F.mul(a, F.sigmoid(b))


def _eps(op: str, eps) -> float:
    if not isinstance(eps, float):
        raise TypeError(f"For '{op}', the 'eps' must be a float, but got {type(eps).__name__}.")
    if eps <= 0:
        raise ValueError(f"For '{op}', the 'eps' must be > 0, but got {eps}.")
    return eps


@functools.lru_cache(maxsize=64)
def _layer_norm_prim(begin_norm_axis: int, begin_params_axis: int, eps: float):
    return nn_ops.LayerNorm(begin_norm_axis, begin_params_axis, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.layer_norm``: over the trailing dims ``normalized_shape``,
    :math:`y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \cdot weight + bias` (biased variance; ``weight``
    ones and ``bias`` zeros when None, both of shape ``normalized_shape``), by the LayerNorm primitive.
    dtypes: float16, bfloat16, float32, float64."""
    x = _float("layer_norm", "input", _tensor("layer_norm", "input", input))
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            f"For 'layer_norm', the 'normalized_shape' must be an int, tuple or list, but got "
            f"{type(normalized_shape).__name__}."
        )
    normalized_shape = tuple(_int("layer_norm", "normalized_shape", d) for d in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k :]) != normalized_shape:
        raise ValueError(
            f"For 'layer_norm', the 'normalized_shape' {list(normalized_shape)} must be the trailing dims of "
            f"'input' of shape {list(x.shape)}."
        )
    eps = _eps("layer_norm", eps)
    gamma = F.fill(x.dtype, normalized_shape, 1) if weight is None else _tensor("layer_norm", "weight", weight)
    beta = F.fill(x.dtype, normalized_shape, 0) if bias is None else _tensor("layer_norm", "bias", bias)
    begin = x.ndim - k
    return _layer_norm_prim(begin, begin, eps)(x, gamma, beta)[0]


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-5):
    r"""MindSpore's ``ops.batch_norm``: per channel (dim 1 of ``input_x`` [N, C, ...]),
    :math:`y = \frac{x - mean}{\sqrt{variance + \epsilon}} \cdot weight + bias`, with the batch's
    statistics when ``training`` (then ``running_mean`` and ``running_var`` must be Parameters and are
    updated in place, :math:`running \leftarrow (1 - momentum) \cdot running + momentum \cdot batch`,
    the unbiased batch variance for ``running_var``), else with ``running_mean``/``running_var``. The
    BatchNorm primitive. dtypes: float16, bfloat16, float32, float64 (all five inputs of one dtype)."""
    x = _float("batch_norm", "input_x", _tensor("batch_norm", "input_x", input_x))
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        _tensor("batch_norm", name, t)
    _bool("batch_norm", "training", training)
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"For 'batch_norm', the 'momentum' must be a float, but got {type(momentum).__name__}.")
    eps = _eps("batch_norm", eps)
    if x.ndim < 2:
        raise ValueError(f"For 'batch_norm', the 'input_x' must have at least 2 dims, but got shape {list(x.shape)}.")
    prim = nn_ops.BatchNorm(is_training=training, epsilon=eps, momentum=float(momentum))
    return prim(x, weight, bias, running_mean, running_var)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.group_norm``: the C channels of ``input`` [N, C, *] in ``num_groups`` groups,
    each group normalised over its channels and the trailing dims,
    :math:`y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \cdot weight_c + bias_c` (``weight``/``bias`` of
    shape [C], ones and zeros when None): the LayerNorm primitive over [N, G, C/G * ...], then the
    per-channel affine. dtypes: float16, bfloat16, float32, float64."""
    x = _float("group_norm", "input", _tensor("group_norm", "input", input))
    g = _int("group_norm", "num_groups", num_groups)
    eps = _eps("group_norm", eps)
    if x.ndim < 2:
        raise ValueError(f"For 'group_norm', the 'input' must have at least 2 dims, but got shape {list(x.shape)}.")
    n, c = x.shape[0], x.shape[1]
    if g < 1 or c % g:
        raise ValueError(f"For 'group_norm', the 'num_groups' ({g}) must be >= 1 and divide the channels ({c}).")
    shape = tuple(x.shape)
    k = int(np.prod(shape[1:], dtype=np.int64)) // g
    grouped = F.reshape(x, (n, g, k))
    y = _layer_norm_prim(2, 2, eps)(grouped, F.fill(x.dtype, (k,), 1), F.fill(x.dtype, (k,), 0))[0]
    y = F.reshape(y, shape)
    view = (c,) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = F.mul(y, F.reshape(_tensor("group_norm", "weight", weight), view))
    if bias is not None:
        y = F.add(y, F.reshape(_tensor("group_norm", "bias", bias), view))
    return y


# -- data-dependent shapes and sorted searches ------------------------------------------------------------
# nonzero, masked_select and bincount read the data on the host (their output's length depends on it), as
# ops.Unique does: inside ``jit`` that raises a TraceError. masked_select gathers the selected elements with
# GatherNd, so it differentiates in ``input``.


def nonzero(input, as_tuple=False):  # noqa: A002 (MindSpore's name)
    """The coordinates of the nonzero elements of ``input``, in row-major order: an int64 Tensor [count, ndim],
    or with ``as_tuple`` one 1-D int64 Tensor per dim."""
    x = _tensor("nonzero", "input", input)
    coords = np.argwhere(x.asnumpy() != 0).astype(np.int64)
    if as_tuple:
        return tuple(Tensor(np.ascontiguousarray(coords[:, d]), device=x.device) for d in builtins.range(x.ndim))
    return Tensor(coords, device=x.device)


def masked_select(input, mask):  # noqa: A002 (MindSpore's name)
    """The elements of ``input`` where the bool ``mask`` (broadcast with it) is True, as a 1-D Tensor in
    row-major order (GatherNd of the coordinates, so it differentiates in ``input``)."""
    x, m = _tensor("masked_select", "input", input), _tensor("masked_select", "mask", mask)
    if m.dtype != mstype.bool_:
        raise TypeError(f"For 'masked_select', the 'mask' must be a bool Tensor, but got {m.dtype}.")
    shape = np.broadcast_shapes(tuple(x.shape), tuple(m.shape))
    coords = np.argwhere(np.broadcast_to(m.asnumpy(), shape)).astype(np.int64)
    if tuple(x.shape) != shape:
        x = F.broadcast_to(x, shape)
    if not shape:  # a 0-d input: one element or none
        return F.reshape(x, (1,)) if coords.shape[0] else F.reshape(x, (1,))[0:0]
    return F.gather_nd(x, Tensor(coords, device=x.device))


def bincount(input, weights=None, minlength=0):  # noqa: A002 (MindSpore's name)
    """How many times each value 0, 1, ... occurs in the 1-D non-negative int ``input`` (int64), or the sum of
    ``weights`` at those positions (float32, or float64 for float64 weights); length max(input) + 1, at least
    ``minlength``."""
    x = _tensor("bincount", "input", input)
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise TypeError(f"For 'bincount', the 'input' must be a 1-D int Tensor, but got {x.dtype} {list(x.shape)}.")
    values = x.asnumpy()
    if values.size and values.min() < 0:
        raise ValueError(f"For 'bincount', the 'input' must be non-negative, but got {int(values.min())}.")
    minlength = _int("bincount", "minlength", minlength)
    length = builtins.max(minlength, int(values.max()) + 1 if values.size else 0)
    if weights is None:
        return Tensor(np.bincount(values, minlength=length).astype(np.int64), device=x.device)
    w = _tensor("bincount", "weights", weights)
    if tuple(w.shape) != tuple(x.shape):
        raise ValueError(f"For 'bincount', the 'weights' must have the shape {list(x.shape)}, but got {list(w.shape)}.")
    ids = Tensor(values.astype(np.int32), device=x.device)
    dtype = mstype.float64 if w.dtype == mstype.float64 else mstype.float32
    return array_ops.UnsortedSegmentSum()(F.cast(w, dtype), ids, length)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """For each of ``values``, the index where it would be inserted into the last dim of ``sorted_sequence``
    (ascending) to keep it sorted: the count of entries below it (``right`` or ``side="right"``: at most it).
    ``sorted_sequence`` 1-D, or with the leading dims of ``values``. int64 (``out_int32``: int32). A
    comparison count, O(len(values) * len(sequence))."""
    seq, v = _tensor("searchsorted", "sorted_sequence", sorted_sequence), _tensor("searchsorted", "values", values)
    if sorter is not None:
        seq = gather_elements(seq, -1, sorter)
    if side not in (None, "left", "right"):
        raise ValueError(f"For 'searchsorted', the 'side' must be 'left' or 'right', but got {side!r}.")
    right = right or side == "right"
    if seq.ndim > 1 and tuple(seq.shape[:-1]) != tuple(v.shape[:-1]):
        raise ValueError(
            f"For 'searchsorted', the leading dims of 'sorted_sequence' {list(seq.shape)} and 'values' "
            f"{list(v.shape)} must match."
        )
    expanded = F.expand_dims(seq, -2) if seq.ndim > 1 else seq  # [..., 1, m] against values [..., n, 1]
    below = (F.less_equal if right else F.less)(expanded, F.expand_dims(v, -1))
    return F.reduce_sum_op()(F.cast(below, mstype.int32 if out_int32 else mstype.int64), -1)


def bucketize(input, boundaries, *, right=False):  # noqa: A002 (MindSpore's name)
    """The bucket of each element of ``input`` among the ascending 1-D ``boundaries`` (a list of floats or a
    Tensor): the count of boundaries below it (``right``: at most it), int32 as MindSpore's."""
    x = _tensor("bucketize", "input", input)
    b = boundaries
    if not isinstance(b, Tensor):
        b = Tensor(np.asarray(b, np.float64).astype(x.dtype.np_dtype), device=x.device)
    found = searchsorted(b, F.reshape(x, (-1,)), out_int32=True, right=right)
    return F.reshape(found, tuple(x.shape))
