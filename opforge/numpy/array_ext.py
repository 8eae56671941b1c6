"""More of ``mindspore.numpy`` (exported by ``opforge.numpy``), the functions the model zoo's research programs
call: ``rand`` (uniform draws of the seeded RandExt kernel), ``take_along_axis`` (GatherD of the broadcast
indices), ``unravel_index`` (FloorMod and FloorDiv by the dims' strides), ``array_split``, ``split`` and its
``vsplit``/``hsplit``/``dsplit`` (a Slice per piece), ``column_stack`` (Concat of columns) and ``floor_divide``
(FloorDiv). NumPy's (and MindSpore's) semantics;
composed of opforge's primitives, so the Tensor ones differentiate, run on the CPU and the GPU and are recorded
by jit."""

from __future__ import annotations

import math

import numpy as _np

from opforge import dtype as mstype
from opforge.numpy.extended import _axis, _out, _tensor
from opforge.ops import frontend_random
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX

__all__ = [
    "rand", "take_along_axis", "unravel_index", "array_split", "split", "vsplit", "hsplit", "dsplit", "column_stack",
    "floor_divide",
]  # fmt: skip


def _is_int(value) -> bool:
    return isinstance(value, (int, _np.integer)) and not isinstance(value, (bool, _np.bool_))


def rand(*shape, dtype=mstype.float32):
    """Values uniform in [0, 1) of ``shape`` (ints, or one tuple or list of them) and the float ``dtype``
    (default float32), new ones at each call (the default generator: ``set_seed`` repeats a run's draws)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not all(_is_int(d) for d in shape):
        raise TypeError(f"For 'rand', the shape must be ints, or a tuple or list of ints, but got {shape!r}.")
    dtype = mstype.to_dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"For 'rand', the 'dtype' must be a float dtype, but got {dtype}.")
    return frontend_random.rand(*(int(d) for d in shape), dtype=dtype)


def take_along_axis(arr, indices, axis):
    """The elements of ``arr`` at ``indices`` along ``axis`` (NumPy's ``take_along_axis``): ``indices`` an int
    Tensor of ``arr``'s rank, its other dims broadcast with ``arr``'s; a negative index counts from the end; ``axis``
    None reads ``arr`` flattened (``indices`` 1-D). GatherD, so it differentiates in ``arr``."""
    arr, indices = _tensor(arr), _tensor(indices)
    if axis is None:
        arr, axis = F.reshape(arr, (-1,)), 0
    if indices.dtype.kind not in "iu":
        raise TypeError(f"For 'take_along_axis', the 'indices' must hold ints, but got {indices.dtype}.")
    if indices.ndim != arr.ndim:
        raise ValueError(
            f"For 'take_along_axis', 'indices' and 'arr' must have the same number of dimensions, but got "
            f"{indices.ndim} and {arr.ndim}."
        )
    axis = _axis(axis, arr.ndim, "take_along_axis")
    other = [i for i in range(arr.ndim) if i != axis]
    try:
        common = _np.broadcast_shapes(*(tuple(t.shape[i] for i in other) for t in (arr, indices)))
    except ValueError:
        raise ValueError(
            f"For 'take_along_axis', the shapes {list(arr.shape)} of 'arr' and {list(indices.shape)} of 'indices' do "
            f"not broadcast outside axis {axis}."
        ) from None
    targets = []
    for t in (arr, indices):
        want = list(common)
        want.insert(axis, t.shape[axis])
        targets.append(t if tuple(t.shape) == tuple(want) else F.broadcast_to(t, tuple(want)))
    arr, indices = targets
    size = arr.shape[axis]
    indices = F.where(F.less(indices, 0), F.add(indices, size), indices)
    return FX.gather_elements(arr, axis, indices)


def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of ``shape`` of the flat ``indices`` (NumPy's ``unravel_index``): a tuple of
    int Tensors, one per dim of ``shape``, each of ``indices``' shape (for a 0-D index and a 1-D ``shape``, one
    1-element Tensor, as MindSpore's). ``order`` "C" (row-major) or "F". As MindSpore's, an index is clipped to
    [-size, size - 1] and a negative one counts from the end. FloorMod and FloorDiv on the device."""
    if order not in ("C", "F"):
        raise ValueError(f"For 'unravel_index', the 'order' must be 'C' or 'F', but got {order!r}.")
    shape = (shape,) if _is_int(shape) else tuple(shape)
    if not shape or not all(_is_int(d) and d > 0 for d in shape):
        raise ValueError(f"For 'unravel_index', the 'shape' must hold positive ints, but got {shape!r}.")
    indices = _tensor(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"For 'unravel_index', the 'indices' must hold ints, but got {indices.dtype}.")
    total = math.prod(shape)
    dims = shape if order == "C" else shape[::-1]
    strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]  # of each dim, in ``dims`` order
    indices = F.minimum(F.maximum(indices, -total), total - 1)
    flat = F.floor_mod(indices, total)
    coords = [F.floor_mod(F.floor_div(flat, stride), size) for stride, size in zip(strides, dims)]
    if order == "F":
        coords = coords[::-1]
    if indices.ndim == 0 and len(shape) == 1:
        return F.reshape(coords[0], (1,))
    return tuple(coords)


