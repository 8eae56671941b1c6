"""MindSpore's ``mindspore.mindrecord.FileReader``, and ``ShardSet``, the reading of a MindRecord dataset's
shard files that ``FileReader`` and ``ds.MindDataset`` share (the format: ``shard_format``)."""

from __future__ import annotations

import os

import numpy as np

from opforge.mindrecord import msgpack
from opforge.mindrecord.shard_format import (
    MindRecordError,
    compresses_integers,
    read_header,
    read_index,
    split_blob,
)

__all__ = ["FileReader"]

_META = ("header_size", "page_size", "version", "index_fields", "schema")


def dataset_paths(where: str, file_name) -> list:
    """The shard files to read: every shard of the dataset that ``file_name`` (one shard's path) belongs
    to, found from its header beside it, or exactly the files of a list."""
    if isinstance(file_name, (list, tuple)):
        if not file_name or not all(isinstance(f, (str, os.PathLike)) for f in file_name):
            raise TypeError(f"For '{where}', the file list must be a non-empty list of str, but got {file_name!r}.")
        return [os.fspath(f) for f in file_name]
    if not isinstance(file_name, (str, os.PathLike)):
        raise TypeError(f"For '{where}', the file name must be a str or a list of str, but got {file_name!r}.")
    path = os.fspath(file_name)
    try:
        header = read_header(path)
    except MindRecordError as e:
        raise MindRecordError(f"For '{where}', {e}.") from e
    addresses = header["shard_addresses"]
    if os.path.basename(path) not in addresses:
        raise MindRecordError(
            f"For '{where}', the file '{path}' is not one of its dataset's shards {addresses}: MindRecord files "
            "cannot be renamed."
        )
    return [os.path.join(os.path.dirname(path), a) for a in addresses]


class ShardSet:
    """The shard files of a MindRecord dataset, opened and checked: their headers agree, each has its index
    file, and every row's entries lie inside its file. ``read(shard, row)`` gives a row's fields."""

    def __init__(self, where: str, file_name):
        self.where = where
        self.paths = dataset_paths(where, file_name)
        try:
            headers = [read_header(p) for p in self.paths]
            for path, header in zip(self.paths[1:], headers[1:]):
                differ = [k for k in _META if header.get(k) != headers[0].get(k)]
                if differ:
                    raise MindRecordError(f"the file '{path}' differs from '{self.paths[0]}' in its {differ}")
            self.locations = [read_index(p) for p in self.paths]
        except MindRecordError as e:
            raise MindRecordError(f"For '{where}', {e}.") from e
        first = headers[0]
        self.header = first
        self.schema = first["schema"][0]["schema"]
        self.blob_fields = list(first["schema"][0]["blob_fields"])
        self.compress = compresses_integers(self.schema, first["version"])
        self.header_size, self.page_size = int(first["header_size"]), int(first["page_size"])
        for path, loc in zip(self.paths, self.locations):
            self._check_bounds(path, loc)
        self._fds = [os.open(p, os.O_RDONLY) for p in self.paths]

    def _check_bounds(self, path: str, loc: np.ndarray) -> None:
        if not len(loc):
            return
        size = os.path.getsize(path)
        for page, start, end, what in ((0, 1, 2, "raw"), (3, 4, 5, "blob")):
            bad = (loc[:, end] - loc[:, start] < 8) | (loc[:, end] > self.page_size)
            bad |= self.header_size + self.page_size * loc[:, page] + loc[:, end] > size
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                at = int(self.header_size + self.page_size * loc[row, page] + loc[row, end])
                raise MindRecordError(
                    f"For '{self.where}', the file '{path}' is truncated or does not match its index: row {row}'s "
                    f"{what} entry ends at byte {at}, but the file has {size} bytes."
                )

    def __len__(self) -> int:
        return sum(len(loc) for loc in self.locations)

    def shard_lengths(self) -> list:
        return [len(loc) for loc in self.locations]

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []

    def __del__(self):
        if getattr(self, "_fds", None):
            self.close()

    def _entry(self, shard: int, row: int, page: int, start: int, end: int, what: str) -> bytes:
        offset = self.header_size + self.page_size * page + start
        data = os.pread(self._fds[shard], end - start, offset)
        length = int.from_bytes(data[:8], "little")
        if length != end - start - 8:
            raise MindRecordError(
                f"For '{self.where}', the file '{self.paths[shard]}' is corrupted: row {row}'s {what} entry at byte "
                f"{offset} says {length} bytes, its index {end - start - 8}."
            )
        return data[8:]

    def read(self, shard: int, row: int, wanted=None) -> dict:
        """Row ``row`` of shard ``shard`` as {field: value}: the scalar fields as Python values (int, float,
        str), the bytes fields as bytes, the arrays as NumPy arrays; only the fields of ``wanted`` if given."""
        raw_page, raw_start, raw_end, blob_page, blob_start, blob_end = (int(v) for v in self.locations[shard][row])
        out = {}
        if wanted is None or any(f not in self.blob_fields for f in wanted):
            try:
                raw = msgpack.unpack(self._entry(shard, row, raw_page, raw_start, raw_end, "raw"))
            except msgpack.MsgpackError as e:
                raise MindRecordError(
                    f"For '{self.where}', the file '{self.paths[shard]}' is corrupted: row {row}'s scalar fields "
                    f"are not MessagePack ({e})."
                ) from e
            out.update((k, v) for k, v in raw.items() if k in self.schema and (wanted is None or k in wanted))
        if self.blob_fields and (wanted is None or any(f in self.blob_fields for f in wanted)):
            blob = self._entry(shard, row, blob_page, blob_start, blob_end, "blob")
            try:
                out.update(split_blob(self.schema, self.blob_fields, blob, self.compress, wanted))
            except MindRecordError as e:
                raise MindRecordError(f"For '{self.where}', the file '{self.paths[shard]}' row {row}: {e}.") from e
        return out


class FileReader:
    """MindSpore's ``FileReader(file_name, num_consumer=4, columns=None, operator=None)``: reads a MindRecord
    dataset (``file_name`` one shard's path: every shard of its dataset; or a list of shard paths: those).
    ``get_next()`` yields each row as a dict {field: value} (``columns``: only those fields): scalars as
    Python int/float/str, bytes fields as bytes, arrays as NumPy arrays of the schema's type and shape.
    ``schema()`` is the schema dict, ``len()`` the number of rows; ``close()`` closes the files."""

    def __init__(self, file_name, num_consumer=4, columns=None, operator=None):
        if isinstance(num_consumer, bool) or not isinstance(num_consumer, int) or num_consumer < 1:
            raise ValueError(f"For 'FileReader', the 'num_consumer' must be an int >= 1, but got {num_consumer!r}.")
        if columns is not None and (not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)):
            raise TypeError(f"For 'FileReader', the 'columns' must be a list of str, but got {columns!r}.")
        self._shards = ShardSet("FileReader", file_name)
        if columns:
            unknown = [c for c in columns if c not in self._shards.schema]
            if unknown:
                self._shards.close()
                raise ValueError(
                    f"For 'FileReader', the 'columns' {unknown} are not fields of the schema "
                    f"{sorted(self._shards.schema)}."
                )
        self._columns = columns or None

    def get_next(self):
        """Yield every row, shard by shard, as a dict {field: value}."""
        for shard, n in enumerate(self._shards.shard_lengths()):
            for row in range(n):
                yield self._shards.read(shard, row, self._columns)

    def schema(self) -> dict:
        return dict(self._shards.schema)

    def len(self) -> int:
        return len(self._shards)

    def close(self) -> None:
        self._shards.close()
