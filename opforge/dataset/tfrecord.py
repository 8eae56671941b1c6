"""MindSpore's ``TFRecordDataset``: rows of ``tf.train.Example`` records read from TFRecord files, with no
TensorFlow or protobuf package (the record framing, CRC-32C and protobuf wire format are read here).

A TFRecord file is a sequence of records, each ``uint64 length`` (little-endian), ``uint32`` masked
CRC-32C of those 8 bytes, ``length`` bytes of data, ``uint32`` masked CRC-32C of the data. A file may be
GZIP or ZLIB compressed as a whole (``compression_type``). The reader checks every record's length and
length CRC when it is made (counting the rows), and a record's data CRC when it reads the record; a
mismatch or a truncated file is a RuntimeError naming the file and the record.

Each record is a ``tf.train.Example``::

    Example  { Features features = 1; }
    Features { map<string, Feature> feature = 1; }
    Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
    BytesList { repeated bytes value = 1; }
    FloatList { repeated float value = 1; }
    Int64List { repeated int64 value = 1; }

read by a small protobuf wire-format decoder (varints, fixed32/64, length-delimited fields; packed and
unpacked repeated numbers; unknown fields skipped).
"""

from __future__ import annotations

import glob
import gzip
import os
import struct
import zlib

import numpy as np

from opforge.dataset import cache_client
from opforge.dataset.crc32c import masked_crc32c
from opforge.dataset.schema import Column, load_schema, numpy_type
from opforge.dataset.shuffle import FileRows, Shuffle, shuffle_mode

__all__ = ["TFRecordDataset", "parse_example"]

_WHERE = "TFRecordDataset"


# ---------------------------------------------------------------------------------------------
# The protobuf wire format


class ProtobufError(ValueError):
    """A record that is not a well-formed ``tf.train.Example``."""


