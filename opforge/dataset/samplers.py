"""MindSpore's dataset samplers (``mindspore.dataset.Sampler``, ``DistributedSampler``, ``PKSampler``,
``RandomSampler``, ``SequentialSampler``, ``SubsetRandomSampler``, ``SubsetSampler``,
``WeightedRandomSampler``): which rows of a random-access source an epoch reads, in which order.

A sampler is given as a source's ``sampler=`` (``GeneratorDataset``, ``NumpySlicesDataset``, the file readers,
``MindDataset``) or by ``Dataset.use_sampler``. A list, tuple or array of row indices is a ``SubsetSampler``
of them; any other iterable of indices is read afresh each epoch (MindSpore's ``IterSampler``). A sampler
with a child (``add_child``) samples the child's output: its positions ``0 .. m-1`` pick among the ``m``
rows the child gives, as MindSpore's chained samplers do. ``num_samples`` 0 or None means every row.
``source.add_sampler(sampler)`` (MindSpore's ``MappableDataset.add_sampler``) makes the source's sampler
(or, without one, its shuffle, shards and ``num_samples`` as a sampler) the new sampler's child.

Random draws come from ``ds.config.set_seed``'s seed as the rest of the dataset engine's shuffles: epoch
``e`` draws from ``[seed, e]`` (so ``RandomSampler()`` reads the order ``shuffle=True`` reads), a chained
child from ``[seed, e, depth]``; without a seed, fresh entropy, except ``DistributedSampler``'s shuffle,
which every rank must draw alike: MindSpore's default seed 5489.

``DistributedSampler(num_shards, shard_id)``: ``ceil(rows / num_shards)`` rows per shard, shard ``d``
reading positions ``d, d + num_shards, ...`` of the (shuffled) order, wrapping around to its start, so that
the shards are disjoint but for the last rows. With ``offset`` >= 0 (``ConcatDataset.use_sampler`` sets it)
the rows are dealt out without wrapping, the first to shard ``offset``.

``ConcatDataset.use_sampler(DistributedSampler(..., shuffle=False))`` (``ds1 + ds2``; the model zoo's BERT
``create_eval_dataset`` pads with a ``PaddedDataset`` so) deals the concatenation's rows round-robin:
row ``g`` to shard ``g % num_shards``. A random-access child takes a ``DistributedSampler`` with the offset
its first row falls on (its own shuffle is replaced, as MindSpore's mappable children; the concatenation
reads a copy of it, so the dataset given to ``+`` keeps its rows); the rows of an iterable child are dealt
as they come.

MindSpore reports some bad values (``shard_id`` out of range, ``num_shards`` < 1, ``start_index`` < 0,
``num_val`` < 1, bad weights, a sampler with ``shuffle`` or shards) as ``RuntimeError``; here they raise an
error that is both a ``ValueError`` and a ``RuntimeError``.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from opforge.dataset import config
from opforge.dataset.shuffle_level import Shuffle

__all__ = [
    "BuiltinSampler",
    "Sampler",
    "DistributedSampler",
    "PKSampler",
    "RandomSampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "SubsetSampler",
    "WeightedRandomSampler",
]

_SHARED_SEED = 5489  # MindSpore's default dataset seed (engine._SHARED_SEED)


class SamplerError(ValueError, RuntimeError):
    """A bad sampler value: a ValueError, and the RuntimeError MindSpore raises for it."""


# ---------------------------------------------------------------------------------------------
# Argument checks


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"For '{where}', the '{name}' must be a bool, but got {value!r}.")
    return bool(value)


def _check_int(where: str, name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{where}', the '{name}' must be an int, but got {type(value).__name__} {value!r}.")
    return int(value)


def _check_num_samples(where: str, num_samples):
    if num_samples is None:
        return None
    num_samples = _check_int(where, "num_samples", num_samples)
    if num_samples < 0:
        raise ValueError(
            f"For '{where}', the 'num_samples' must be an int >= 0 (0 or None: all), but got {num_samples}."
        )
    return num_samples


def _rng(epoch: int, depth: int, shared: bool = False) -> np.random.Generator:
    """The epoch's draw: the engine's (``[seed, epoch]``, ``engine._epoch_rng``), salted by the depth of a
    chained child; fresh entropy without a seed unless ``shared`` (every rank draws alike: 5489)."""
    seed = config.get_seed()
    if seed is None and shared:
        seed = _SHARED_SEED
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([seed, epoch, depth] if depth else [seed, epoch])


# ---------------------------------------------------------------------------------------------
# Samplers


class BuiltinSampler:
    """The base of MindSpore's samplers: ``num_samples`` (None or 0: all), an optional child sampler
    (``add_child``) whose output it samples, ``get_num_samples``."""

    def __init__(self, num_samples=None):
        self.child_sampler = None
        self.num_samples = num_samples

    def add_child(self, sampler) -> None:
        """Sample the output of ``sampler``: this sampler's positions index the rows it gives."""
        if not isinstance(sampler, BuiltinSampler):
            raise TypeError(
                f"For '{type(self).__name__}.add_child', the 'sampler' must be a sampler, but got "
                f"{type(sampler).__name__}."
            )
        if self.child_sampler is not None:
            raise RuntimeError(f"For '{type(self).__name__}.add_child', the sampler already has a child.")
        self.child_sampler = sampler

    def get_child(self):
        return self.child_sampler

    def get_num_samples(self):
        """``num_samples``, or the child's when None; the smaller of the two when both are given."""
        child = None if self.child_sampler is None else self.child_sampler.get_num_samples()
        if self.num_samples is None:
            return child
        return self.num_samples if child is None else min(self.num_samples, child)

    def is_shuffled(self) -> bool:
        return False if self.child_sampler is None else self.child_sampler.is_shuffled()

    def is_sharded(self) -> bool:
        return False if self.child_sampler is None else self.child_sampler.is_sharded()

    # -- reading (opforge's): positions in [0, n) of the n rows below this sampler ---------------
    def _limit(self, n: int) -> int:
        return n if not self.num_samples else min(self.num_samples, n)

    def _positions(self, n: int, epoch: int, depth: int, source, below) -> np.ndarray:
        raise NotImplementedError

    def _count(self, n: int, source, below) -> int:
        return len(self._positions(n, 0, 0, source, below))

    def _check_source(self, where: str, source) -> None:
        """Refuse early a source this sampler cannot read (PKSampler's labels, RandomSampler's file modes)."""


