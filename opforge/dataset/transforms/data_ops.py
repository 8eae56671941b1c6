"""MindSpore's general data transforms of ``dataset.transforms`` on NumPy arrays (the model zoo's BERT
fine-tuning preprocessing builds its inputs with them): ``Concatenate``, ``Duplicate``, ``Fill``, ``Mask``
(with the ``Relational`` operators), ``PadEnd``, ``Slice``; and the random choices ``RandomChoice`` and
``RandomApply`` (drawing from the dataset seed when it is set)."""

from __future__ import annotations

import numbers

import numpy as np

from opforge import dtype as mstype
from opforge.dataset.vision.random_source import transform_rng as _rng

__all__ = ["Concatenate", "Duplicate", "Fill", "Mask", "Relational", "PadEnd", "Slice", "RandomChoice", "RandomApply"]


def _array(op: str, x, min_rank: int = 0) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim < min_rank:
        raise ValueError(f"For '{op}', the input must have rank >= {min_rank}, but got shape {x.shape}.")
    return x


class Concatenate:
    """``Concatenate(axis=0, prepend=None, append=None)``: a 1-D array with ``prepend`` before it and
    ``append`` after it (1-D arrays of a compatible dtype); ``axis`` 0 or -1. Given several input columns,
    MindSpore's concatenates them all, in order (the zoo's CMNLI preprocessing joins two segment columns)."""

    def __init__(self, axis=0, prepend=None, append=None):
        if isinstance(axis, bool) or not isinstance(axis, int) or axis not in (0, -1):
            raise ValueError(f"For 'Concatenate', the 'axis' must be 0 or -1, but got {axis!r}.")
        for name, value in (("prepend", prepend), ("append", append)):
            if value is not None and np.asarray(value).ndim != 1:
                raise ValueError(f"For 'Concatenate', the '{name}' must be a 1-D array, but got {value!r}.")
        self.axis = axis
        self.prepend = None if prepend is None else np.asarray(prepend)
        self.append = None if append is None else np.asarray(append)

    def __call__(self, *inputs):
        if not inputs:
            raise ValueError("For 'Concatenate', give at least one input.")
        columns = [_array("Concatenate", c) for c in inputs]
        for c in columns:
            if c.ndim != 1:
                raise ValueError(f"For 'Concatenate', the input must be 1-D, but got shape {c.shape}.")
        x = columns[0]
        parts = [p for p in (self.prepend, *columns, self.append) if p is not None]
        if x.dtype.kind in "US":
            return np.concatenate([p.astype(x.dtype.kind) for p in parts])
        return np.concatenate([p.astype(x.dtype) for p in parts])


class Duplicate:
    """``Duplicate()``: the input and a copy of it, as two columns (``output_columns`` names both)."""

    def __call__(self, x):
        x = np.asarray(x)
        return x, x.copy()


class Fill:
    """``Fill(fill_value)``: an array of the input's shape and dtype, every element ``fill_value`` (cast to
    that dtype; a str for string arrays)."""

    def __init__(self, fill_value):
        if not isinstance(fill_value, (numbers.Number, str, bytes, np.generic)):
            raise TypeError(f"For 'Fill', the 'fill_value' must be a number or a str, but got {fill_value!r}.")
        self.fill_value = fill_value

    def __call__(self, x):
        x = np.asarray(x)
        if (x.dtype.kind in "US") != isinstance(self.fill_value, (str, bytes)):
            raise TypeError(
                f"For 'Fill', the 'fill_value' {self.fill_value!r} does not fit the input's dtype {x.dtype}."
            )
        if x.dtype.kind in "US":
            return np.full(x.shape, self.fill_value)
        return np.full(x.shape, self.fill_value).astype(x.dtype)


class Relational:
    """The comparisons ``Mask`` applies (MindSpore's names): EQ, NE, GT, GE, LT, LE."""

    EQ, NE, GT, GE, LT, LE = "EQ", "NE", "GT", "GE", "LT", "LE"


_COMPARE = {
    Relational.EQ: np.equal, Relational.NE: np.not_equal, Relational.GT: np.greater,
    Relational.GE: np.greater_equal, Relational.LT: np.less, Relational.LE: np.less_equal,
}  # fmt: skip


class Mask:
    """``Mask(operator, constant, dtype=mstype.bool_)``: ``x <operator> constant`` elementwise (a
    ``Relational``), as ``dtype`` (bool by default; a number dtype gives 1 and 0)."""

    def __init__(self, operator, constant, dtype=mstype.bool_):
        if operator not in _COMPARE:
            raise TypeError(f"For 'Mask', the 'operator' must be a Relational, but got {operator!r}.")
        if not isinstance(constant, (numbers.Number, str, bytes, np.generic)):
            raise TypeError(f"For 'Mask', the 'constant' must be a number or a str, but got {constant!r}.")
        self.operator, self.constant = operator, constant
        self.np_dtype = mstype.to_dtype(dtype).np_dtype

    def __call__(self, x):
        x = np.asarray(x)
        constant = self.constant if x.dtype.kind in "US" else np.asarray(self.constant).astype(x.dtype)
        return _COMPARE[self.operator](x, constant).astype(self.np_dtype)