def array_split(x, indices_or_sections, axis=0):
    """``x`` split along ``axis`` into a list of Tensors (NumPy's ``array_split``): ``indices_or_sections`` an int
    N (N pieces, the first ``size % N`` of them one longer) or a list or tuple of split points (pieces past the end
    are empty). One Slice per piece, so it differentiates."""
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("For 'array_split', the 'x' must have at least one dimension, but got a 0-D Tensor.")
    axis = _axis(axis, x.ndim, "array_split")
    size = x.shape[axis]
    if _is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"For 'array_split', the number of sections must be positive, but got {sections}.")
        base, extra = divmod(size, sections)
        lengths = [base + 1] * extra + [base] * (sections - extra)
        points = list(_np.cumsum([0, *lengths]))
    elif isinstance(indices_or_sections, (list, tuple)) and all(_is_int(i) for i in indices_or_sections):
        points = [0, *(int(i) for i in indices_or_sections), size]
    else:
        raise TypeError(
            f"For 'array_split', the 'indices_or_sections' must be an int or a list or tuple of ints, but got "
            f"{indices_or_sections!r}."
        )
    pieces = []
    for start, stop in zip(points[:-1], points[1:]):
        start = min(max(start + size if start < 0 else start, 0), size)
        stop = min(max(stop + size if stop < 0 else stop, 0), size)
        begin, extent = [0] * x.ndim, list(x.shape)
        begin[axis], extent[axis] = start, max(stop - start, 0)
        pieces.append(F.slice(x, tuple(begin), tuple(extent)))
    return pieces


def split(x, indices_or_sections, axis=0):
    """``x`` split along ``axis`` (NumPy's ``split``, as MindSpore's ``mindspore.numpy.split``): an int N gives a
    tuple of N equal pieces (N must divide the axis), a list or tuple of split points the list of the pieces between
    them (negative points count from the end). An empty piece is a ValueError, as MindSpore's."""
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("For 'split', the 'x' must have at least one dimension, but got a 0-D Tensor.")
    size = x.shape[_axis(axis, x.ndim, "split")]
    if _is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0 or sections > size or size % sections:
            raise ValueError(
                f"For 'split', {sections} sections must be positive and divide the axis {axis} of size {size} into "
                "equal pieces (array_split allows unequal ones)."
            )
        return tuple(array_split(x, sections, axis))
    if isinstance(indices_or_sections, (list, tuple)) and all(_is_int(i) for i in indices_or_sections):
        points = [int(i) + size if i < 0 else int(i) for i in indices_or_sections]
        if any(b <= a for a, b in zip([0, *points], [*points, size])):
            raise ValueError(
                f"For 'split', the split points {list(indices_or_sections)} of the axis {axis} of size {size} must "
                "increase strictly within it: a piece would be empty."
            )
    return array_split(x, indices_or_sections, axis)


def vsplit(x, indices_or_sections):
    """``split`` along axis 0 (NumPy's ``vsplit``)."""
    return split(x, indices_or_sections, 0)


def hsplit(x, indices_or_sections):
    """``split`` along axis 1 (NumPy's ``hsplit``)."""
    return split(x, indices_or_sections, 1)


def dsplit(x, indices_or_sections):
    """``split`` along axis 2 (NumPy's ``dsplit``)."""
    return split(x, indices_or_sections, 2)


def column_stack(tup):
    """1-D Tensors as the columns (n, 1), 2-D ones as they are, concatenated along dim 1 (NumPy's
    ``column_stack``; a 0-D Tensor is a (1, 1) column). Concat, so it differentiates."""
    if not isinstance(tup, (list, tuple)):
        raise TypeError(f"For 'column_stack', the 'tup' must be a list or a tuple, but got {type(tup).__name__}.")
    if not tup:
        raise ValueError("For 'column_stack', the 'tup' must hold at least one Tensor, but got none.")
    columns = []
    for t in tup:
        t = _tensor(t)
        if t.ndim < 2:
            t = F.reshape(t, (-1, 1))
        columns.append(t)
    return F.concat(tuple(columns), 1)


def floor_divide(x1, x2, dtype=None):
    """The largest integer not greater than ``x1 / x2``, element by element with broadcasting (NumPy's
    ``floor_divide``; the FloorDiv primitive), cast to ``dtype`` when given."""
    return _out(F.floor_div(_tensor(x1), _tensor(x2)), dtype)