class Sampler(BuiltinSampler):
    """MindSpore's base of a user's sampler: subclass it and write ``__iter__`` yielding row indices; each
    epoch ``dataset_size`` and ``num_samples`` are set (``num_samples``: the given count, capped by the
    dataset size) and the first ``num_samples`` indices are read; ``reset()`` runs before every epoch
    after the first."""

    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError

    def reset(self) -> None:
        """Called before each epoch after the first; override to change state between epochs."""

    def _handshake(self, ds_size: int, num_samples: int) -> None:
        self.dataset_size = ds_size
        self.num_samples = num_samples

    def _get_indices(self) -> np.ndarray:
        indices = np.array([index for _, index in zip(range(self.num_samples), iter(self))])
        if indices.dtype == object:
            raise RuntimeError(f"For '{type(self).__name__}', the indices it gave are not one array of ints.")
        return indices

    def add_child(self, sampler) -> None:
        self.child_sampler = sampler

    def get_num_samples(self):
        return None if self.num_samples is None else self._get_indices().size

    def _positions(self, n, epoch, depth, source, below):
        if epoch > 0:
            self.reset()
        self._handshake(n, self._limit(n))
        # MindSpore hands each element along the first axis to the source: a row of indices (NCF's batches)
        return _as_indices(type(self).__name__, self._get_indices(), rows=below is None)


