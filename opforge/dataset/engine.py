"""The dataset engine of ``opforge.dataset``: ``Dataset`` and its operations, and the Python sources
(``GeneratorDataset``, ``NumpySlicesDataset``); ``_Source`` is the random-access source the file readers
(``opforge.dataset.readers``) build on. The package's docstring describes the API."""

from __future__ import annotations

import collections
import copy
import itertools
import logging
import multiprocessing
import random
import signal
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from opforge.dataset import batch_map, cache_client, config, samplers
from opforge.dataset import pad_info as pad_module
from opforge.dataset import save as save_module
from opforge.dataset import split as split_module
from opforge.dataset.vision import random_source
from opforge.tensor import Tensor

__all__ = ["Dataset", "GeneratorDataset", "NumpySlicesDataset", "zip_datasets"]

_logger = logging.getLogger(__name__)


def _as_row(value, columns: list, where: str) -> tuple:
    row = value if isinstance(value, tuple) else (tuple(value) if isinstance(value, list) else (value,))
    if len(row) != len(columns):
        raise RuntimeError(
            f"For '{where}', the source gave a row of {len(row)} column(s), but the column names are {columns}."
        )
    return tuple(np.asarray(v) for v in row)


class Dataset:
    """A dataset: its columns and a way to read its rows for an epoch."""

    _cache = None  # a DatasetCache keeping this node's rows (a source's or a map's ``cache``: cache_client.py)

    def __init__(self, column_names: list):
        self._columns = list(column_names)
        self._epoch = 0

    # -- reading -----------------------------------------------------------------------------------
    def _rows(self, epoch: int):  # yields tuples of NumPy arrays
        raise NotImplementedError

    def get_col_names(self) -> list:
        return list(self._columns)

    def output_shapes(self) -> list:
        """The shape of each column of the first row (MindSpore's; a batch's shapes after ``batch``)."""
        return [list(v.shape) for v in self._first_row()]

    def output_types(self) -> list:
        """The NumPy dtype of each column of the first row (MindSpore's)."""
        return [v.dtype for v in self._first_row()]

    def _first_row(self) -> tuple:
        row = next(iter(self._rows(0)), None)
        if row is None:
            raise RuntimeError("For 'output_shapes', the dataset has no rows.")
        return row

    def get_dataset_size(self) -> int:
        """The number of rows (batches after ``batch``) of one epoch: counted from the source's length
        through the operations, without reading a row, unless an iterable source must be read to count."""
        return self._size()

    def _size(self) -> int:
        return sum(1 for _ in self._rows(0))

    def get_repeat_count(self) -> int:
        """The count of the nearest ``repeat`` above the source (-1: forever), 1 without one (MindSpore's)."""
        node = self
        while not isinstance(node, _Repeat):
            node = getattr(node, "parent", None)
            if node is None:
                return 1
        return -1 if node.count is None else node.count

    def get_batch_size(self) -> int:
        """The batch size of the nearest ``batch`` above the source (MindSpore's): -1 for a callable
        ``batch_size``, 1 without a ``batch``; over a concat or a zip, its last dataset's."""
        node = self
        while True:
            if isinstance(node, (_Batch, _MapBatch)):
                return -1 if callable(node.batch_size) else node.batch_size
            if isinstance(node, (_Concat, _Zip)):
                node = (node.children if isinstance(node, _Concat) else node.datasets)[-1]
                continue
            node = getattr(node, "parent", None)
            if node is None:
                return 1

    def __iter__(self):
        return self.create_tuple_iterator()

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        """An iterator of rows as lists of Tensors (NumPy arrays with ``output_numpy``), as MindSpore's: a
        ``for`` loop over it reads one epoch and ends; the next loop over the same iterator reads the next
        epoch (a new shuffle), for ``num_epochs`` epochs (-1: no limit)."""
        picks = None if columns is None else [self._columns.index(c) for c in columns]
        return _EpochIterator(self, picks, num_epochs, output_numpy, as_dict=False)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        """``create_tuple_iterator``'s rows as dicts {column name: value}."""
        return _EpochIterator(self, None, num_epochs, output_numpy, as_dict=True)

    # -- operations --------------------------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        """MindSpore's ``batch``; ``pad_info`` (MindSpore 1.x's keyword, ``padded_batch``'s in 2.x) pads the
        columns it names before they are stacked (``opforge/dataset/pad_info.py``)."""
        pad_info = kwargs.pop("pad_info", None)
        if callable(batch_size) or any(kwargs.get(k) is not None for k in ("per_batch_map", "input_columns")):
            return _MapBatch(self, batch_size, drop_remainder, pad_info=pad_info, **kwargs)
        return _Batch(self, batch_size, drop_remainder, pad_info=pad_info)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        """MindSpore 2.x's ``padded_batch``: ``batch`` whose rows are first padded as ``pad_info`` says, a dict
        {column: (pad_shape or None, pad_value or None)} (None: no padding; ``{}``: every column to the batch's
        largest shape with 0; a None dim: the batch's largest; ``opforge/dataset/pad_info.py``). ``batch_size``
        an int or a callable of the ``BatchInfo``."""
        where = "padded_batch"
        if not isinstance(drop_remainder, (bool, np.bool_)):
            raise TypeError(
                f"For '{where}', the 'drop_remainder' must be a bool, but got {type(drop_remainder).__name__}."
            )
        if num_parallel_workers is not None:
            _check_positive(where, "num_parallel_workers", num_parallel_workers)
        if callable(batch_size):
            return _MapBatch(self, batch_size, drop_remainder, pad_info=pad_info, where=where)
        return _Batch(self, batch_size, drop_remainder, pad_info=pad_info, where=where)

    def shuffle(self, buffer_size):
        return _Shuffle(self, buffer_size)

    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None,
            python_multiprocessing=False, **kwargs):  # fmt: skip
        """MindSpore's ``map``; ``cache=DatasetCache(...)`` keeps its rows (``opforge/dataset/cache_client.py``);
        ``column_order`` (MindSpore 1.x to 2.3, deprecated there for ``project``) keeps the columns it names, in its
        order, after the map, as ``project(column_order)``."""
        mapped = _Map(self, operations, input_columns, output_columns, num_parallel_workers, python_multiprocessing,
                      kwargs.get("cache"))  # fmt: skip
        column_order = kwargs.get("column_order")
        return mapped if column_order is None else _Project(mapped, column_order)

    def repeat(self, count=None):
        return _Repeat(self, count)

    def take(self, count=-1):
        return _Take(self, count)

    def skip(self, count):
        return _Skip(self, count)

    def split(self, sizes, randomize=True):
        """MindSpore's ``Dataset.split``: a tuple of datasets that share out the rows, ``sizes`` their row counts
        (ints summing to the dataset's size, or floats summing to 1: ``opforge/dataset/split.py``). A source with
        random access (MindSpore's mappable datasets) is split by samplers: part i reads positions
        ``[start_i, start_i + size_i)`` of its rows, after ``randomize`` one random order of them that is the same
        in every epoch and every part. Any other dataset (operations above the source, an iterable source, the
        TFRecord and text readers) is split row by row: part i skips the rows of the parts before it and takes
        its own, after ``randomize`` through a shuffle buffer of 10,000 rows that shuffles alike every epoch.
        Both draw from ``ds.config.set_seed``'s seed (MindSpore's default 5489 without one), so the parts are
        disjoint and cover the dataset. Each part has its own copy of the pipeline. A dataset sharded before
        ``split`` is refused (RuntimeError; shard a part with ``use_sampler`` instead); one shuffled before it
        draws a warning: its parts change from epoch to epoch, as MindSpore's do."""
        split_module.check_split(sizes, randomize)
        nodes = list(_tree_nodes(self))
        if any(_is_sharded_node(node) for node in nodes):
            raise RuntimeError(
                "For 'split', the dataset must not be sharded before split (num_shards > 1 or a DistributedSampler): "
                "split it first, then shard a part (use_sampler)."
            )
        if any(_is_shuffled_node(node) for node in nodes):
            _logger.warning("For 'split', the dataset is shuffled before split: its parts differ from epoch to epoch.")
        counts = split_module.absolute_sizes(sizes, self.get_dataset_size())
        if isinstance(self, _Source) and self._length is not None and self._mappable:
            return _split_by_samplers(self, counts, bool(randomize))
        return _split_by_rows(self, counts, bool(randomize))

    def project(self, columns):
        return _Project(self, columns)

    def rename(self, input_columns, output_columns):
        return _Rename(self, input_columns, output_columns)

    def concat(self, datasets):
        """``self`` followed by ``datasets`` (a Dataset or a list of them), as MindSpore's ``ConcatDataset``
        reads them: each child's epoch in turn, the children's operations kept; every one must have the same
        column names in the same order."""
        others = datasets if isinstance(datasets, list) else [datasets]
        if not isinstance(datasets, (list, Dataset)) or not all(isinstance(d, Dataset) for d in others):
            raise TypeError(
                f"For 'concat', 'datasets' must be a Dataset or a list of Datasets, but got {type(datasets).__name__}."
            )
        children = []
        for d in [self, *others]:  # flatten nested concats, as MindSpore does
            children.extend(d.children if isinstance(d, _Concat) else [d])
        for d in children[1:]:
            if d._columns != children[0]._columns:
                raise RuntimeError(
                    f"For 'concat', every dataset must have the columns {children[0]._columns}, but one has "
                    f"{d._columns}."
                )
        return _Concat(children)

    def __add__(self, datasets):  # MindSpore's ``ds1 + ds2``: concat
        return self.concat(datasets)

    def zip(self, datasets):
        """MindSpore's ``Dataset.zip``: the rows of ``self`` and ``datasets`` (a Dataset or a tuple of them)
        side by side, their columns concatenated (no column name may repeat), as many rows as the shortest
        has (``dataset.zip`` zips a tuple of datasets)."""
        others = datasets if isinstance(datasets, tuple) else (datasets,)
        return zip_datasets((self, *others))

    def save(self, file_name, num_files=1, file_type="mindrecord"):
        """MindSpore's ``Dataset.save``: one epoch of the rows written as MindRecord files (``file_name``, or
        ``num_files`` of them), the schema inferred from the first row as MindSpore does
        (``opforge/dataset/save.py``); read them back with ``MindDataset``."""
        save_module.save_dataset(self, file_name, num_files, file_type)

    def use_sampler(self, new_sampler):
        """MindSpore's: the source(s) below read the rows ``new_sampler`` picks (it keeps the replaced
        sampler's child); on a concatenation, a ``DistributedSampler`` deals its rows among the shards
        (``opforge/dataset/samplers.py``)."""
        samplers.use_sampler(self, new_sampler)


def _tree_nodes(node):
    """``node`` and every dataset below it (operations, concatenated and zipped datasets, sources)."""
    yield node
    for below in [getattr(node, "parent", None), *getattr(node, "children", ()), *getattr(node, "datasets", ())]:
        if below is not None:
            yield from _tree_nodes(below)


def _is_sharded_node(node) -> bool:
    """Whether the node reads one shard of its rows: a source's ``num_shards`` > 1 or its sharding sampler, a
    concatenation dealt among shards (``use_sampler``)."""
    if isinstance(node, _Source):
        if node._sampler is not None:
            return node._sampler.is_sharded()
        return node._shards[0] is not None and node._shards[0] > 1
    return isinstance(node, _Concat) and any(keep is not None and keep[0] > 1 for keep in node._keeps or ())


def _is_shuffled_node(node) -> bool:
    if isinstance(node, _Shuffle):
        return True
    if isinstance(node, _Source):
        return node._sampler.is_shuffled() if node._sampler is not None else bool(node._shuffle)
    return False


def _copy_tree(node):
    """A copy of the pipeline from ``node`` down (a new object for each operation and source, the data and the
    functions shared): a split part's own, as MindSpore's ``split`` deep-copies it, so that ``use_sampler`` on one
    part leaves the others as they are."""
    node = copy.copy(node)
    if getattr(node, "parent", None) is not None:
        node.parent = _copy_tree(node.parent)
    if isinstance(node, _Concat):
        node.children = [_copy_tree(child) for child in node.children]
    if isinstance(node, _Zip):
        node.datasets = [_copy_tree(d) for d in node.datasets]
    return node


def _split_by_samplers(source, counts: list, randomize: bool) -> tuple:
    """MindSpore's split of a mappable source: each part a copy of it whose rows pass, after the source's own
    sampler (or order), through a RandomSampler fixed across epochs (``randomize``), then
    ``SequentialSampler(start, size)``, then a ``SequentialSampler()`` that a later ``use_sampler`` replaces."""
    parts, start = [], 0
    for count in counts:
        part = copy.copy(source)
        if randomize:
            order = samplers.RandomSampler()
            order.reshuffle_each_epoch = False
            samplers.add_sampler(part, order)
        samplers.add_sampler(part, samplers.SequentialSampler(start, count))
        samplers.add_sampler(part, samplers.SequentialSampler())
        parts.append(part)
        start += count
    return tuple(parts)


_SPLIT_BUFFER = 10000  # MindSpore's split shuffles with this buffer


def _split_by_rows(dataset, counts: list, randomize: bool) -> tuple:
    """MindSpore's split of any other dataset: each part a copy of the pipeline, shuffled alike every epoch
    (``randomize``), skipping the rows of the parts before it and taking its own."""
    parts, skipped = [], 0
    for count in counts:
        part = _copy_tree(dataset)
        if randomize:
            part = _Shuffle(part, _SPLIT_BUFFER)
            part.reshuffle_each_epoch = False
        if skipped > 0:
            part = _Skip(part, skipped)
        parts.append(_Take(part, count))
        skipped += count
    return tuple(parts)


def _check_positive(where: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"For '{where}', the '{name}' must be an int >= 1, but got {value!r}.")
    return int(value)


# ---------------------------------------------------------------------------------------------
# Sources


_SHARED_SEED = 5489  # MindSpore's default dataset seed


def _epoch_rng(epoch: int, shared: bool = False) -> np.random.Generator:
    """The epoch's shuffle: from ``config``'s seed; without one, fresh entropy, or for a ``shared`` shuffle
    (the shards of a data-parallel job, which must split one order) MindSpore's default seed."""
    seed = config.get_seed()
    if seed is None and shared:
        seed = _SHARED_SEED
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([seed, epoch])


class _Source(Dataset):
    """Rows read from a random-access source (``read(i)``) or an iterable (``iterate()``)."""

    where = "GeneratorDataset"
    _mappable = True  # MindSpore's MappableDataset (``split`` by samplers); the TFRecord and text readers are not

    def __init__(self, column_names, length, shuffle, num_samples, num_shards, shard_id, workers, processes):
        super().__init__(column_names)
        self._length = length
        if shuffle and length is None:
            raise ValueError(f"For '{self.where}', an iterable source cannot be shuffled: it has no random access.")
        self._shuffle = bool(length is not None if shuffle is None else shuffle)
        self._num_samples = num_samples
        if (num_shards is None) != (shard_id is None):
            raise ValueError(f"For '{self.where}', give both 'num_shards' and 'shard_id', or neither.")
        if num_shards is not None:
            _check_positive(self.where, "num_shards", num_shards)
            if not 0 <= shard_id < num_shards:
                raise ValueError(f"For '{self.where}', the 'shard_id' must be in [0, {num_shards}), got {shard_id}.")
        self._shards = (num_shards, shard_id)
        self._workers = _check_positive(self.where, "num_parallel_workers", workers or 1)
        self._processes = processes

    _sampler = None  # the source's sampler (``sampler=`` or ``use_sampler``: opforge/dataset/samplers.py)

    def _indices(self, epoch: int) -> np.ndarray:
        if self._sampler is not None:
            return samplers.epoch_indices(self.where, self, epoch)
        idx = np.arange(self._length)
        num_shards, shard_id = self._shards
        if self._shuffle:
            idx = _epoch_rng(epoch, shared=num_shards is not None).permutation(self._length)
        if num_shards is not None:  # every shard the same size (MindSpore pads by wrapping around)
            per = -(-self._length // num_shards)
            idx = np.resize(idx, per * num_shards)[shard_id::num_shards]
        if self._num_samples is not None:
            idx = idx[: self._num_samples]
        return idx

    def _size(self) -> int:
        if self._sampler is not None:
            return samplers.count(self.where, self)
        return super()._size() if self._length is None else len(self._indices(0))

    def add_sampler(self, new_sampler):
        """MindSpore's ``MappableDataset.add_sampler``: ``new_sampler`` samples the rows the source's sampler
        gives, which becomes its child (without one, the source's shuffle, shards and num_samples as a
        sampler: ``opforge/dataset/samplers.py``)."""
        samplers.add_sampler(self, new_sampler)

    def _rows(self, epoch: int):
        if self._cache is not None:  # the rows a DatasetCache keeps (cache_client.py)
            yield from cache_client.cached_rows(self, epoch)
            return
        if self._length is None:
            rows = self._iterate()
            if self._num_samples is not None:
                rows = itertools.islice(rows, self._num_samples)
            yield from rows
            return
        indices = self._indices(epoch)
        if self._workers > 1:
            yield from _parallel(self._read_checked, indices, self._workers, self._processes)
        else:
            for i in indices:
                yield self._read_checked(_key(i))

    def _read_checked(self, i: int) -> tuple:
        try:
            value = self._read(_key(i))
        except Exception as e:
            raise RuntimeError(
                f"For '{self.where}', the source raised {type(e).__name__} reading row {i} (columns "
                f"{self._columns}): {e}"
            ) from e
        return _as_row(value, self._columns, self.where)


def _key(i):
    """A sampled position as a source reads it: an int, or a row of indices as a user Sampler gave it."""
    return i if np.ndim(i) else int(i)


_worker_fn = [None]  # the function forked workers run: inherited, so lambdas and local sources need no pickling


def _set_worker_fn(fn) -> None:  # a forked worker's initializer: fn is inherited, not pickled
    _worker_fn[0] = fn
    # a SIGTERM handler the parent set (a callback's) would keep the worker alive through the pool's terminate
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_worker_fn(item):
    return _worker_fn[0](item)


def _pool_imap(fn, items, workers: int, processes: bool):
    """``fn`` over ``items`` in ``workers`` forked processes (threads without fork or with ``processes``
    False), yielding the results in order. The items are taken in chunks of a few per worker, so an epoch
    streams through the workers instead of being read whole first."""
    chunk = workers * 4
    items = iter(items)
    if processes and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(workers, _set_worker_fn, (fn,)) as pool:
            while batch := list(itertools.islice(items, chunk)):
                yield from pool.map(_run_worker_fn, batch)
        return
    with ThreadPoolExecutor(workers) as pool:
        while batch := list(itertools.islice(items, chunk)):
            yield from pool.map(fn, batch)


def _parallel(fn, items, workers: int, processes: bool):
    return _pool_imap(fn, (_key(i) for i in items), workers, processes)


class GeneratorDataset(_Source):
    """MindSpore's ``GeneratorDataset(source, column_names=None, column_types=None, schema=None,
    num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
    python_multiprocessing=True, max_rowsize=6)``: ``source`` a random-access object (``__getitem__`` and
    ``__len__``; shuffled by default), a callable returning an iterator, or an iterable."""

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=6):  # fmt: skip
        if column_names is None:
            raise ValueError("For 'GeneratorDataset', give the 'column_names' of the source's rows.")
        names = [column_names] if isinstance(column_names, str) else list(column_names)
        self._source = source
        random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not random_access and not callable(source) and not hasattr(source, "__iter__"):
            raise TypeError(
                "For 'GeneratorDataset', the 'source' must be a random-access object (__getitem__ and __len__), "
                f"a callable returning an iterator, or an iterable, but got {type(source).__name__}."
            )
        if not random_access and num_shards is not None:  # (each rank would read every row: MindSpore refuses it)
            raise ValueError(
                "For 'GeneratorDataset', 'num_shards' needs a random-access source (__getitem__ and __len__), but "
                f"got {type(source).__name__}: each shard would read every row."
            )
        length = len(source) if random_access else None
        sampler = samplers.select(self.where, sampler, random_access, shuffle, num_shards, num_samples)
        if sampler is not None:
            num_samples = None  # the sampler's
        super().__init__(names, length, shuffle, num_samples, num_shards, shard_id, num_parallel_workers,
                         python_multiprocessing)  # fmt: skip
        if sampler is not None:
            samplers.check_source(self.where, sampler, self)
        self._sampler = sampler

    def _read(self, i: int):
        return self._source[i]

    def _iterate(self):
        source = self._source
        iterator = source() if callable(source) and not hasattr(source, "__iter__") else iter(source)
        i = 0
        while True:
            try:
                value = next(iterator)
            except StopIteration:
                return
            except Exception as e:
                raise RuntimeError(
                    f"For 'GeneratorDataset', the source raised {type(e).__name__} at row {i} (columns "
                    f"{self._columns}): {e}"
                ) from e
            yield _as_row(value, self._columns, self.where)
            i += 1


class NumpySlicesDataset(_Source):
    """MindSpore's ``NumpySlicesDataset(data, column_names=None, num_samples=None, num_parallel_workers=1,
    shuffle=None, sampler=None, num_shards=None, shard_id=None)``: rows are slices along the first dim of
    ``data`` (an array, a list, a tuple of columns, or a dict of columns); shuffled by default."""

    where = "NumpySlicesDataset"

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None):  # fmt: skip
        if isinstance(data, dict):
            names, columns = list(data), [np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple):
            columns = [np.asarray(v) for v in data]
            names = None
        else:
            columns = [np.asarray(data)]
            names = None
        if names is None:
            names = (
                [column_names] if isinstance(column_names, str) else list(column_names)
                if column_names is not None else [f"column_{i}" for i in range(len(columns))]
            )  # fmt: skip
        lengths = {len(c) for c in columns}
        if len(lengths) != 1:
            raise ValueError(f"For 'NumpySlicesDataset', every column must have one length, but got {sorted(lengths)}.")
        self._data = columns
        sampler = samplers.select(self.where, sampler, True, shuffle, num_shards, num_samples)
        if sampler is not None:
            num_samples = None  # the sampler's
        super().__init__(names, lengths.pop(), shuffle, num_samples, num_shards, shard_id, num_parallel_workers, False)
        if sampler is not None:
            samplers.check_source(self.where, sampler, self)
        self._sampler = sampler

    def _read(self, i: int):
        return tuple(c[i] for c in self._data)


# ---------------------------------------------------------------------------------------------
# Operations


class _Op(Dataset):
    def __init__(self, parent: Dataset, column_names=None):
        super().__init__(parent._columns if column_names is None else column_names)
        self.parent = parent

    def _size(self) -> int:  # one row out per row in (map, shuffle, project, rename)
        return self.parent._size()


class _EpochIterator:
    """MindSpore's dataset iterator: ``__next__`` gives the rows of one epoch, then raises StopIteration once
    (ending a ``for`` loop); the next call starts the next epoch, until ``num_epochs`` epochs have been read
    (-1: no limit). Hand-written training loops (``for epoch in ...: for data in iterator:``) rely on this."""

    def __init__(self, dataset: Dataset, picks, num_epochs: int, output_numpy: bool, as_dict: bool):
        if isinstance(num_epochs, bool) or not isinstance(num_epochs, int) or not (num_epochs == -1 or num_epochs > 0):
            raise ValueError(
                f"For 'create_tuple_iterator', the 'num_epochs' must be -1 or > 0, but got {num_epochs!r}."
            )
        self._dataset, self._picks, self._num_epochs = dataset, picks, num_epochs
        self._output_numpy, self._as_dict = output_numpy, as_dict
        self._rows = None  # the current epoch's rows, None between epochs
        self._epochs_read = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._rows is None:
            if self._num_epochs != -1 and self._epochs_read >= self._num_epochs:
                raise StopIteration
            epoch = self._dataset._epoch
            self._dataset._epoch += 1
            self._rows = iter(self._dataset._rows(epoch))
        row = next(self._rows, None)
        if row is None:
            self._rows = None
            self._epochs_read += 1
            raise StopIteration
        if self._picks is not None:
            row = tuple(row[i] for i in self._picks)
        row = [v if self._output_numpy else Tensor(v) for v in row]
        return dict(zip(self._dataset._columns, row)) if self._as_dict else row

    def stop(self) -> None:
        """Stop reading (MindSpore's ``iterator.stop()``): the iterator ends."""
        self._rows, self._num_epochs, self._epochs_read = None, 1, 1


class _Batch(_Op):
    def __init__(self, parent, batch_size, drop_remainder, pad_info=None, where="batch"):
        super().__init__(parent)
        self.where = where
        self.batch_size = _check_positive(where, "batch_size", batch_size)
        self.drop_remainder = bool(drop_remainder)
        self._pad_info = pad_module.check_pad_info(where, pad_info)
        pad_module.check_pad_columns(where, self._pad_info, self._columns)

    def _size(self) -> int:
        n = self.parent._size()
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _rows(self, epoch):
        rows = []
        for row in self.parent._rows(epoch):
            rows.append(row)
            if len(rows) == self.batch_size:
                yield self._stack(rows)
                rows = []
        if rows and not self.drop_remainder:
            yield self._stack(rows)

    def _stack(self, rows):
        rows = pad_module.pad_rows(self.where, self._columns, rows, self._pad_info)
        try:
            return tuple(np.stack(col) for col in zip(*rows))
        except ValueError as e:
            raise RuntimeError(
                f"For '{self.where}', the rows of a batch must have one shape per column (columns {self._columns}): {e}"
            ) from e


class _MapBatch(_Op):
    """``batch(batch_size, drop_remainder, per_batch_map=..., input_columns=..., output_columns=...)``."""

    def __init__(self, parent, batch_size, drop_remainder, per_batch_map=None, input_columns=None,
                 output_columns=None, pad_info=None, where="batch", **kwargs):  # fmt: skip
        if (per_batch_map is None) != (input_columns is None):
            raise ValueError("For 'batch', per_batch_map and input_columns need to be passed in together.")
        if per_batch_map is not None and not callable(per_batch_map):
            raise TypeError(f"For 'batch', 'per_batch_map' must be callable, but got {type(per_batch_map).__name__}.")
        if not callable(batch_size):
            batch_size = _check_positive(where, "batch_size", batch_size)
        self.batch_size, self.drop_remainder, self.fn = batch_size, bool(drop_remainder), per_batch_map
        self.where, self._pad_info = where, pad_module.check_pad_info(where, pad_info)
        inputs = [] if input_columns is None else batch_map.column_names("batch", input_columns, "input_columns")
        for c in inputs:
            if c not in parent._columns:
                raise ValueError(f"For 'batch', the input column '{c}' is not one of {parent._columns}.")
        outputs = (
            inputs if output_columns is None else batch_map.column_names("batch", output_columns, "output_columns")
        )
        if per_batch_map is not None:
            batch_map.check_signature(per_batch_map, len(inputs))
        self._inputs, self._outputs = inputs, outputs
        # the output columns take the input columns' place (as map's), the other columns keep theirs
        kept = [c for c in parent._columns if c not in inputs]
        first = min(parent._columns.index(c) for c in inputs) if inputs else len(kept)
        super().__init__(parent, kept[:first] + outputs + kept[first:])
        pad_module.check_pad_columns(where, self._pad_info, self._columns)

    def _size_of(self, batch_num: int, epoch: int) -> int:
        return batch_map.batch_size_at(self.batch_size, batch_num, epoch)

    def _size(self) -> int:
        n = self.parent._size()
        if not callable(self.batch_size):
            return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)
        count = 0
        while n > 0:  # a callable size: count the batches it makes of one epoch (epoch 0)
            size = self._size_of(count, 0)
            if n < size and self.drop_remainder:
                break
            n, count = n - size, count + 1
        return count

    def _rows(self, epoch):
        rows, batch_num = [], 0
        size = self._size_of(0, epoch)
        for row in self.parent._rows(epoch):
            rows.append(row)
            if len(rows) == size:
                yield self._make(rows, batch_num, epoch)
                rows, batch_num = [], batch_num + 1
                size = self._size_of(batch_num, epoch)
        if rows and not self.drop_remainder:
            yield self._make(rows, batch_num, epoch)

    def _make(self, rows, batch_num, epoch) -> tuple:
        columns = {c: [row[i] for row in rows] for i, c in enumerate(self.parent._columns)}
        if self.fn is not None:
            outs = batch_map.call_per_batch_map(
                self.fn, columns, self._inputs, self._outputs, batch_map.BatchInfo(batch_num, epoch)
            )
            for c in self._inputs:
                del columns[c]
            columns.update(zip(self._outputs, outs))
        if self._pad_info is not None:  # after per_batch_map, as MindSpore pads
            rows = pad_module.pad_rows(self.where, self._columns, list(zip(*(columns[c] for c in self._columns))),
                                       self._pad_info)  # fmt: skip
            columns = {c: [row[i] for row in rows] for i, c in enumerate(self._columns)}
        try:
            return tuple(np.stack([np.asarray(v) for v in columns[c]]) for c in self._columns)
        except ValueError as e:
            raise RuntimeError(
                f"For 'batch', the rows of a batch must have one shape per column (columns {self._columns}): {e}"
            ) from e


