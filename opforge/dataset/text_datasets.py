"""MindSpore's text file readers: ``TextFileDataset`` (one row per line) and ``CLUEDataset`` (the CLUE benchmark's
JSON-lines files, the columns of each task and usage).

Both read their files as MindSpore does: ``dataset_files`` a path, a glob pattern or a list of them, read in
sorted order; lines split at ``\\n`` (a ``\\r`` before it stays in the line, as C++'s ``getline`` leaves it);
empty lines skipped. The files are mapped (``np.memmap``) and their lines counted when the dataset is made; a
row's line is decoded (UTF-8) when an epoch reads it. Their order, ``shuffle`` (``Shuffle.GLOBAL`` or True: every
row in a new order each epoch; ``Shuffle.FILES``: the files in a new order; False), ``num_shards`` /
``shard_id`` (every ``num_shards``-th row of the epoch's order) and ``num_samples`` (the rows of each shard)
are those of the other readers of several files (``opforge/dataset/shuffle.py``).
"""

from __future__ import annotations

import json
import os

import numpy as np

from opforge.dataset import cache_client
from opforge.dataset.shuffle import FileRows, Shuffle, shuffle_mode
from opforge.dataset.tfrecord import _find_files

__all__ = ["TextFileDataset", "CLUEDataset"]


class _LineFile:
    """A text file's non-empty lines: their byte spans in the mapped file."""

    def __init__(self, path: str):
        self.path = path
        size = os.path.getsize(path)
        self.buf = np.memmap(path, np.uint8, "r") if size else np.zeros(0, np.uint8)
        breaks = np.flatnonzero(self.buf == ord("\n"))
        starts = np.concatenate([[0], breaks + 1])
        ends = np.concatenate([breaks, [size]])
        keep = ends > starts
        self.starts, self.ends = starts[keep], ends[keep]

    def __len__(self) -> int:
        return len(self.starts)

    def line(self, j: int) -> str:
        data = self.buf[int(self.starts[j]) : int(self.ends[j])].tobytes()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise RuntimeError(f"the line {j} of the file '{self.path}' is not UTF-8 text: {e}") from e


class _LineReader(FileRows):
    """Rows read from the lines of text files."""

    _mappable = False  # not MindSpore's MappableDataset: ``split`` goes row by row

    def __init__(self, columns, dataset_files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id,
                 cache):  # fmt: skip
        cache_client.check_cache(cache)
        mode = shuffle_mode(self.where, shuffle, Shuffle.GLOBAL, allowed=(Shuffle.GLOBAL, Shuffle.FILES))
        self._files = [_LineFile(p) for p in _find_files(dataset_files, self.where)]
        lengths = [len(f) for f in self._files]
        if sum(lengths) == 0:
            raise RuntimeError(
                f"For '{self.where}', the files {[f.path for f in self._files]} hold no rows (no non-empty line)."
            )
        super().__init__(columns, lengths, mode, num_samples, num_parallel_workers, num_shards, shard_id)
        self._cache = cache

    def _line(self, i: int) -> tuple:
        f, j = self.locate(i)
        return self._files[f], j, self._files[f].line(j)


class TextFileDataset(_LineReader):
    """MindSpore's ``TextFileDataset(dataset_files, num_samples=None, num_parallel_workers=None,
    shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None)``: one row per non-empty line of the
    files, the column ``text`` (a scalar str array, without the line's ``\\n``)."""

    where = "TextFileDataset"

    def __init__(self, dataset_files, num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):  # fmt: skip
        super().__init__(["text"], dataset_files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id,
                         cache)  # fmt: skip

    def _read(self, i: int):
        return (np.array(self._line(i)[2], dtype=np.str_),)