class _IterSampler(Sampler):
    """An iterable of row indices given as a sampler (MindSpore's ``IterSampler``): iterated afresh each
    epoch, at most ``num_samples`` indices (and no more than the rows), counted by ``len()`` when it has one."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)

    def _count(self, n, source, below):
        if hasattr(self.sampler, "__len__"):  # counted without iterating it
            return min(len(self.sampler), self._limit(n))
        return super()._count(n, source, below)


class SequentialSampler(BuiltinSampler):
    """MindSpore's ``SequentialSampler(start_index=None, num_samples=None)``: the rows in order from
    ``start_index`` (0 when None), at most ``num_samples`` of them."""

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None:
            start_index = _check_int("SequentialSampler", "start_index", start_index)
            if start_index < 0:
                raise SamplerError(f"For 'SequentialSampler', the 'start_index' must be >= 0, but got {start_index}.")
        self.start_index = start_index
        super().__init__(_check_num_samples("SequentialSampler", num_samples))

    def _span(self, n: int) -> tuple:
        start = self.start_index or 0
        return start, max(0, self._limit(n - start)) if start < n else 0

    def _positions(self, n, epoch, depth, source, below):
        start, count = self._span(n)
        if start >= n:
            raise SamplerError(f"For 'SequentialSampler', the 'start_index' ({start}) must be less than the {n} rows.")
        return np.arange(start, start + count)

    def _count(self, n, source, below):
        return self._span(n)[1]


class RandomSampler(BuiltinSampler):
    """MindSpore's ``RandomSampler(replacement=False, num_samples=None, shuffle=Shuffle.GLOBAL)``: a new
    random order of the rows each epoch (its first ``num_samples``), or with ``replacement`` ``num_samples``
    (default: the row count) uniform draws. ``Shuffle.FILES`` / ``Shuffle.INFILE`` (``MindDataset`` only):
    the files in a random order, or each file's rows. ``reshuffle_each_epoch = False`` (``Dataset.split`` sets
    it): epoch 0's order every epoch, drawn from the seed, MindSpore's default 5489 without one."""

    def __init__(self, replacement=False, num_samples=None, shuffle=Shuffle.GLOBAL):
        self.replacement = _check_bool("RandomSampler", "replacement", replacement)
        if not isinstance(shuffle, Shuffle):
            raise TypeError(
                "For 'RandomSampler', the 'shuffle' must be a Shuffle level (Shuffle.GLOBAL, Shuffle.FILES, "
                f"Shuffle.INFILE), but got {shuffle!r}."
            )
        self.shuffle = shuffle
        self.reshuffle_each_epoch = True
        super().__init__(_check_num_samples("RandomSampler", num_samples))

    def is_shuffled(self) -> bool:
        return True

    def _check_source(self, where, source):
        if self.shuffle is not Shuffle.GLOBAL and (self.child_sampler is not None or not hasattr(source, "_starts")):
            raise ValueError(
                f"For '{where}', RandomSampler's 'shuffle' {self.shuffle} needs a reader of files (MindDataset) "
                "and no child sampler; other datasets take Shuffle.GLOBAL."
            )

    def _positions(self, n, epoch, depth, source, below):
        k = self._limit(n)
        rng = _rng(epoch, depth) if self.reshuffle_each_epoch else _rng(0, depth, shared=True)
        if self.replacement:
            return rng.integers(0, n, size=k) if n else np.zeros(0, np.int64)
        if self.shuffle is Shuffle.GLOBAL:
            return rng.permutation(n)[:k]
        self._check_source(type(self).__name__, source)
        return _file_order(source, self.shuffle, rng)[:k]

    def _count(self, n, source, below):
        return self._limit(n)


def _file_order(source, mode: Shuffle, rng) -> np.ndarray:
    """The rows of a reader of files (``shuffle.FileRows``) in ``Shuffle.FILES`` or ``Shuffle.INFILE`` order,
    its padded rows last (as ``FileRows`` orders them)."""
    starts = source._starts
    files = np.arange(len(starts) - 1)
    if mode is Shuffle.FILES:
        files = rng.permutation(files)
    parts = [np.arange(starts[f], starts[f + 1]) for f in files]
    if mode is Shuffle.INFILE:
        parts = [rng.permutation(p) for p in parts]
    parts.append(np.arange(starts[-1], starts[-1] + getattr(source, "_num_padded", 0)))
    return np.concatenate(parts)


class DistributedSampler(BuiltinSampler):
    """MindSpore's ``DistributedSampler(num_shards, shard_id, shuffle=True, num_samples=None, offset=-1)``:
    shard ``shard_id``'s rows of ``num_shards``. With ``offset`` -1 every shard reads ``ceil(rows / num_shards)``
    rows: positions ``shard_id + k * num_shards`` of the epoch's order (shuffled, alike on every rank, when
    ``shuffle``), wrapping around to its start. With ``offset`` in [0, num_shards] the rows are dealt
    without wrapping, row ``p`` to shard ``(p + offset) % num_shards``. ``num_samples`` caps each shard."""

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        where = "DistributedSampler"
        num_shards = _check_int(where, "num_shards", num_shards)
        shard_id = _check_int(where, "shard_id", shard_id)
        self.shuffle = _check_bool(where, "shuffle", shuffle)
        num_samples = _check_num_samples(where, num_samples)
        offset = _check_int(where, "offset", offset)
        if num_shards < 1:
            raise SamplerError(f"For '{where}', the 'num_shards' must be an int >= 1, but got {num_shards}.")
        if not 0 <= shard_id < num_shards:
            raise SamplerError(f"For '{where}', the 'shard_id' must be in [0, {num_shards}), but got {shard_id}.")
        if offset < -1 or offset > num_shards:
            raise SamplerError(f"For '{where}', the 'offset' must be -1 or in [0, {num_shards}], but got {offset}.")
        self.num_shards, self.shard_id, self.offset = num_shards, shard_id, offset
        self.seed = config.get_seed()
        super().__init__(num_samples)

    def is_shuffled(self) -> bool:
        return self.shuffle if self.child_sampler is None else self.child_sampler.is_shuffled()

    def is_sharded(self) -> bool:
        return self.num_shards > 1 if self.child_sampler is None else self.child_sampler.is_sharded()

    def set_offset(self, offset):
        self.offset = offset
        return self

    def _slots(self, n: int) -> np.ndarray:
        shards, shard = self.num_shards, self.shard_id
        if n == 0:
            return np.zeros(0, np.int64)
        if self.offset == -1:  # equal shards: the last rows wrap around to the first
            per = -(-n // shards)
            slots = (np.arange(per) * shards + shard) % n
        else:
            slots = np.arange((shard - self.offset) % shards, n, shards)
        return slots[: self._limit(n)]

    def _positions(self, n, epoch, depth, source, below):
        slots = self._slots(n)
        return _rng(epoch, depth, shared=True).permutation(n)[slots] if self.shuffle else slots

    def _count(self, n, source, below):
        return len(self._slots(n))


class SubsetSampler(BuiltinSampler):
    """MindSpore's ``SubsetSampler(indices, num_samples=None)``: the rows ``indices`` (an iterable of ints,
    or one int), in their order, the first ``num_samples`` of them."""

    _name = "SubsetSampler"

    def __init__(self, indices, num_samples=None):
        num_samples = _check_num_samples(self._name, num_samples)
        if isinstance(indices, (int, np.integer)) and not isinstance(indices, (bool, np.bool_)):
            indices = [indices]
        elif isinstance(indices, (str, bytes)) or not hasattr(indices, "__iter__"):
            raise TypeError(
                f"For '{self._name}', the 'indices' must be an iterable of ints, but got {type(indices).__name__}."
            )
        else:
            indices = list(indices) if num_samples is None else [i for i, _ in zip(indices, range(num_samples))]
        for k, item in enumerate(indices):
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
                raise TypeError(
                    f"For '{self._name}', every index must be an int, but indices[{k}] is "
                    f"{type(item).__name__} {item!r}."
                )
        self.indices = indices
        super().__init__(num_samples)

    def get_num_samples(self):
        num_samples = super().get_num_samples()
        return len(self.indices) if num_samples is None else min(len(self.indices), num_samples)

    def _positions(self, n, epoch, depth, source, below):
        return np.array(self.indices, dtype=np.int64)

    def _count(self, n, source, below):
        return len(self.indices)


class SubsetRandomSampler(SubsetSampler):
    """MindSpore's ``SubsetRandomSampler(indices, num_samples=None)``: the rows ``indices`` in a new random
    order each epoch (the first ``num_samples`` of ``indices``)."""

    _name = "SubsetRandomSampler"

    def is_shuffled(self) -> bool:
        return True

    def _positions(self, n, epoch, depth, source, below):
        return _rng(epoch, depth).permutation(np.array(self.indices, dtype=np.int64))


class WeightedRandomSampler(BuiltinSampler):
    """MindSpore's ``WeightedRandomSampler(weights, num_samples=None, replacement=True)``: ``num_samples``
    (default: the row count) rows among ``0 .. len(weights)-1``, row ``i`` drawn with probability
    ``weights[i] / sum(weights)``; without ``replacement`` each row at most once (keys ``Exp(1) / w_i``,
    smallest first). ``len(weights)`` must not exceed the rows."""

    def __init__(self, weights, num_samples=None, replacement=True):
        where = "WeightedRandomSampler"
        if isinstance(weights, np.ndarray):
            weights = weights.reshape(-1).tolist()
        elif not isinstance(weights, (list, tuple)):
            weights = [weights]
        for k, w in enumerate(weights):
            if isinstance(w, (bool, np.bool_)) or not isinstance(w, numbers.Number):
                raise TypeError(f"For '{where}', every weight must be a number, but weights[{k}] is {w!r}.")
        num_samples = _check_num_samples(where, num_samples)
        self.replacement = _check_bool(where, "replacement", replacement)
        array = np.asarray(weights, np.float64)
        if array.size == 0 or not np.all(np.isfinite(array)) or (array < 0).any() or not (array > 0).any():
            raise SamplerError(
                f"For '{where}', the 'weights' must be finite, >= 0 and not all 0 (nor empty), but got {weights}."
            )
        self.weights = list(weights)
        super().__init__(num_samples)

    def is_shuffled(self) -> bool:
        return True

    def _count(self, n, source, below):
        k = self._limit(n)
        if len(self.weights) > n:
            raise SamplerError(
                f"For 'WeightedRandomSampler', the {len(self.weights)} weights must not exceed the {n} rows."
            )
        if not self.replacement and len(self.weights) < k:
            raise SamplerError(
                f"For 'WeightedRandomSampler', without replacement the {len(self.weights)} weights must be at "
                f"least the {k} samples drawn."
            )
        return k

    def _positions(self, n, epoch, depth, source, below):
        k = self._count(n, source, below)
        w = np.asarray(self.weights, np.float64)
        rng = _rng(epoch, depth)
        if self.replacement:
            return rng.choice(len(w), size=k, p=w / w.sum())
        with np.errstate(divide="ignore"):
            keys = rng.exponential(size=len(w)) / w  # a zero weight: an infinite key, drawn last
        return np.argsort(keys, kind="stable")[:k]


class PKSampler(BuiltinSampler):
    """MindSpore's ``PKSampler(num_val, num_class=None, shuffle=False, class_column='label', num_samples=None)``:
    for each class (sorted, or in a random order with ``shuffle``) ``num_val`` rows of that class drawn at
    random (with replacement), ``num_val * classes`` rows in all. The classes are the source's labels: its
    ``label`` column (``coarse_label`` for Cifar100Dataset), ``class_column`` of a MindDataset; a
    GeneratorDataset has none."""

    def __init__(self, num_val, num_class=None, shuffle=False, class_column="label", num_samples=None):
        where = "PKSampler"
        num_val = _check_int(where, "num_val", num_val)
        if num_class is not None:
            raise NotImplementedError("For 'PKSampler', 'num_class' is not supported (MindSpore's neither).")
        self.shuffle = _check_bool(where, "shuffle", shuffle)
        if not isinstance(class_column, str):
            raise TypeError(f"For '{where}', the 'class_column' must be a str, but got {class_column!r}.")
        num_samples = _check_num_samples(where, num_samples)
        if num_val < 1:
            raise SamplerError(f"For '{where}', the 'num_val' must be an int >= 1, but got {num_val}.")
        self.num_val, self.class_column = num_val, class_column
        super().__init__(num_samples)

    def is_shuffled(self) -> bool:
        return self.shuffle if self.child_sampler is None else self.child_sampler.is_shuffled()

    def _check_source(self, where, source):
        _label_column(where, source, self.class_column)

    def _classes(self, source, below) -> tuple:
        labels = _class_labels(source, self.class_column)
        if below is not None:
            labels = labels[below]
        return labels, np.unique(labels)

    def _positions(self, n, epoch, depth, source, below):
        labels, classes = self._classes(source, below)
        rng = _rng(epoch, depth)
        if self.shuffle:
            classes = rng.permutation(classes)
        total = self.num_val * len(classes)
        picks = []
        for t in range(min(self.num_samples or total, total)):
            members = np.flatnonzero(labels == classes[t // self.num_val])
            picks.append(members[rng.integers(len(members))])
        return np.array(picks, dtype=np.int64)

    def _count(self, n, source, below):
        total = self.num_val * len(self._classes(source, below)[1])
        return min(self.num_samples or total, total)


# ---------------------------------------------------------------------------------------------
# Class labels (PKSampler)


def _label_column(where: str, source, class_column: str) -> str:
    """The column holding a source's classes, or a ValueError when it has none."""
    if getattr(source, "where", None) in ("GeneratorDataset", "NumpySlicesDataset", "PaddedDataset"):
        raise ValueError(f"For '{where}', PKSampler needs a reader of labelled rows; {source.where} has no classes.")
    if hasattr(source, "_files_set"):  # MindDataset: any field of the files
        if class_column not in source._files_set.schema:
            raise ValueError(
                f"For '{where}', PKSampler's 'class_column' '{class_column}' is not a field of "
                f"{sorted(source._files_set.schema)}."
            )
        return class_column
    for column in ("label", "coarse_label"):  # MindSpore's Cifar100 classes are its first label
        if column in source._columns:
            return column
    raise ValueError(f"For '{where}', PKSampler needs a 'label' column, but the columns are {source._columns}.")