class _Shuffle(_Op):
    reshuffle_each_epoch = True  # False (``split`` sets it): one order every epoch, from the seed or 5489

    def __init__(self, parent, buffer_size):
        super().__init__(parent)
        self.buffer_size = _check_positive("shuffle", "buffer_size", buffer_size)

    def _rows(self, epoch):
        seed, draw = config.get_seed(), epoch
        if not self.reshuffle_each_epoch:
            seed, draw = (_SHARED_SEED if seed is None else seed), 0
        rng = random.Random(None if seed is None else seed * 1_000_003 + draw)
        buffer = []
        for row in self.parent._rows(epoch):
            buffer.append(row)
            if len(buffer) >= self.buffer_size:
                yield buffer.pop(rng.randrange(len(buffer)))
        rng.shuffle(buffer)
        yield from buffer


class _MapFunction:
    """The map's operations applied to one row's input columns (picklable for worker processes)."""

    def __init__(self, operations, picks, where):
        self.operations, self.picks, self.where = operations, picks, where

    def __call__(self, row):
        values = tuple(row[i] for i in self.picks)
        for op in self.operations:
            try:
                out = op(*values)
            except Exception as e:
                name = getattr(op, "__name__", type(op).__name__)
                raise RuntimeError(
                    f"For 'map', the operation {name} raised {type(e).__name__} on the columns {self.where}: {e}"
                ) from e
            values = out if isinstance(out, tuple) else (out,)
        return tuple(np.asarray(v) for v in values)