# Each task's and usage's columns: {column: its key path in a line's JSON object}; MindSpore orders the columns
# by name.
_TARGET = {f"span{k}_{what}": f"target/span{k}_{what}" for k in (1, 2) for what in ("index", "text")}
_CLUE_COLUMNS = {
    "AFQMC": {"train": ["sentence1", "sentence2", "label"], "test": ["id", "sentence1", "sentence2"],
              "eval": ["sentence1", "sentence2", "label"]},
    "CMNLI": {"train": ["sentence1", "sentence2", "label"], "test": ["id", "sentence1", "sentence2"],
              "eval": ["sentence1", "sentence2", "label"]},
    "CSL": {"train": ["id", "abst", "keyword", "label"], "test": ["id", "abst", "keyword"],
            "eval": ["id", "abst", "keyword", "label"]},
    "IFLYTEK": {"train": ["label", "label_des", "sentence"], "test": ["id", "sentence"],
                "eval": ["label", "label_des", "sentence"]},
    "TNEWS": {"train": ["label", "label_desc", "sentence", "keywords"], "test": ["id", "sentence", "keywords"],
              "eval": ["label", "label_desc", "sentence", "keywords"]},
    "WSC": {"train": [*_TARGET, "idx", "label", "text"], "test": [*_TARGET, "idx", "text"],
            "eval": [*_TARGET, "idx", "label", "text"]},
}  # fmt: skip
_TASKS = ("AFQMC", "TNEWS", "IFLYTEK", "CMNLI", "WSC", "CSL")


def _json_value(value) -> np.ndarray:
    """A JSON value as MindSpore's CLUE reader gives it: a str scalar for a string, uint32 for an integer >= 0,
    int32 for a negative one, float32 for a number with a fraction or exponent, a 1-D str array for a list."""
    if isinstance(value, str):
        return np.array(value, dtype=np.str_)
    if isinstance(value, bool) or value is None or isinstance(value, dict):
        raise ValueError(f"the JSON value {value!r} is not a string, a number or a list of strings")
    if isinstance(value, int):
        return np.array(value, dtype=np.int64).astype(np.uint32 if value >= 0 else np.int32)
    if isinstance(value, float):
        return np.array(value, dtype=np.float32)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return np.array(value, dtype=np.str_)
    raise ValueError(f"the JSON list {value!r} does not hold only strings")


class CLUEDataset(_LineReader):
    """MindSpore's ``CLUEDataset(dataset_files, task='AFQMC', usage='train', num_samples=None,
    num_parallel_workers=None, shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None)``: one row per
    non-empty line of the CLUE JSON-lines files, its columns those of ``task`` and ``usage`` (sorted by name, as
    MindSpore orders them):

    - AFQMC, CMNLI: train / eval ``label``, ``sentence1``, ``sentence2``; test ``id``, ``sentence1``, ``sentence2``
    - TNEWS: train / eval ``keywords``, ``label``, ``label_desc``, ``sentence``; test ``id``, ``keywords``,
      ``sentence``
    - IFLYTEK: train / eval ``label``, ``label_des``, ``sentence``; test ``id``, ``sentence``
    - WSC: ``idx``, ``label`` (not in test), ``span1_index``, ``span1_text``, ``span2_index``, ``span2_text``
      (from the line's ``target`` object), ``text``
    - CSL: ``abst``, ``id``, ``keyword``, ``label`` (not in test)

    A string is a scalar str array, an integer a uint32 scalar (int32 when negative), a number with a fraction a
    float32 scalar, a list of strings a 1-D str array. A line that is not JSON, or lacks a column's key, is a
    RuntimeError when it is read."""

    where = "CLUEDataset"

    def __init__(self, dataset_files, task="AFQMC", usage="train", num_samples=None, num_parallel_workers=None,
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None):  # fmt: skip
        task = "AFQMC" if task is None else task
        usage = "train" if usage is None else usage
        if task not in _TASKS:
            raise ValueError("task should be 'AFQMC', 'TNEWS', 'IFLYTEK', 'CMNLI', 'WSC' or 'CSL'.")
        if usage not in ("train", "test", "eval"):
            raise ValueError("usage should be 'train', 'test' or 'eval'.")
        self.task, self.usage = task, usage
        columns = sorted(_CLUE_COLUMNS[task][usage])
        self._keys = [_TARGET.get(c, c).split("/") for c in columns]
        super().__init__(columns, dataset_files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id,
                         cache)  # fmt: skip

    def _read(self, i: int):
        file, j, line = self._line(i)
        try:
            record = json.loads(line)
        except ValueError as e:
            raise RuntimeError(f"Invalid file, failed to parse json file: {line} (line {j} of '{file.path}')") from e
        row = []
        for keys in self._keys:
            value = record
            for key in keys:
                if not isinstance(value, dict) or key not in value:
                    raise RuntimeError(f"Invalid data, failed to find key: {key} (line {j} of '{file.path}')")
                value = value[key]
            try:
                row.append(_json_value(value))
            except ValueError as e:
                raise RuntimeError(f"Invalid data, the key '{keys[-1]}' of line {j} of '{file.path}': {e}") from e
        return tuple(row)