def _class_labels(source, class_column: str) -> np.ndarray:
    """Every row's class, read once per source (an image folder's from its file list)."""
    cache = source.__dict__.setdefault("_class_labels", {})
    if class_column not in cache:
        column = _label_column(type(source).__name__, source, class_column)
        if hasattr(source, "_paths") and hasattr(source, "_labels"):  # ImageFolderDataset: no image read
            labels = list(source._labels)
        elif hasattr(source, "_files_set"):
            labels = [_mindrecord_label(source, i, column) for i in range(source._length)]
        else:
            k = source._columns.index(column)
            labels = [np.asarray(source._read_checked(i)[k]).item() for i in range(source._length)]
        cache[class_column] = np.asarray(labels)
    return cache[class_column]


def _mindrecord_label(source, i: int, column: str):
    if i >= source._rows_in_files:  # a padded row: the padded sample's value
        return np.asarray(source._padded[source._columns.index(column)]).item()
    shard, row = source.locate(i)
    return np.asarray(source._files_set.read(shard, row, [column])[column]).item()


# ---------------------------------------------------------------------------------------------
# The engine's side: choosing, reading and counting


def _as_indices(name: str, values, rows: bool = False) -> np.ndarray:
    """Integer positions, one per row; ``rows``: a user Sampler's N-d array, whose rows a source reads."""
    idx = np.asarray(values)
    if idx.size == 0:
        return np.zeros(0, np.int64)
    if (idx.ndim != 1 and not (rows and idx.ndim > 1)) or not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"For '{name}', the indices must be ints, but got {idx.dtype} values of shape {idx.shape}.")
    return idx.astype(np.int64)