class _Map(_Op):
    def __init__(self, parent, operations, input_columns, output_columns, workers, processes, cache=None):
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        inputs = parent._columns if input_columns is None else (
            [input_columns] if isinstance(input_columns, str) else list(input_columns)
        )  # fmt: skip
        for c in inputs:
            if c not in parent._columns:
                raise ValueError(f"For 'map', the input column '{c}' is not one of {parent._columns}.")
        outputs = inputs if output_columns is None else (
            [output_columns] if isinstance(output_columns, str) else list(output_columns)
        )  # fmt: skip
        self._inputs, self._outputs = inputs, outputs
        self._fn = _MapFunction(ops, [parent._columns.index(c) for c in inputs], inputs)
        names = [c for c in parent._columns if c not in inputs]
        first = min(parent._columns.index(c) for c in inputs) if inputs else len(names)
        super().__init__(parent, names[:first] + outputs + names[first:])
        self._workers = _check_positive("map", "num_parallel_workers", workers or 1)
        self._processes = processes
        self._cache = cache_client.check_cache(cache)

    def _rows(self, epoch):
        if self._cache is not None:  # the rows a DatasetCache keeps (cache_client.py)
            yield from cache_client.cached_rows(self, epoch)
            return
        parent_rows = self.parent._rows(epoch)
        if self._workers > 1:  # each row's random transforms on its own seeded generator (random_source.py)
            fn = random_source.RowSeeded(self._fn)
            results = _parallel_rows(fn, random_source.row_seeds(parent_rows), self._workers, self._processes)
            pairs = ((item[1], out) for item, out in results)
        else:
            pairs = ((row, self._fn(row)) for row in parent_rows)
        for row, out in pairs:
            if len(out) != len(self._outputs):
                raise RuntimeError(
                    f"For 'map', the operations gave {len(out)} column(s), but the output columns are {self._outputs}."
                )
            yield self._merge(row, out)

    def _merge(self, row, out):
        parent_cols = self.parent._columns
        kept = {c: row[i] for i, c in enumerate(parent_cols) if c not in self._inputs}
        kept.update(zip(self._outputs, out))
        return tuple(kept[c] for c in self._columns)


