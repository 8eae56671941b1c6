"""MindSpore's ``mindspore.dataset.DatasetCache``: the rows a dataset node produces, kept so that later epochs
read them instead of producing them again.

``DatasetCache(session_id, size=0, spilling=False, hostname=None, port=None, num_connections=None,
prefetch_size=None)`` is given as the ``cache`` of a file reader (``MnistDataset``, ``Cifar10Dataset``,
``Cifar100Dataset``, ``ImageFolderDataset``, ``MindDataset``, ``TFRecordDataset``) or of ``Dataset.map``.
MindSpore keeps the rows in a cache server (``cache_admin --start``, a session from ``cache_admin -g``);
opforge keeps them in the process that reads the dataset, so there is no server to start, the session id
only names the cache, and ``hostname``, ``port``, ``num_connections`` and ``prefetch_size`` are checked as
MindSpore checks them and otherwise unused.

The rows are keyed, as MindSpore's cache of a random-access (mappable) source keys them, by the index of
the source row they come from: each epoch the source's sampler (its shuffle, shards, ``num_samples`` or
``sampler``) still picks the rows and their order, and a row already in the cache is read from it instead of
from the source (and through the cached ``map``'s operations). A row not yet cached, in the first epoch or
in an epoch that reads rows the earlier ones did not, is produced and kept. The cached node is run once per
row, so its output is fixed after the row is first read.

``size`` (MB, 0: no limit) bounds the memory the rows take (their arrays' bytes). A row that would pass it
is, with ``spilling=True``, written to a temporary file (read back when needed, removed with the cache);
without, it is not kept (as MindSpore's server, which stops caching when it is full): it is produced again
in each epoch. ``get_stat()`` counts the rows in memory and on disk.

MindSpore's checks of a cached tree (its cache validation pass), raised as a ``RuntimeError`` when an epoch
starts: no batch, concat, skip, take or repeat (the source is random-access) below a cache; no cache below
another; no ``GeneratorDataset`` (nor ``NumpySlicesDataset``, ``PaddedDataset``) as the source; a cached
``map``, and a ``map`` below a cache, may not hold a random operation. A Python function or callable counts
as random unless ``not_random`` (``ds.transforms.not_random``) marks it deterministic; opforge's own transforms
are random when MindSpore's are (``Random*``, ``CutOut``, ...). opforge also refuses a ``shuffle`` below a
cache: a cached row is found by its source index, which a shuffle buffer loses. One ``DatasetCache`` serves one
tree: another pipeline of the same operations over a source of the same class, columns and rows may use it
(its rows are kept apart from the first's), another tree raises ``Cannot re-use a cache for a different tree!``.
"""

from __future__ import annotations

import copy
import tempfile
import threading

import numpy as np

from opforge.dataset.samplers import BuiltinSampler

__all__ = ["DatasetCache"]