def select(where: str, sampler, random_access: bool, shuffle, num_shards, num_samples, int_ok: bool = False):
    """The sampler a source reads with (None for none), checked as MindSpore's sources check ``sampler``:
    a sampler as is, a list/tuple/array of indices as a ``SubsetSampler``, another iterable as an
    ``IterSampler`` (``num_samples`` goes to those two), an int (file readers only) as ``SubsetSampler([i])``;
    no ``shuffle``, shards, or (with a sampler object) ``num_samples`` beside it."""
    if sampler is None:
        return None
    if isinstance(sampler, BuiltinSampler):
        chosen = sampler
    elif isinstance(sampler, (list, tuple, np.ndarray)):
        chosen = SubsetSampler(sampler, num_samples)
    elif int_ok and isinstance(sampler, (int, np.integer)) and not isinstance(sampler, (bool, np.bool_)):
        chosen = SubsetSampler([sampler])
    elif hasattr(sampler, "__iter__") and not isinstance(sampler, (str, bytes)):
        chosen = _IterSampler(sampler, num_samples)
    else:
        raise TypeError(
            f"For '{where}', the 'sampler' must be an iterable of row indices or a sampler (ds.RandomSampler, "
            f"ds.DistributedSampler, ...), but got {type(sampler).__name__}."
        )
    if not random_access:
        raise ValueError(f"For '{where}', 'sampler' needs a random-access source (__getitem__ and __len__).")
    if shuffle is not None:
        raise SamplerError(f"For '{where}', 'sampler' and 'shuffle' cannot be specified at the same time.")
    if num_shards is not None:
        raise SamplerError(f"For '{where}', 'sampler' and sharding cannot be specified at the same time.")
    if num_samples is not None and isinstance(sampler, BuiltinSampler):
        raise SamplerError(
            f"For '{where}', 'sampler' and 'num_samples' cannot be specified at the same time: give the sampler "
            "its num_samples."
        )
    return chosen