def _parallel_rows(fn, rows, workers: int, processes: bool):
    """``(row, fn(row))`` pairs in order, ``fn`` run by the workers."""
    kept = collections.deque()

    def remember(rows):
        for row in rows:
            kept.append(row)
            yield row

    for out in _pool_imap(fn, remember(rows), workers, processes):
        yield kept.popleft(), out


class _Concat(Dataset):
    """The rows of several datasets one after another (``Dataset.concat``, ``ds1 + ds2``)."""

    _keeps = None  # per child, which rows a shard keeps (``use_sampler``: samplers.py); None: every row

    def __init__(self, children: list):
        super().__init__(children[0]._columns)
        self.children = children

    def _size(self) -> int:
        keeps = self._keeps or [None] * len(self.children)
        return sum(samplers.kept_count(child._size(), keep) for child, keep in zip(self.children, keeps))

    def _rows(self, epoch):
        for child, keep in zip(self.children, self._keeps or [None] * len(self.children)):
            yield from samplers.kept_rows(child._rows(epoch), keep)


def zip_datasets(datasets) -> Dataset:
    """MindSpore's ``dataset.zip(datasets)``: a tuple of datasets read side by side (``Dataset.zip``)."""
    if not isinstance(datasets, tuple) or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"For 'zip', the 'datasets' must be a tuple of Datasets, but got {datasets!r}.")
    if len(datasets) < 1:
        raise ValueError("For 'zip', the 'datasets' must hold at least one dataset.")
    columns = [c for d in datasets for c in d._columns]
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise ValueError(f"For 'zip', the datasets' column names must differ, but {repeated} repeat.")
    return _Zip(list(datasets), columns)


