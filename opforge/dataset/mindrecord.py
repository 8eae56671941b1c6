"""MindSpore's ``MindDataset``: the rows of a MindRecord dataset (written by ``opforge.mindrecord.FileWriter``
or by MindSpore's) in a ``mindspore.dataset`` pipeline. The format and its reading are
``opforge.mindrecord``'s."""

from __future__ import annotations

import numpy as np

from opforge.dataset import cache_client, samplers
from opforge.dataset.shuffle import FileRows, Shuffle, shuffle_mode
from opforge.mindrecord.filereader import ShardSet

__all__ = ["MindDataset"]

_WHERE = "MindDataset"


def column_array(spec: dict, value) -> np.ndarray:
    """A field's value as MindDataset gives it: a scalar of its type (int32, int64, float32, float64), a
    str for a string, a 1-D uint8 array for bytes, the array (its type, its shape) for an array field."""
    kind = spec["type"]
    if kind == "bytes":
        data = value.tobytes() if isinstance(value, np.ndarray) else bytes(value)
        return np.frombuffer(data, np.uint8).copy()
    if kind == "string":
        return np.array(value, dtype=np.str_)
    array = np.asarray(value, dtype=kind)
    return array.reshape(spec["shape"]) if "shape" in spec else array.reshape(())


def _check_padding(columns_list, padded_sample, num_padded) -> int:
    if padded_sample is None:
        if num_padded is not None:
            raise RuntimeError(f"For '{_WHERE}', 'num_padded' is given but 'padded_sample' is not.")
        return 0
    if not isinstance(padded_sample, dict):
        raise TypeError(f"For '{_WHERE}', the 'padded_sample' must be a dict, but got {type(padded_sample).__name__}.")
    if num_padded is None:
        raise RuntimeError(f"For '{_WHERE}', 'padded_sample' is given and needs 'num_padded' as well.")
    if isinstance(num_padded, bool) or not isinstance(num_padded, int) or num_padded < 0:
        raise ValueError(f"For '{_WHERE}', the 'num_padded' must be an int >= 0, but got {num_padded!r}.")
    if columns_list is None:
        raise RuntimeError(f"For '{_WHERE}', 'padded_sample' is given and needs 'columns_list' as well.")
    missing = [c for c in columns_list if c not in padded_sample]
    if missing:
        raise ValueError(
            f"For '{_WHERE}', the 'padded_sample' has no value for the columns {missing} of 'columns_list'."
        )
    return num_padded


def _files_argument(dataset_files, dataset_file):
    """``dataset_files``, or MindSpore 1.x's name for it, ``dataset_file`` (the zoo's older programs pass it)."""
    if dataset_file is not None:
        if dataset_files is not None:
            raise TypeError(f"For '{_WHERE}', give 'dataset_files' or its older name 'dataset_file', not both.")
        return dataset_file
    if dataset_files is None:
        raise TypeError(f"For '{_WHERE}', the 'dataset_files' (a MindRecord file or a list of them) is missing.")
    return dataset_files


class MindDataset(FileRows):
    """MindSpore's ``MindDataset(dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None,
    num_shards=None, shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None,
    cache=None)``: the rows of MindRecord files. ``dataset_files`` (also by MindSpore 1.x's name,
    ``dataset_file``): one shard's path (every shard of its
    dataset is read, in shard order) or a list of shard paths (those). Columns: ``columns_list`` in its
    order, or every field of the schema sorted by name (MindSpore's order); a scalar field is a 0-d array of
    its type, a string field a str array, a bytes field a 1-D uint8 array, an array field its type and shape.

    ``shuffle``: None, True or ``Shuffle.GLOBAL`` (every row in a new random order each epoch),
    ``Shuffle.FILES`` (the shard files in a new order), ``Shuffle.INFILE`` (the rows of each file), False.
    ``num_shards``/``shard_id``: every ``num_shards``-th row of the epoch's order, the shards wrapped around
    to one size; ``num_samples`` caps each shard. ``padded_sample`` (a dict of the ``columns_list`` columns)
    and ``num_padded``: that many copies of the sample appended after the rows, so that the rows and the
    padding divide among the shards (``(rows + num_padded) % num_shards == 0``). ``num_parallel_workers``
    reads rows in threads. ``sampler``: one of ``opforge.dataset.samplers`` (over the rows and the padding;
    ``RandomSampler`` also with ``Shuffle.FILES`` / ``Shuffle.INFILE``). ``cache``: a ``DatasetCache``
    (``opforge.dataset.cache_client``)."""

    where = _WHERE

    def __init__(self, dataset_files=None, columns_list=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None,
                 cache=None, *, dataset_file=None):  # fmt: skip
        dataset_files = _files_argument(dataset_files, dataset_file)
        sampler = samplers.select(_WHERE, sampler, True, shuffle, num_shards, num_samples, int_ok=True)
        cache_client.check_cache(cache)
        mode = shuffle_mode(_WHERE, shuffle, Shuffle.GLOBAL)
        if num_samples and mode in (Shuffle.FILES, Shuffle.INFILE):
            raise ValueError(
                f"For '{_WHERE}', 'Shuffle.FILES' or 'Shuffle.INFILE' and 'num_samples' cannot be given together."
            )
        if columns_list is not None and (
            isinstance(columns_list, str) or not all(isinstance(c, str) for c in columns_list)
        ):
            raise TypeError(f"For '{_WHERE}', the 'columns_list' must be a list of str, but got {columns_list!r}.")
        padding = _check_padding(columns_list, padded_sample, num_padded)
        self._files_set = ShardSet(_WHERE, dataset_files)
        schema = self._files_set.schema
        names = sorted(schema) if columns_list is None else list(columns_list)
        unknown = [c for c in names if c not in schema]
        if unknown:
            raise ValueError(
                f"For '{_WHERE}', the 'columns_list' names {unknown}, which are not fields of {sorted(schema)}."
            )
        self._specs = [schema[c] for c in names]
        rows = len(self._files_set)
        if rows == 0:
            raise RuntimeError(f"For '{_WHERE}', the files {self._files_set.paths} hold no rows.")
        if padding and num_shards is not None and (rows + padding) % num_shards:
            raise RuntimeError(
                f"For '{_WHERE}', the rows ({rows}) and 'num_padded' ({padding}) must divide among the 'num_shards' "
                f"({num_shards}), but {rows + padding} % {num_shards} = {(rows + padding) % num_shards}."
            )
        self._padded = None
        if padding:
            try:
                self._padded = tuple(column_array(s, padded_sample[c]) for s, c in zip(self._specs, names))
            except (TypeError, ValueError) as e:
                raise ValueError(f"For '{_WHERE}', the 'padded_sample' does not fit the schema: {e}") from e
        self._rows_in_files = rows
        super().__init__(names, self._files_set.shard_lengths(), mode, num_samples if sampler is None else None,
                         num_parallel_workers, num_shards, shard_id, False, padding)  # fmt: skip
        if sampler is not None:
            samplers.check_source(_WHERE, sampler, self)
        self._sampler = sampler
        self._cache = cache

    def _read(self, i: int):
        if i >= self._rows_in_files:
            return self._padded
        shard, row = self.locate(i)
        values = self._files_set.read(shard, row, self._columns)
        return tuple(column_array(spec, values[c]) for spec, c in zip(self._specs, self._columns))