def check_source(where: str, sampler, source) -> None:
    """Refuse a sampler chain that cannot read ``source`` (called when the source takes it)."""
    while sampler is not None:
        sampler._check_source(where, source)
        sampler = sampler.child_sampler


def _indices_of(sampler, length: int, epoch: int, depth: int, source) -> np.ndarray:
    child = sampler.child_sampler
    below = None if child is None else _indices_of(child, length, epoch, depth + 1, source)
    n = length if below is None else len(below)
    pos = _as_indices(type(sampler).__name__, sampler._positions(n, epoch, depth, source, below), below is None)
    if below is None:
        return pos
    bad = pos[(pos < 0) | (pos >= n)]
    if bad.size:
        raise ValueError(
            f"For '{type(sampler).__name__}', the position {int(bad[0])} is not one of the {n} rows its child "
            "sampler gives."
        )
    return below[pos]


def epoch_indices(where: str, source, epoch: int) -> np.ndarray:
    """The source's rows for ``epoch`` that its sampler picks, each checked to be a row of the source."""
    length = source._length
    idx = _indices_of(source._sampler, length, epoch, 0, source)
    if idx.ndim > 1:  # rows of indices: the source's __getitem__ reads each row as it is (MindSpore's)
        return idx
    bad = idx[(idx < 0) | (idx >= length)]
    if bad.size:
        raise ValueError(f"For '{where}', the sampler gave the index {int(bad[0])}, but the source has {length} rows.")
    return idx