class _Zip(Dataset):
    """Rows of several datasets side by side (``Dataset.zip``, ``dataset.zip``), until the shortest ends."""

    def __init__(self, datasets: list, columns: list):
        super().__init__(columns)
        self.datasets = datasets

    def _size(self) -> int:
        return min(d._size() for d in self.datasets)

    def _rows(self, epoch):
        for rows in zip(*(d._rows(epoch) for d in self.datasets)):
            yield tuple(v for row in rows for v in row)


class _Repeat(_Op):
    def __init__(self, parent, count):
        super().__init__(parent)
        if count is not None and count != -1:
            _check_positive("repeat", "count", count)
        self.count = None if count in (None, -1) else int(count)

    def _size(self) -> int:
        if self.count is None:
            raise RuntimeError("For 'get_dataset_size', a dataset repeated forever (repeat(-1)) has no size.")
        return self.parent._size() * self.count

    def _rows(self, epoch):
        for k in itertools.count() if self.count is None else range(self.count):
            yield from self.parent._rows(epoch * (self.count or 1) + k)


class _Take(_Op):
    def __init__(self, parent, count):
        super().__init__(parent)
        self.count = int(count)

    def _size(self) -> int:
        n = self.parent._size()
        return n if self.count == -1 else min(n, self.count)

    def _rows(self, epoch):
        rows = self.parent._rows(epoch)
        yield from (rows if self.count == -1 else itertools.islice(rows, self.count))