_UINT32_MAX = (1 << 32) - 1
_UINT64_MAX = (1 << 64) - 1
_INT32_MAX = (1 << 31) - 1
_MB = 1 << 20
_GENERATORS = ("GeneratorDataset", "NumpySlicesDataset", "PaddedDataset")
# MindSpore's random transforms whose names do not start with "Random"
_RANDOM_TRANSFORMS = frozenset(
    {"CutOut", "MixUp", "MixUpBatch", "CutMixBatch", "AutoAugment", "RandAugment", "TrivialAugmentWide",
     "UniformAugment"}
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Arguments, checked as MindSpore's validators check them (their messages)


def _type_check(value, types: tuple, name: str) -> None:
    if (isinstance(value, (bool, np.bool_)) and bool not in types) or not isinstance(value, types):
        raise TypeError(f"Argument {name} with value {value} is not of type {list(types)}, but got {type(value)}.")


def _check_interval(value, low: int, high: int, name: str = "") -> None:
    if not low <= value <= high:
        label = f"{name} " if name else ""
        raise ValueError(f"Input {label}is not within the required interval of [{low}, {high}].")


def check_cache(cache):
    """A source's or a map's ``cache`` argument: None or a ``DatasetCache`` (MindSpore's TypeError)."""
    if cache is not None:
        _type_check(cache, (DatasetCache,), "cache")
    return cache


class CacheStat:
    """``DatasetCache.get_stat()``: ``avg_cache_sz`` (the mean bytes of a cached row), ``num_mem_cached`` and
    ``num_disk_cached`` (the rows kept in memory and spilled to disk)."""

    def __init__(self, avg_cache_sz: int, num_mem_cached: int, num_disk_cached: int):
        self.avg_cache_sz, self.num_mem_cached, self.num_disk_cached = avg_cache_sz, num_mem_cached, num_disk_cached

    def __repr__(self) -> str:
        return (
            f"CacheStat(avg_cache_sz={self.avg_cache_sz}, num_mem_cached={self.num_mem_cached}, "
            f"num_disk_cached={self.num_disk_cached})"
        )


class _Rows:
    """The rows one tree (one source object) has put in a cache: in memory, or their offsets in the spill file."""

    def __init__(self, source):
        self.source = source  # kept alive, so that its identity names these rows
        self.memory, self.disk = {}, {}


class DatasetCache:
    """MindSpore's ``DatasetCache(session_id, size=0, spilling=False, hostname=None, port=None,
    num_connections=None, prefetch_size=None)``: rows kept in this process (the module's docstring)."""

    def __init__(self, session_id, size=0, spilling=False, hostname=None, port=None, num_connections=None,
                 prefetch_size=None):  # fmt: skip
        _type_check(session_id, (int,), "session_id")
        _check_interval(session_id, 1, _UINT32_MAX)
        _type_check(size, (int,), "size")
        if size != 0:
            if size < 0:
                raise ValueError("Input size must be greater than 0.")
            _check_interval(size, 0, _UINT64_MAX, "size")
        _type_check(spilling, (bool,), "spilling")
        if hostname is not None:
            _type_check(hostname, (str,), "hostname")
            if hostname != "127.0.0.1":
                raise RuntimeError(
                    f"For 'DatasetCache', the 'hostname' is {hostname!r}, but now cache client has to be on the same "
                    "host with cache server (127.0.0.1; opforge's cache is in this process)."
                )
        if port is not None:
            _type_check(port, (int,), "port")
            _check_interval(port, 1025, 65535, "port")
        for name, value in (("num_connections", num_connections), ("prefetch_size", prefetch_size)):
            if value is not None:
                _type_check(value, (int,), name)
                _check_interval(value, 1, _INT32_MAX)
        self.session_id, self.size, self.spilling = session_id, size, spilling
        self.hostname, self.port = hostname, port
        self.num_connections, self.prefetch_size = num_connections, prefetch_size
        self._lock = threading.Lock()
        self._signature = None  # the tree it serves (MindSpore's cache crc)
        self._trees = []  # _Rows, one per source object of that tree
        self._memory_bytes = 0
        self._cached_bytes = 0
        self._spill = None  # the temporary file of the spilled rows, made when the first row spills

    def __deepcopy__(self, memo):  # a copied pipeline keeps its cache (MindSpore's copy shares its client)
        return self

    def get_stat(self) -> CacheStat:
        """The rows cached so far: their mean size in bytes, how many are in memory and how many on disk."""
        with self._lock:
            memory = sum(len(t.memory) for t in self._trees)
            disk = sum(len(t.disk) for t in self._trees)
            count = memory + disk
            return CacheStat(self._cached_bytes // count if count else 0, memory, disk)

    # -- the rows (opforge's) --------------------------------------------------------------------
    def _rows_of(self, signature, source) -> _Rows:
        with self._lock:
            if self._signature is None:
                self._signature = signature
            elif self._signature != signature:
                raise RuntimeError(
                    "Cannot re-use a cache for a different tree! (a DatasetCache serves the pipeline that first "
                    "read through it; give the other pipeline its own DatasetCache)"
                )
            for tree in self._trees:
                if tree.source is source:
                    return tree
            tree = _Rows(source)
            self._trees.append(tree)
            return tree

    def _get(self, tree: _Rows, key):
        """The cached row of ``key`` (copies: the reader may change them), or None."""
        row = tree.memory.get(key)
        if row is not None:
            return tuple(v.copy() for v in row)
        at = tree.disk.get(key)
        if at is None:
            return None
        offset, width = at
        with self._lock:
            self._spill.seek(offset)
            return tuple(np.lib.format.read_array(self._spill, allow_pickle=False) for _ in range(width))

    def _put(self, tree: _Rows, key, row: tuple) -> None:
        """Keep ``row``: in memory while ``size`` allows, then on disk with ``spilling``, else not at all."""
        values = tuple(np.array(v, copy=True) for v in row)
        nbytes = sum(v.nbytes for v in values)
        with self._lock:
            if key in tree.memory or key in tree.disk:
                return
            if self.size == 0 or self._memory_bytes + nbytes <= self.size * _MB:
                tree.memory[key] = values
                self._memory_bytes += nbytes
            elif self.spilling:
                if self._spill is None:
                    self._spill = tempfile.TemporaryFile(prefix="opforge_dataset_cache_")
                offset = self._spill.seek(0, 2)
                for v in values:
                    np.lib.format.write_array(self._spill, v, allow_pickle=False)
                tree.disk[key] = (offset, len(values))
            else:
                return
            self._cached_bytes += nbytes


# ---------------------------------------------------------------------------------------------
# A cached node's rows (the engine's ``_Source._rows`` and ``_Map._rows`` call here)


def _is_random(op) -> bool:
    """Whether a map operation is random as MindSpore judges it: a ``random`` flag (``not_random``) first;
    opforge's transforms by MindSpore's names (a Compose by its transforms); any other callable is random."""
    flag = getattr(op, "random", None)
    if isinstance(flag, (bool, np.bool_)):
        return bool(flag)
    cls = type(op)
    if cls.__module__.startswith("opforge.dataset."):
        if cls.__name__.startswith("Random") or cls.__name__ in _RANDOM_TRANSFORMS:
            return True
        return any(_is_random(t) for t in getattr(op, "transforms", ()))
    return True


_REFUSED = {
    "_Batch": "BatchNode is not supported as a descendant operator under a cache.",
    "_MapBatch": "BatchNode is not supported as a descendant operator under a cache.",
    "_Skip": "SkipNode is not supported as a descendant operator under a cache.",
    "_Take": "TakeNode (possibly from Split) is not supported as a descendant operator under a cache.",
    "_Repeat": "A cache over a RepeatNode of a mappable dataset is not supported.",
    "_Shuffle": (
        "ShuffleNode is not supported as a descendant operator under a cache (opforge finds a cached row by its "
        "source index, which a shuffle buffer loses: shuffle above the cache, or with the source's shuffle)."
    ),
}


def _node_name(node) -> str:
    return "MapNode" if hasattr(node, "parent") else node.where


def _check_tree(node):
    """MindSpore's checks of the tree below a cache (RuntimeError); returns its source."""
    where = f"For '{'map' if hasattr(node, 'parent') else node.where}' with a cache, "
    current = node
    while True:
        if current is not node and current._cache is not None:
            raise RuntimeError(f"{where}Nested cache operations over {_node_name(current)} is not supported.")
        if hasattr(current, "children"):
            raise RuntimeError(f"{where}ConcatNode is not supported as a descendant operator under a cache.")
        if not hasattr(current, "parent"):
            break
        kind = type(current).__name__
        if kind == "_Map":
            random_ops = [op for op in current._fn.operations if _is_random(op)]
            if random_ops:
                name = getattr(random_ops[0], "__name__", type(random_ops[0]).__name__)
                raise RuntimeError(
                    f"{where}MapNode containing random operation is not supported as a descendant of cache "
                    f"({name}; mark a deterministic Python function with ds.transforms.not_random)."
                )
        elif kind not in ("_Project", "_Rename"):
            raise RuntimeError(
                where + _REFUSED.get(kind, f"{kind.strip('_')}Node is not supported as a descendant operator "
                                           "under a cache.")
            )  # fmt: skip
        current = current.parent
    if current.where in _GENERATORS or getattr(current, "_length", None) is None:
        raise RuntimeError(f"{where}There is currently no support for GeneratorOp under cache ({current.where}).")
    return current


def _operation_key(op):
    code = getattr(op, "__code__", None)  # a function: its code (the same lambda line, the same key)
    return code if code is not None else (type(op).__module__, type(op).__qualname__)


def _signature(node) -> tuple:
    """The tree below a cache, as MindSpore's cache crc tells trees apart: each node's kind, columns and
    operations, and the source's class, columns and row count."""
    parts = []
    while hasattr(node, "parent"):
        fn = getattr(node, "_fn", None)
        ops = () if fn is None else tuple(_operation_key(op) for op in fn.operations)
        parts.append((type(node).__name__, tuple(node._columns), tuple(getattr(node, "_inputs", ())), ops))
        node = node.parent
    parts.append((type(node).__name__, tuple(node._columns), node._length))
    return tuple(parts)


class _Given(BuiltinSampler):
    """The source rows a cached node has yet to produce, as a sampler of its copied source."""

    def __init__(self, indices: np.ndarray):
        super().__init__()
        self.indices = indices

    def _positions(self, n, epoch, depth, source, below):
        return self.indices

    def _count(self, n, source, below):
        return len(self.indices)


def _uncached_rows(node, indices: np.ndarray, epoch: int):
    """The rows of source ``indices`` through ``node``'s operations: a copy of the chain, without the cache,
    whose source reads those rows (its workers and the maps' as the original's)."""
    top = copy.copy(node)
    current = top
    while hasattr(current, "parent"):
        current._cache = None
        current.parent = copy.copy(current.parent)
        current = current.parent
    current._cache = None
    current._sampler = _Given(indices)
    return top._rows(epoch)


def _key(index):
    return tuple(np.ravel(index).tolist()) if np.ndim(index) else int(index)


def cached_rows(node, epoch: int):
    """``node``'s rows for ``epoch`` with its cache: the source's rows in its sampler's order, each from the
    cache, or produced (the missing ones together, through a copy of the chain) and kept."""
    source = _check_tree(node)
    cache = node._cache
    tree = cache._rows_of(_signature(node), source)
    indices = source._indices(epoch)
    keys = [_key(i) for i in indices]
    missing = np.array([k not in tree.memory and k not in tree.disk for k in keys], dtype=bool)
    produced = iter(_uncached_rows(node, indices[missing], epoch)) if missing.any() else iter(())
    for key, miss in zip(keys, missing):
        row = next(produced) if miss else cache._get(tree, key)
        if miss:
            cache._put(tree, key, row)
        yield row