def _count_of(sampler, length: int, source) -> int:
    child = sampler.child_sampler
    if child is None:
        return sampler._count(length, source, None)
    if isinstance(sampler, (PKSampler, Sampler)):  # these count the rows their child gives
        return len(_indices_of(sampler, length, 0, 0, source))
    return sampler._count(_count_of(child, length, source), source, None)


def count(where: str, source) -> int:
    """The rows an epoch of the source's sampler reads (``get_dataset_size``), drawn only where needed."""
    return _count_of(source._sampler, source._length, source)


# ---------------------------------------------------------------------------------------------
# MappableDataset.add_sampler


class _SourceOrder(BuiltinSampler):
    """A source's own order (its shuffle, shards and ``num_samples``, without a sampler) as a sampler: the
    child ``add_sampler`` puts under the new sampler, as MindSpore makes one of those arguments. It reads a
    copy of the source taken then, so a later ``use_sampler`` (which drops them) keeps that order."""

    def __init__(self, source):
        self._source = copy.copy(source)
        super().__init__(source._num_samples)

    def is_shuffled(self) -> bool:
        return bool(self._source._shuffle)

    def is_sharded(self) -> bool:
        num_shards = self._source._shards[0]
        return num_shards is not None and num_shards > 1

    def _positions(self, n, epoch, depth, source, below):
        return self._source._indices(epoch)

    def _count(self, n, source, below):
        return len(self._source._indices(0))


def add_sampler(source, new_sampler) -> None:
    """MindSpore's ``MappableDataset.add_sampler``: ``new_sampler`` becomes the source's sampler, and the one
    it had (or its shuffle, shards and ``num_samples`` as one) its child, whose rows it samples."""
    where = f"{source.where}.add_sampler"
    if not isinstance(new_sampler, BuiltinSampler):
        raise TypeError(
            f"For '{where}', the 'new_sampler' must be a sampler (ds.DistributedSampler, ...), but got "
            f"{type(new_sampler).__name__}."
        )
    if getattr(source, "_length", None) is None:
        raise ValueError(f"For '{where}', a sampler needs a random-access source (__getitem__ and __len__).")
    child = source._sampler if source._sampler is not None else _SourceOrder(source)
    new_sampler.add_child(child)
    try:
        check_source(where, new_sampler, source)
    except Exception:
        new_sampler.child_sampler = None  # leave the sampler as it was given
        raise
    source._sampler = new_sampler
    source._shards, source._shuffle, source._num_samples = (None, None), False, None


# ---------------------------------------------------------------------------------------------
# Dataset.use_sampler