class PadEnd:
    """``PadEnd(pad_shape, pad_value=None)``: the input padded at the end of each dim to ``pad_shape`` (a list
    of ints, None keeping a dim), with ``pad_value`` (0, or "" for strings, when None); a dim longer than its
    target is cut to it."""

    def __init__(self, pad_shape, pad_value=None):
        if not isinstance(pad_shape, list) or not all(
            d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0) for d in pad_shape
        ):
            raise TypeError(f"For 'PadEnd', the 'pad_shape' must be a list of ints >= 0 or None, got {pad_shape!r}.")
        self.pad_shape, self.pad_value = pad_shape, pad_value

    def __call__(self, x):
        x = np.asarray(x)
        if len(self.pad_shape) != x.ndim:
            raise ValueError(
                f"For 'PadEnd', the 'pad_shape' {self.pad_shape} must have one entry per dim of the input {x.shape}."
            )
        target = tuple(n if d is None else d for n, d in zip(x.shape, self.pad_shape))
        value = self.pad_value if self.pad_value is not None else ("" if x.dtype.kind in "US" else 0)
        out = np.full(target, value, dtype=x.dtype if x.dtype.kind not in "US" else object)
        region = tuple(slice(0, min(n, t)) for n, t in zip(x.shape, target))
        out[region] = x[region]
        return out.astype(x.dtype.kind) if x.dtype.kind in "US" else out


class Slice:
    """``Slice(*slices)``: the input indexed per dim by ``slices``: an int (kept as a dim of 1), a list of
    ints, a ``slice`` object, None (the whole dim) or an Ellipsis; fewer slices than dims keep the rest."""

    def __init__(self, *slices):
        for s in slices:
            ok = s is None or s is Ellipsis or isinstance(s, slice)
            ok = ok or (isinstance(s, int) and not isinstance(s, bool))
            ok = ok or (isinstance(s, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in s))
            if not ok:
                raise TypeError(
                    f"For 'Slice', each slice must be an int, a list of ints, a slice, None or ..., got {s!r}."
                )
        if sum(s is Ellipsis for s in slices) > 1:
            raise ValueError("For 'Slice', at most one Ellipsis may be given.")
        self.slices = slices

    def __call__(self, x):
        x = _array("Slice", x, 1)
        items = list(self.slices)
        if Ellipsis in items:  # the whole of the dims it stands for
            at = items.index(Ellipsis)
            items[at : at + 1] = [None] * (x.ndim - len(items) + 1)
        if len(items) > x.ndim:
            raise ValueError(f"For 'Slice', {len(self.slices)} slices were given for an input of rank {x.ndim}.")
        out = x
        for axis, item in enumerate(items):  # one dim at a time: lists index each dim on its own
            if item is None:
                continue
            if isinstance(item, int):
                item = [item]  # an int keeps its dim (of size 1), as MindSpore's
            out = np.take(out, item, axis=axis) if isinstance(item, list) else out[(slice(None),) * axis + (item,)]
        return out


class RandomChoice:
    """``RandomChoice(transforms)``: one of ``transforms`` (a list of callables) chosen uniformly per row."""

    def __init__(self, transforms):
        if not isinstance(transforms, list) or not transforms or not all(callable(t) for t in transforms):
            raise TypeError(
                f"For 'RandomChoice', the 'transforms' must be a non-empty list of callables, but got {transforms!r}."
            )
        self.transforms = transforms

    def __call__(self, *values):
        return self.transforms[int(_rng().integers(0, len(self.transforms)))](*values)


class RandomApply:
    """``RandomApply(transforms, prob=0.5)``: with probability ``prob`` the ``transforms`` (a list) in order,
    else the input unchanged."""

    def __init__(self, transforms, prob=0.5):
        if not isinstance(transforms, list) or not transforms or not all(callable(t) for t in transforms):
            raise TypeError(
                f"For 'RandomApply', the 'transforms' must be a non-empty list of callables, but got {transforms!r}."
            )
        if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 <= prob <= 1:
            raise ValueError(f"For 'RandomApply', the 'prob' must be a number in [0, 1], but got {prob!r}.")
        self.transforms, self.prob = transforms, float(prob)

    def __call__(self, *values):
        if _rng().random() >= self.prob:
            return values if len(values) > 1 else values[0]
        for t in self.transforms:
            out = t(*values)
            values = out if isinstance(out, tuple) else (out,)
        return values if len(values) > 1 else values[0]