def _varint(buf: bytes, pos: int) -> tuple:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("a varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError("a varint is longer than 10 bytes")


def _fields(buf: bytes):
    """(field number, wire type, value) of each field of a message: an int for varints and fixed numbers
    (fixed32/64 as raw little-endian bytes), the bytes of a length-delimited field."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"field {number} has the unsupported wire type {wire} (groups are not used by Example)")
        if pos > end:
            raise ProtobufError(f"field {number} runs past the end of its message")
        yield number, wire, value


def _packed_varints(data: bytes) -> np.ndarray:
    """The int64 values of packed varints, decoded together: each value's 7-bit groups, shifted into place
    and summed (their bits do not overlap), two's complement for negatives."""
    b = np.frombuffer(data, np.uint8)
    if len(b) == 0:
        return np.zeros(0, np.int64)
    ends = np.flatnonzero(b < 0x80)
    if len(ends) == 0 or ends[-1] != len(b) - 1:
        raise ProtobufError("a packed int64 list ends inside a varint")
    starts = np.concatenate([[0], ends[:-1] + 1])
    lengths = ends - starts + 1
    if lengths.max() > 10:
        raise ProtobufError("a varint is longer than 10 bytes")
    place = np.arange(len(b)) - np.repeat(starts, lengths)
    groups = (b & 0x7F).astype(np.uint64) << (7 * place).astype(np.uint64)
    return np.add.reduceat(groups, starts).view(np.int64)


def _bytes_list(buf: bytes) -> list:
    return [bytes(v) for n, w, v in _fields(buf) if n == 1 and w == 2]


def _float_list(buf: bytes) -> np.ndarray:
    parts = []
    for n, w, v in _fields(buf):
        if n == 1 and w == 2:
            if len(v) % 4:
                raise ProtobufError(f"a packed float list has {len(v)} bytes, not a multiple of 4")
            parts.append(np.frombuffer(v, "<f4"))
        elif n == 1 and w == 5:
            parts.append(np.frombuffer(v, "<f4"))
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


def _int64_list(buf: bytes) -> np.ndarray:
    parts = []
    for n, w, v in _fields(buf):
        if n == 1 and w == 2:
            parts.append(_packed_varints(v))
        elif n == 1 and w == 0:
            parts.append(np.array([v - (1 << 64) if v >= 1 << 63 else v], np.int64))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


_KINDS = {1: ("bytes_list", _bytes_list), 2: ("float_list", _float_list), 3: ("int64_list", _int64_list)}


def _feature(buf: bytes) -> tuple:
    kind = (None, [])
    for n, w, v in _fields(buf):
        if n in _KINDS and w == 2:  # a oneof: the last kind given wins
            name, parse = _KINDS[n]
            kind = (name, parse(v))
    return kind


def parse_example(buf) -> dict:
    """A serialized ``tf.train.Example`` as {feature name: (kind, values)}: kind ``bytes_list`` (a list of
    bytes), ``float_list`` (a float32 array) or ``int64_list`` (an int64 array)."""
    buf = bytes(buf)
    features = {}
    for n, w, v in _fields(buf):
        if n != 1 or w != 2:
            continue
        for fn, fw, entry in _fields(v):  # Features: its map entries {key = 1, value = 2}
            if fn != 1 or fw != 2:
                continue
            key, value = None, b""
            for en, ew, ev in _fields(entry):
                if en == 1 and ew == 2:
                    key = ev.decode("utf-8")
                elif en == 2 and ew == 2:
                    value = ev
            if key is None:
                raise ProtobufError("a feature map entry has no key")
            features[key] = _feature(value)
    return features


# ---------------------------------------------------------------------------------------------
# Files


_COMPRESSIONS = {None: None, "": None, "GZIP": gzip.decompress, "ZLIB": zlib.decompress}


class _RecordFile:
    """One TFRecord file: its bytes (mapped, or decompressed in memory) and its records' offsets."""

    def __init__(self, path: str, compression):
        self.path = path
        size = os.path.getsize(path)
        if compression is None:
            self.buf = np.memmap(path, np.uint8, "r") if size else np.zeros(0, np.uint8)
        else:
            with open(path, "rb") as f:
                raw = f.read()
            try:
                self.buf = np.frombuffer(_COMPRESSIONS[compression](raw), np.uint8)
            except (OSError, EOFError, zlib.error) as e:
                raise RuntimeError(
                    f"For '{_WHERE}', the file '{path}' cannot be decompressed as {compression}: {e}"
                ) from e
        self.offsets, self.lengths = self._scan()

    def _scan(self) -> tuple:
        buf, n = self.buf, len(self.buf)
        offsets, lengths = [], []
        pos = 0
        while pos < n:
            k = len(offsets)
            if n - pos < 12:
                raise RuntimeError(
                    f"For '{_WHERE}', the file '{self.path}' is truncated: record {k} at byte {pos} needs a 12-byte "
                    f"header (length and its CRC), but {n - pos} bytes are left."
                )
            head = buf[pos : pos + 12].tobytes()
            length, length_crc = struct.unpack("<QI", head)
            if masked_crc32c(head[:8]) != length_crc:
                raise RuntimeError(
                    f"For '{_WHERE}', the file '{self.path}' is corrupted or not a TFRecord file: the length of "
                    f"record {k} (at byte {pos}) fails its CRC check (stored 0x{length_crc:08x}, computed "
                    f"0x{masked_crc32c(head[:8]):08x})."
                )
            if pos + 16 + length > n:
                raise RuntimeError(
                    f"For '{_WHERE}', the file '{self.path}' is truncated: record {k} at byte {pos} holds {length} "
                    f"bytes of data and a 4-byte CRC, but {n - pos - 12} bytes are left."
                )
            offsets.append(pos + 12)
            lengths.append(length)
            pos += 16 + length
        return np.asarray(offsets, np.int64), np.asarray(lengths, np.int64)

    def __len__(self) -> int:
        return len(self.offsets)

    def record(self, j: int) -> bytes:
        """Record ``j``'s data, its CRC checked."""
        start, length = int(self.offsets[j]), int(self.lengths[j])
        data = self.buf[start : start + length]
        (stored,) = struct.unpack("<I", self.buf[start + length : start + length + 4].tobytes())
        computed = masked_crc32c(data)
        if computed != stored:
            raise RuntimeError(
                f"the file '{self.path}' is corrupted: the data of record {j} (bytes {start}..{start + length}) "
                f"fails its CRC check (stored 0x{stored:08x}, computed 0x{computed:08x})"
            )
        return data.tobytes()


def _find_files(dataset_files, where: str = _WHERE) -> list:
    """The files of ``dataset_files`` (a path, a glob pattern, or a list of them), sorted (as MindSpore); ``where``
    names the reader in the errors (TextFileDataset and CLUEDataset take their files so too)."""
    if isinstance(dataset_files, (str, os.PathLike)):
        patterns = [dataset_files]
    elif isinstance(dataset_files, (list, tuple)) and dataset_files:
        patterns = list(dataset_files)
    else:
        raise TypeError(
            f"For '{where}', the 'dataset_files' must be a str or a non-empty list of str, but got {dataset_files!r}."
        )
    files = set()
    for pattern in patterns:
        if not isinstance(pattern, (str, os.PathLike)):
            raise TypeError(f"For '{where}', each of the 'dataset_files' must be a str, but got {pattern!r}.")
        pattern = os.fspath(pattern)
        found = [pattern] if os.path.isfile(pattern) else [p for p in glob.glob(pattern) if os.path.isfile(p)]
        if not found:
            raise ValueError(f"For '{where}', the dataset file '{pattern}' does not exist or matches no file.")
        files.update(found)
    return sorted(files)


# ---------------------------------------------------------------------------------------------
# Records to rows


_BYTES_TYPES = ("string", "uint8", "int8")
_FLOAT_TYPES = ("float16", "float32", "float64")
_INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool")
_INFERRED = {"bytes_list": "uint8", "float_list": "float32", "int64_list": "int64"}


def _bytes_values(column: Column, values: list) -> np.ndarray:
    if column.type == "string":
        return np.array([v.decode("utf-8") for v in values], dtype=np.str_)
    if len(values) == 1:
        return np.frombuffer(values[0], np.uint8).astype(column.type)
    width = max((len(v) for v in values), default=0)  # several byte strings: one per row, zero-padded
    out = np.zeros((len(values), width), np.uint8)
    for k, v in enumerate(values):
        out[k, : len(v)] = np.frombuffer(v, np.uint8)
    return out.astype(column.type)


def _check_kind(column: Column, kind: str) -> None:
    allowed = {"bytes_list": _BYTES_TYPES, "float_list": _FLOAT_TYPES, "int64_list": _INT_TYPES}[kind]
    if column.type not in allowed:
        raise ValueError(
            f"the feature '{column.name}' is a {kind}, which reads as {', '.join(allowed)}, but the schema gives "
            f"the column the type {column.type}"
        )


def _column_value(column: Column, kind: str, values) -> np.ndarray:
    """A feature's values as the column's array: its type, and its shape (-1 inferred) if the schema gives
    one; a scalar for rank 0; else 1-D (a bytes_list of several non-string values: one zero-padded row each)."""
    if kind is None:
        values = np.zeros(0, numpy_type(column.type))
    else:
        _check_kind(column, kind)
        if kind == "bytes_list":
            values = _bytes_values(column, values)
        elif kind == "int64_list" and column.type != "int64":
            info = np.iinfo(column.type) if column.type != "bool" else None
            if info is not None and len(values) and (values.min() < info.min or values.max() > info.max):
                raise ValueError(
                    f"the feature '{column.name}' holds {values.min()}..{values.max()}, out of the range of the "
                    f"column's type {column.type}"
                )
            values = values.astype(column.type)
        else:
            values = values.astype(numpy_type(column.type), copy=False)
    shape = column.shape if column.shape is not None else ([] if column.rank == 0 else None)
    if shape is None:
        return values
    try:
        return values.reshape(shape)
    except ValueError:
        raise ValueError(
            f"the feature '{column.name}' has {values.size} values, which do not fit the schema's shape {shape}"
        ) from None


def _columns(schema, columns_list, first: dict, path: str) -> list:
    """The columns to read: the schema's (or, without one, the first record's features, sorted by name, as
    uint8 / float32 / int64), those of ``columns_list`` in its order when given."""
    if schema is not None:
        columns = list(schema.columns)
    else:
        columns = [Column(name, _INFERRED.get(kind, "uint8"), None, 1) for name, (kind, _) in sorted(first.items())]
    if columns_list is None:
        return columns
    if isinstance(columns_list, str) or not all(isinstance(c, str) for c in columns_list):
        raise TypeError(f"For '{_WHERE}', the 'columns_list' must be a list of str, but got {columns_list!r}.")
    by_name = {c.name: c for c in columns}
    missing = [c for c in columns_list if c not in by_name]
    if missing:
        source = "the schema" if schema is not None else f"the first record of '{path}'"
        raise ValueError(
            f"For '{_WHERE}', the 'columns_list' names {missing}, which are not columns of {source} "
            f"(its columns are {list(by_name)})."
        )
    return [by_name[c] for c in columns_list]


class TFRecordDataset(FileRows):
    """MindSpore's ``TFRecordDataset(dataset_files, schema=None, columns_list=None, num_samples=None,
    num_parallel_workers=None, shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, shard_equal_rows=False,
    cache=None, compression_type=None)``: one row per ``tf.train.Example`` record of the files
    (``dataset_files``: a path, a glob pattern or a list of them, read in sorted order).

    ``schema`` (a ``ds.Schema`` or a JSON schema file) gives the columns, their types and shapes; without
    one, the first record's features are the columns (sorted by name): bytes_list as uint8, float_list as
    float32, int64_list as int64, each 1-D. A bytes_list reads as ``string`` (str values) or uint8/int8
    bytes, a float_list as float16/32/64, an int64_list as any integer type (range-checked). ``columns_list``
    picks columns, in its order. ``num_samples`` (or the schema's ``numRows``) caps the rows of each shard.

    ``shuffle``: ``Shuffle.GLOBAL`` or True (every row in a new random order each epoch), ``Shuffle.FILES``
    (the files in a new order), False. With ``num_shards``, each shard reads every ``num_shards``-th file
    (there must be at least ``num_shards`` files), or with ``shard_equal_rows=True`` every
    ``num_shards``-th row, the shards wrapped around to one size. ``compression_type``: None, "", "GZIP" or
    "ZLIB" (each file compressed whole, decompressed into memory when the dataset is made).
    ``num_parallel_workers`` reads rows in threads. ``cache``: a ``DatasetCache``
    (``opforge.dataset.cache_client``)."""

    where = _WHERE
    _mappable = False  # not MindSpore's MappableDataset: ``split`` goes row by row

    def __init__(self, dataset_files, schema=None, columns_list=None, num_samples=None, num_parallel_workers=None,
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, shard_equal_rows=False, cache=None,
                 compression_type=None):  # fmt: skip
        cache_client.check_cache(cache)
        if compression_type not in _COMPRESSIONS:
            raise ValueError(
                f"For '{_WHERE}', the 'compression_type' must be None, '', 'GZIP' or 'ZLIB', but got "
                f"{compression_type!r}."
            )
        if not isinstance(shard_equal_rows, (bool, np.bool_)):
            raise TypeError(f"For '{_WHERE}', the 'shard_equal_rows' must be a bool, but got {shard_equal_rows!r}.")
        mode = shuffle_mode(_WHERE, shuffle, Shuffle.GLOBAL, allowed=(Shuffle.GLOBAL, Shuffle.FILES))
        schema = load_schema(_WHERE, schema)
        paths = _find_files(dataset_files)
        self._files = [_RecordFile(p, compression_type or None) for p in paths]
        lengths = [len(f) for f in self._files]
        if sum(lengths) == 0:
            raise RuntimeError(f"For '{_WHERE}', the files {paths} hold no records.")
        first_file = next(f for f in self._files if len(f))
        try:
            first = {} if schema is not None else self._example(first_file, 0)
        except RuntimeError as e:
            raise RuntimeError(f"For '{_WHERE}', {e}.") from e
        self._spec = _columns(schema, columns_list, first, first_file.path)
        if num_samples is None and schema is not None and schema.num_rows > 0:
            num_samples = schema.num_rows
        by_files = num_shards is not None and not shard_equal_rows
        super().__init__([c.name for c in self._spec], lengths, mode, num_samples, num_parallel_workers, num_shards,
                         shard_id, by_files)  # fmt: skip
        if by_files and len(paths) < num_shards:
            raise ValueError(
                f"For '{_WHERE}', sharding by files needs at least 'num_shards' ({num_shards}) files, but got "
                f"{len(paths)}: give more files or shard_equal_rows=True."
            )
        self._cache = cache

    @staticmethod
    def _example(file: _RecordFile, j: int) -> dict:
        data = file.record(j)
        try:
            return parse_example(data)
        except (ProtobufError, UnicodeDecodeError) as e:
            raise RuntimeError(f"the record {j} of the file '{file.path}' is not a tf.train.Example: {e}") from e

    def _read(self, i: int):
        f, j = self.locate(i)
        file = self._files[f]
        example = self._example(file, j)
        row = []
        for column in self._spec:
            if column.name not in example:
                raise RuntimeError(
                    f"the record {j} of the file '{file.path}' has no feature '{column.name}' "
                    f"(its features are {sorted(example)})"
                )
            kind, values = example[column.name]
            try:
                row.append(_column_value(column, kind, values))
            except (ValueError, UnicodeDecodeError) as e:
                raise RuntimeError(f"in the record {j} of the file '{file.path}', {e}") from e
        return tuple(row)