def use_sampler(dataset, new_sampler) -> None:
    """MindSpore's ``Dataset.use_sampler``: the source(s) below ``dataset`` read with ``new_sampler`` (which
    keeps the replaced sampler's child); a concatenation deals its rows among the shards of a
    ``DistributedSampler``."""
    if new_sampler is None:
        raise TypeError("For 'use_sampler', the 'new_sampler' can not be None.")
    if not isinstance(new_sampler, BuiltinSampler):
        raise TypeError(
            f"For 'use_sampler', the 'new_sampler' must be a sampler (ds.DistributedSampler, ...), but got "
            f"{type(new_sampler).__name__}."
        )
    _use(dataset, new_sampler)


def _use(dataset, new_sampler) -> None:
    if hasattr(dataset, "children"):
        _use_on_concat(dataset, new_sampler)
    elif hasattr(dataset, "parent"):
        _use(dataset.parent, new_sampler)
    else:
        _use_on_source(dataset, new_sampler)


def _use_on_source(source, new_sampler) -> None:
    where = f"{source.where}.use_sampler"
    if getattr(source, "_length", None) is None:
        raise ValueError(f"For '{where}', a sampler needs a random-access source (__getitem__ and __len__).")
    old = source._sampler
    child = old.child_sampler if isinstance(old, BuiltinSampler) else None
    if child is not None and new_sampler.child_sampler is not child:
        new_sampler.add_child(child)
    check_source(where, new_sampler, source)
    source._sampler = new_sampler
    source._shards, source._shuffle, source._num_samples = (None, None), False, None


def _leaf(dataset):
    """The source under a chain of operations, and whether a batch is on the way."""
    batched = False
    while hasattr(dataset, "parent"):
        batched = batched or hasattr(dataset, "batch_size")  # a batch (engine._Batch, engine._MapBatch)
        dataset = dataset.parent
    return dataset, batched


def _use_on_concat(concat, sampler) -> None:
    where = "ConcatDataset.use_sampler"
    if not isinstance(sampler, DistributedSampler):
        raise TypeError(f"For '{where}', the sampler must be a DistributedSampler, but got {type(sampler).__name__}.")
    if sampler.is_shuffled():
        raise ValueError(f"For '{where}', the DistributedSampler's 'shuffle' must be False.")
    if sampler.get_num_samples() is not None:
        raise ValueError(f"For '{where}', the DistributedSampler's 'num_samples' is not supported: leave it None.")
    shards, shard = sampler.num_shards, sampler.shard_id
    sizes = [child._size() for child in concat.children]
    children, keeps, start = [], [], 0
    for child, size in zip(concat.children, sizes):
        leaf, batched = _leaf(child)
        if batched or hasattr(leaf, "children"):
            raise TypeError(f"For '{where}', a concatenated dataset must not be batched.")
        if getattr(leaf, "_length", None) is not None:  # random access: its rows from its own sampler
            if leaf._num_samples is not None or (leaf._sampler is not None and leaf._sampler.get_num_samples()):
                raise ValueError(f"For '{where}', a concatenated {leaf.where} must not have 'num_samples'.")
            child = _copy_chain(child)  # the concatenation's own: the dataset given to it keeps its rows
            _use(child, copy.deepcopy(sampler).set_offset(start))
            keeps.append(None)
        else:  # an iterable: its rows dealt as they come
            keeps.append((shards, shard, start))
        children.append(child)
        start = (start + size) % shards
    concat.children, concat._keeps = children, keeps


def _copy_chain(dataset):
    """A copy of a chain of operations and its source (sharing the source's data)."""
    dataset = copy.copy(dataset)
    if hasattr(dataset, "parent"):
        dataset.parent = _copy_chain(dataset.parent)
    return dataset


def kept_count(n: int, keep) -> int:
    """How many of a concatenated child's ``n`` rows its shard keeps (``keep``: None for all)."""
    if keep is None:
        return n
    shards, shard, start = keep
    return len(range((shard - start) % shards, n, shards))


def kept_rows(rows, keep):
    """A concatenated child's rows that its shard keeps: row ``j`` when ``(start + j) % shards == shard``."""
    if keep is None:
        yield from rows
        return
    shards, shard, start = keep
    for j, row in enumerate(rows):
        if (start + j) % shards == shard:
            yield row