class _Skip(_Op):
    def __init__(self, parent, count):
        super().__init__(parent)
        self.count = int(count)

    def _size(self) -> int:
        return max(0, self.parent._size() - self.count)

    def _rows(self, epoch):
        yield from itertools.islice(self.parent._rows(epoch), self.count, None)


class _Project(_Op):
    def __init__(self, parent, columns):
        columns = [columns] if isinstance(columns, str) else list(columns)
        for c in columns:
            if c not in parent._columns:
                raise ValueError(f"For 'project', the column '{c}' is not one of {parent._columns}.")
        super().__init__(parent, columns)
        self._picks = [parent._columns.index(c) for c in columns]

    def _rows(self, epoch):
        for row in self.parent._rows(epoch):
            yield tuple(row[i] for i in self._picks)


class _Rename(_Op):
    def __init__(self, parent, input_columns, output_columns):
        ins = [input_columns] if isinstance(input_columns, str) else list(input_columns)
        outs = [output_columns] if isinstance(output_columns, str) else list(output_columns)
        if len(ins) != len(outs):
            raise ValueError("For 'rename', give one output column name per input column.")
        mapping = dict(zip(ins, outs))
        super().__init__(parent, [mapping.get(c, c) for c in parent._columns])

    def _rows(self, epoch):
        return self.parent._rows(epoch)
