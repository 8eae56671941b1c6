"""MindSpore's element-indexed scatters, ``index_add``, ``mode``, ``matrix_band_part`` and
``random_categorical``: compositions of existing primitives (no kernel of their own).

Each is built from primitives that have CPU and GPU kernels, a bprop and a batching rule (or vmap's
sequential fallback), so it differentiates, runs under ``vmap`` and ``jit`` and on both backends:

- ``tensor_scatter_elements`` / ``TensorScatterElements`` and ``scatter``: the per-element index along
  ``axis`` becomes full N-d coordinates (a host grid for the other dims), then TensorScatterUpdate
  (``reduction="none"``) or TensorScatterAdd (``"add"``) writes them into ``input`` padded by one slot along
  ``axis``: out-of-range indices write into that slot, which is sliced off (MindSpore drops them).
- ``index_add`` / ``IndexAdd``: TensorScatterAdd of the slices of ``y`` along ``axis`` (moved to the front).
- ``mode``: Sort, then each run of equal values counted with Cummax of its start position.
- ``matrix_band_part`` / ``MatrixBandPart``: Select against a band mask (a host constant, or computed from
  int Tensors ``lower``/``upper``).
- ``random_categorical`` / ``RandomCategorical``: ``multinomial`` of ``softmax(logits)`` (the seeded RandExt
  kernel through the Generator of opforge/generator.py).

The Tensor methods ``Tensor.scatter`` and ``Tensor.index_add`` are installed by opforge/ops/tensor_methods.py.
"""

from __future__ import annotations

import builtins

import numpy as np

from opforge import dtype as mstype
from opforge.ops import frontend_random
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.primitives import array_ops
from opforge.tensor import Parameter, Tensor

__all__ = [
    "tensor_scatter_elements", "scatter", "index_add", "mode", "matrix_band_part", "random_categorical",
    "TensorScatterElements", "IndexAdd", "MatrixBandPart", "RandomCategorical",
]  # fmt: skip

# TensorScatterAdd's dtypes (and IndexAdd's, a superset of MindSpore's float16/32/64, int8/16/32, uint8).
_ADD_TYPES = (
    mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64,
    mstype.int8, mstype.int16, mstype.int32, mstype.int64, mstype.uint8,
)  # fmt: skip
_SORT_TYPES = _ADD_TYPES  # Sort's dtypes (mode)
_assign = array_ops.Assign()


def _check_add_dtype(op: str, name: str, x: Tensor) -> None:
    if x.dtype not in _ADD_TYPES:
        raise TypeError(
            f"For '{op}', the '{name}' must be float16, bfloat16, float32, float64, int8, int16, int32, int64 or "
            f"uint8 to be added to, but got {x.dtype}."
        )


# -- element-indexed scatters ------------------------------------------------------------------------------


def _scatter_elements(op: str, names: tuple, x, index, updates, axis, reduction: str) -> Tensor:
    """``x`` with ``updates[i]`` written (``"none"``) or added (``"add"``) at ``i`` with its ``axis``
    coordinate replaced by ``index[i]``; ``names``: the three arguments' names for the errors."""
    x = FX._tensor(op, names[0], x)
    index = FX._int_index(op, names[1], index)
    updates = FX._tensor(op, names[2], updates)
    if x.ndim < 1:
        raise ValueError(f"For '{op}', the '{names[0]}' must have at least 1 dim, but got a 0-d Tensor.")
    axis = FX._axis(op, "axis", axis, x.ndim)
    if index.ndim != x.ndim:
        raise ValueError(
            f"For '{op}', the '{names[1]}' must have the rank of '{names[0]}' ({x.ndim}), but got shape "
            f"{list(index.shape)}."
        )
    if any(index.shape[d] > x.shape[d] for d in builtins.range(x.ndim) if d != axis):
        raise ValueError(
            f"For '{op}', the '{names[1]}' shape {list(index.shape)} must not exceed the '{names[0]}' shape "
            f"{list(x.shape)} outside dim {axis}."
        )
    if tuple(updates.shape) != tuple(index.shape):
        raise ValueError(
            f"For '{op}', the '{names[2]}' must have the shape of '{names[1]}' {list(index.shape)}, but got "
            f"{list(updates.shape)}."
        )
    if updates.dtype != x.dtype:
        raise TypeError(
            f"For '{op}', the '{names[2]}' must have the dtype of '{names[0]}' ({x.dtype}), but got {updates.dtype}."
        )
    if reduction == "add":
        _check_add_dtype(op, names[0], x)
    n = x.shape[axis]
    if index.size == 0 or n == 0:
        return F.reshape(x, tuple(x.shape))  # nothing to write: a copy
    # Negative indices count from the end; out-of-range ones write into the spare slot n (sliced off below).
    i = F.cast(index, mstype.int64)
    i = F.select(F.less(i, 0), F.add(i, n), i)
    valid = F.logical_and(F.greater_equal(i, 0), F.less(i, n))
    i = F.select(valid, i, FX._const(np.full(tuple(i.shape), n, np.int64), x))
    grid = np.indices(tuple(index.shape), dtype=np.int64)
    coords = [i if d == axis else FX._const(np.ascontiguousarray(grid[d]), x) for d in builtins.range(x.ndim)]
    padded = F.concat((x, F.zeros_like(FX._slice_axis(x, axis, 0, 1))), axis)
    scatter = F.tensor_scatter_add if reduction == "add" else F.tensor_scatter_update
    return FX._slice_axis(scatter(padded, F.stack(coords, -1), updates), axis, 0, n)


def _reduction(op: str, reduction) -> str:
    if not isinstance(reduction, str):
        raise TypeError(f"For '{op}', the 'reduction' must be a str, but got {type(reduction).__name__}.")
    if reduction not in ("none", "add"):
        raise ValueError(f"For '{op}', the 'reduction' must be 'none' or 'add', but got {reduction!r}.")
    return reduction


def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    r"""MindSpore's ``ops.tensor_scatter_elements``: a copy of ``input_x`` with each element of ``updates``
    written (``reduction="none"``) or added (``"add"``) along ``axis`` at its index, e.g. for 3-D and axis 1
    :math:`out[i][indices[i][j][k]][k] = updates[i][j][k]` (``+=`` for ``"add"``). ``indices`` (int32 or
    int64) has ``input_x``'s rank and no dim larger than it outside ``axis``; ``updates`` its shape and
    ``input_x``'s dtype. Indices in [-s, 0) count from the end (s = ``input_x.shape[axis]``); others out of
    [0, s) are dropped (no error, as MindSpore). With ``"none"``, of several updates to one element the CPU
    keeps the last, the GPU any one (MindSpore: undefined); ``"add"`` sums them all. Differentiable in
    ``input_x`` (the gradient masked where written, for ``"none"``) and ``updates`` (gathered).
    dtypes: all for ``"none"``; float16, bfloat16, float32, float64, int8-int64, uint8 for ``"add"``."""
    reduction = _reduction("tensor_scatter_elements", reduction)
    names = ("input_x", "indices", "updates")
    return _scatter_elements("tensor_scatter_elements", names, input_x, indices, updates, axis, reduction)


def scatter(input, axis, index, src):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.scatter``: ``tensor_scatter_elements(input, index, src, axis)`` with
    ``reduction="none"``, :math:`out[..., index[i], ...] = src[i]` along ``axis``. ``src``: a Tensor of
    ``input``'s dtype and ``index``'s shape (a larger one is cut to it, as PyTorch's ``scatter``), or a
    number written at every index. dtypes: all; ``index`` int32 or int64."""
    x = FX._tensor("scatter", "input", input)
    index = FX._int_index("scatter", "index", index)
    if isinstance(src, (bool, int, float, np.number)):
        src = F.broadcast_to(F.cast(FX._const(np.asarray(src), x), x.dtype), tuple(index.shape))
    src = FX._tensor("scatter", "src", src)
    if (
        tuple(src.shape) != tuple(index.shape)
        and src.ndim == index.ndim
        and all(s >= k for s, k in zip(src.shape, index.shape))
    ):
        src = F.slice_(src, (0,) * src.ndim, tuple(index.shape))
    return _scatter_elements("scatter", ("input", "index", "src"), x, index, src, axis, "none")


class TensorScatterElements:
    """``TensorScatterElements(axis=0, reduction="none")(data, indices, updates)``:
    ``ops.tensor_scatter_elements(data, indices, updates, axis, reduction)``."""

    def __init__(self, axis=0, reduction="none"):
        self.axis = FX._int("TensorScatterElements", "axis", axis)
        self.reduction = _reduction("TensorScatterElements", reduction)

    def __call__(self, data, indices, updates):
        names = ("data", "indices", "updates")
        return _scatter_elements("TensorScatterElements", names, data, indices, updates, self.axis, self.reduction)


# -- index_add ----------------------------------------------------------------------------------------------


def _index_add(op: str, x, indices, y, axis, use_lock, check_index_bound) -> Tensor:
    x = FX._tensor(op, "x", x)
    indices = FX._int_index(op, "indices", indices)
    y = FX._tensor(op, "y", y)
    FX._bool(op, "use_lock", use_lock)
    FX._bool(op, "check_index_bound", check_index_bound)
    if x.ndim < 1:
        raise ValueError(f"For '{op}', the 'x' must have at least 1 dim, but got a 0-d Tensor.")
    axis = FX._axis(op, "axis", axis, x.ndim)
    if y.ndim != x.ndim:
        raise ValueError(f"For '{op}', the 'y' must have the rank of 'x' ({x.ndim}), but got shape {list(y.shape)}.")
    if indices.ndim != 1 or indices.shape[0] != y.shape[axis]:
        raise ValueError(
            f"For '{op}', the 'indices' must be 1-D with the {y.shape[axis]} entries of dim {axis} of 'y', but got "
            f"shape {list(indices.shape)}."
        )
    if any(x.shape[d] != y.shape[d] for d in builtins.range(x.ndim) if d != axis):
        raise ValueError(
            f"For '{op}', the 'y' shape {list(y.shape)} must equal the 'x' shape {list(x.shape)} outside dim {axis}."
        )
    if y.dtype != x.dtype:
        raise TypeError(f"For '{op}', the 'y' must have the dtype of 'x' ({x.dtype}), but got {y.dtype}.")
    _check_add_dtype(op, "x", x)
    n, k = x.shape[axis], indices.shape[0]
    if k == 0:
        out = F.reshape(x, tuple(x.shape))
    else:
        # Rows of y along axis (moved to the front) add into rows of x; out-of-range indices are dropped, as
        # MindSpore's kernels do: their row adds zeros at row 0.
        xt, yt = FX.moveaxis(x, axis, 0), FX.moveaxis(y, axis, 0)
        i = F.cast(indices, mstype.int64)
        valid = F.logical_and(F.greater_equal(i, 0), F.less(i, n))
        i = F.select(valid, i, F.zeros_like(i))
        keep = F.broadcast_to(F.reshape(valid, (k,) + (1,) * (yt.ndim - 1)), tuple(yt.shape))
        yt = F.select(keep, yt, F.zeros_like(yt))
        out = FX.moveaxis(F.tensor_scatter_add(xt, F.reshape(i, (k, 1)), yt), 0, axis)
    if isinstance(x, Parameter):  # MindSpore's IndexAdd writes a Parameter x in place (RW_WRITE)
        return _assign(x, out)
    return out


def index_add(x, indices, y, axis, use_lock=True, check_index_bound=True):
    r"""MindSpore's ``ops.index_add``: ``x`` with the slices of ``y`` along ``axis`` added at ``indices``,
    :math:`out[..., indices[j], ...] = x[..., indices[j], ...] + y[..., j, ...]` (repeated indices add up).
    ``indices``: 1-D int32 (or int64), one per entry of ``y`` along ``axis``; ``y``: ``x``'s dtype and shape
    outside ``axis``. Indices outside [0, x.shape[axis]) are dropped, as MindSpore's kernels do
    (``check_index_bound`` and ``use_lock`` are accepted and checked as bools). A Parameter ``x`` is updated in
    place and returned (MindSpore's RW_WRITE; not differentiable then, like the other in-place scatters); a
    Tensor ``x`` gives a new Tensor, differentiable in ``x`` (the identity) and ``y`` (gathered rows).
    TensorScatterAdd. dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8."""
    return _index_add("index_add", x, indices, y, axis, use_lock, check_index_bound)


class IndexAdd:
    """``IndexAdd(axis, use_lock=True, check_index_bound=True)(x, indices, y)``:
    ``ops.index_add(x, indices, y, axis, use_lock, check_index_bound)``."""

    def __init__(self, axis, use_lock=True, check_index_bound=True):
        self.axis = FX._int("IndexAdd", "axis", axis)
        self.use_lock = FX._bool("IndexAdd", "use_lock", use_lock)
        self.check_index_bound = FX._bool("IndexAdd", "check_index_bound", check_index_bound)

    def __call__(self, x, indices, y):
        return _index_add("IndexAdd", x, indices, y, self.axis, self.use_lock, self.check_index_bound)


# -- mode ---------------------------------------------------------------------------------------------------


def mode(input, axis=-1, keepdim=False):  # noqa: A002 (MindSpore's name)
    r"""``ops.mode``: ``(values, indices)``, the most frequent value along ``axis`` and the index (int64) of
    its last occurrence; of several equally frequent values the smallest, as ``torch.mode`` (MindSpore's
    documentation does not state a rule). Sort (stable), then each run of equal sorted values counted up
    with Cummax of the run's start; the first position reaching the largest count ends the winning run.
    NaNs count one each. ``values`` differentiate (through Sort); ``indices`` not.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8."""
    x = FX._tensor("mode", "input", input)
    FX._bool("mode", "keepdim", keepdim)
    if x.dtype not in _SORT_TYPES:
        raise TypeError(
            f"For 'mode', the 'input' must be float16, bfloat16, float32, float64, int8, int16, int32, int64 or "
            f"uint8, but got {x.dtype}."
        )
    axis = FX._axis("mode", "axis", axis, x.ndim)
    if x.ndim == 0:
        return F.reshape(x, ()), FX._const(np.zeros((), np.int64), x)
    n = x.shape[axis]
    if n == 0:
        raise ValueError(f"For 'mode', the dim {axis} of 'input' is empty: there is no mode.")
    last = x.ndim - 1
    xt = FX.moveaxis(x, axis, last)
    values, order = F.sort(xt, -1, False)
    lead = tuple(values.shape[:-1])
    positions = F.broadcast_to(FX._const(np.arange(n, dtype=np.int64), x), lead + (n,))
    if n > 1:
        changes = F.not_equal(FX._slice_axis(values, last, 1, n - 1), FX._slice_axis(values, last, 0, n - 1))
        starts = F.concat((FX._const(np.ones(lead + (1,), bool), x), changes), last)
    else:
        starts = FX._const(np.ones(lead + (1,), bool), x)
    run_start = F.cummax(F.select(starts, positions, F.zeros_like(positions)), last)[0]
    counts = F.sub(positions, run_start)  # equal values before this one in its run
    best = F.expand_dims(F.argmax(counts, last), last)  # the first largest: the smallest of the modes
    y = FX.gather_elements(values, last, best)
    index = F.cast(FX.gather_elements(order, last, best), mstype.int64)
    if keepdim:
        return FX.moveaxis(y, last, axis), FX.moveaxis(index, last, axis)
    return F.squeeze(y, (last,)), F.squeeze(index, (last,))


# -- matrix_band_part ---------------------------------------------------------------------------------------


def _band_limit(op: str, name: str, value):
    """An int, or a 0-D int32/int64 Tensor (as an int64 Tensor)."""
    if isinstance(value, Tensor):
        if value.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{op}', the '{name}' Tensor must be int32 or int64, but got {value.dtype}.")
        if value.ndim != 0:
            raise ValueError(f"For '{op}', the '{name}' Tensor must be 0-D, but got shape {list(value.shape)}.")
        return F.cast(value, mstype.int64)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{op}', the '{name}' must be an int or a Tensor, but got {type(value).__name__}.")
    return int(value)


def _within(offset: np.ndarray, limit, like: Tensor):
    """``limit < 0 or offset <= limit``: a host array for an int limit, a bool Tensor for a Tensor one."""
    if isinstance(limit, int):
        return np.ones(offset.shape, bool) if limit < 0 else offset <= limit
    offsets = FX._const(offset, like)
    return F.logical_or(F.less(limit, 0), F.less_equal(offsets, limit))


def _band_part(op: str, x, lower, upper) -> Tensor:
    x = FX._tensor(op, "x", x)
    if x.ndim < 2:
        raise ValueError(f"For '{op}', the 'x' must have at least 2 dims, but got shape {list(x.shape)}.")
    lower, upper = _band_limit(op, "lower", lower), _band_limit(op, "upper", upper)
    rows, cols = x.shape[-2], x.shape[-1]
    below = np.arange(rows, dtype=np.int64)[:, None] - np.arange(cols, dtype=np.int64)[None, :]  # i - j
    keep_lower, keep_upper = _within(below, lower, x), _within(-below, upper, x)
    if isinstance(keep_lower, np.ndarray) and isinstance(keep_upper, np.ndarray):
        keep = FX._const(keep_lower & keep_upper, x)
    else:
        keep = F.logical_and(*(FX._const(k, x) if isinstance(k, np.ndarray) else k for k in (keep_lower, keep_upper)))
    return F.select(F.broadcast_to(keep, tuple(x.shape)), x, F.zeros_like(x))


def matrix_band_part(x, lower, upper):
    r"""MindSpore's ``ops.matrix_band_part``: the band of the last two dims of ``x`` (rank >= 2), the rest 0:
    :math:`out_{..., i, j} = x_{..., i, j}` if :math:`(lower < 0 \lor i - j \le lower) \land (upper < 0 \lor
    j - i \le upper)`. ``lower``/``upper``: ints or 0-D int32/int64 Tensors (negative: keep that whole
    triangle). Select against the band mask, so differentiable in ``x``. dtypes: all."""
    return _band_part("matrix_band_part", x, lower, upper)


class MatrixBandPart:
    """``MatrixBandPart()(x, lower, upper)``: ``ops.matrix_band_part(x, lower, upper)``."""

    def __call__(self, x, lower, upper):
        return _band_part("MatrixBandPart", x, lower, upper)


# -- random_categorical -------------------------------------------------------------------------------------


def _categorical(op: str, logits, num_sample, seed, dtype) -> Tensor:
    x = FX._tensor(op, "logits", logits)
    if x.dtype not in FX._FLOATS:
        raise TypeError(f"For '{op}', the 'logits' must be float16, bfloat16, float32 or float64, but got {x.dtype}.")
    if x.ndim != 2:
        raise ValueError(f"For '{op}', the 'logits' must be 2-D (batch_size, num_classes), but got {list(x.shape)}.")
    num_sample = FX._int(op, "num_sample", num_sample)
    seed = FX._int(op, "seed", seed)
    if num_sample < 1:
        raise ValueError(f"For '{op}', the 'num_sample' must be > 0, but got {num_sample}.")
    if seed < 0:
        raise ValueError(f"For '{op}', the 'seed' must be >= 0, but got {seed}.")
    if dtype not in (mstype.int16, mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the 'dtype' must be int16, int32 or int64, but got {dtype!r}.")
    if x.shape[1] == 0:
        raise ValueError(f"For '{op}', the 'logits' must have at least 1 class, but got shape {list(x.shape)}.")
    probs = F.softmax(F.cast(x, mstype.float64), -1)
    draws = frontend_random.multinomial(probs, num_sample, True, None if seed == 0 else seed)
    return F.cast(draws, dtype)


def random_categorical(logits, num_sample, seed=0, dtype=mstype.int64):
    r"""MindSpore's ``ops.random_categorical``: ``num_sample`` class indices per row of the 2-D ``logits``
    (batch_size, num_classes), drawn with :math:`P(c) = softmax(logits)_c` (inverse CDF of uniform draws:
    ``ops.multinomial`` with replacement), shape (batch_size, num_sample), of ``dtype`` (int16, int32 or
    int64). ``seed`` 0 draws from the default generator (reproducible after ``set_seed``, new values at each
    call and each replay of a jitted function); another ``seed`` from a generator of that seed (the same
    values at each call). Not differentiable. dtypes: float16, bfloat16, float32, float64."""
    return _categorical("random_categorical", logits, num_sample, seed, dtype)


class RandomCategorical:
    """``RandomCategorical(dtype=mstype.int64)(logits, num_sample, seed=0)``:
    ``ops.random_categorical(logits, num_sample, seed, dtype)``."""

    def __init__(self, dtype=mstype.int64):
        if dtype not in (mstype.int16, mstype.int32, mstype.int64):
            raise TypeError(f"For 'RandomCategorical', the 'dtype' must be int16, int32 or int64, but got {dtype!r}.")
        self.dtype = dtype

    def __call__(self, logits, num_sample, seed=0):
        return _categorical("RandomCategorical", logits, num_sample, seed, self.dtype)


# -- Tensor methods (installed by opforge/ops/tensor_methods.py) ---------------------------------------------


def tensor_index_add(self, dim, index, source, *, alpha=1):
    """MindSpore's ``Tensor.index_add(dim, index, source, *, alpha=1)``:
    ``ops.index_add(self, index, source * alpha, dim)``."""
    source = FX._tensor("Tensor.index_add", "source", source)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)):
        raise TypeError(f"For 'Tensor.index_add', the 'alpha' must be a number, but got {type(alpha).__name__}.")
    if alpha != 1:
        source = F.mul(source, alpha)
    return _index_add("Tensor.index_add", self, index, source, dim, True, True)
