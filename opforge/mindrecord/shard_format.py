"""MindSpore's MindRecord on-disk format (version 3.0, the one MindSpore 1.x and 2.x write and read),
shared by ``FileWriter``, ``FileReader`` and ``ds.MindDataset``.

A dataset is 1 to 1000 shard files, each with an SQLite index file beside it (``<file>.db``). A shard
file is:

- the header region (``header_size`` bytes, 16 MB by default): ``uint64`` (little-endian) length, then that
  many bytes of JSON: ``header_size``, ``page_size``, ``index_fields`` ([{"index_field", "schema_id"}]),
  ``page`` (this shard's pages), ``schema`` ([{"blob_fields", "desc", "schema"}]), ``shard_addresses``
  (every shard's file name), ``shard_id``, ``statistics``, ``version`` ("3.0");
- pages of ``page_size`` bytes (32 MB by default), page ``p`` at ``header_size + p * page_size`` (the file
  is sparse: only the bytes written take room). A page is ``BLOB_DATA`` or ``RAW_DATA``, its JSON
  ``{"page_id", "shard_id", "page_type", "page_type_id", "start_row_id", "end_row_id", "row_group_ids":
  [{"id", "offset"}], "page_size"}`` (``page_size`` there is the bytes used).

A blob page (a row group, ``page_type_id`` its group id) holds its rows' blobs, each ``uint64`` length (LE)
then the bytes: the row's single blob field, or with several, each field in sorted name order as a
big-endian ``uint64`` length and its bytes. Blob fields are the ``bytes`` fields and the arrays (fields
with a ``shape``); an array is its values' bytes (little-endian), and when the schema has an int32/int64
array every int32/int64 array is compressed: a big-endian ``uint32`` count, a bitmap of 2 bits per value
(first value in the high bits: 0 int8, 1 int16, 2 int32, 3 int64), then each value little-endian in that
width. A raw page holds each row's other fields as a MessagePack map, ``uint64`` length (LE) first; its
``row_group_ids`` say where each row group's rows start in it.

The index file's table ``INDEXES`` has one line per row: ``ROW_ID``, ``ROW_GROUP_ID``, ``PAGE_ID_RAW``,
``PAGE_OFFSET_RAW``, ``PAGE_OFFSET_RAW_END``, ``PAGE_ID_BLOB``, ``PAGE_OFFSET_BLOB``,
``PAGE_OFFSET_BLOB_END`` (offsets in the page, lengths included) and, for each index field ``f``,
``INC_<k>`` and ``f_<schema id>``; the table ``SHARD_NAME`` holds the shard file's name.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import struct

import numpy as np

from opforge.mindrecord import msgpack

VERSION = "3.0"
SUPPORTED_VERSIONS = ("2.0", "3.0")
DEFAULT_HEADER_SIZE = 1 << 24
DEFAULT_PAGE_SIZE = 1 << 25
MIN_HEADER_SIZE, MAX_HEADER_SIZE = 1 << 14, 1 << 27
MIN_PAGE_SIZE, MAX_PAGE_SIZE = 1 << 15, 1 << 28
MIN_SHARD_COUNT, MAX_SHARD_COUNT = 1, 1000
PAGE_RAW, PAGE_BLOB = "RAW_DATA", "BLOB_DATA"

VALID_ATTRIBUTES = ("int32", "int64", "float32", "float64", "string", "bytes")
VALID_ARRAY_ATTRIBUTES = ("int32", "int64", "float32", "float64")
SCALAR_TYPES = ("string", "int32", "int64", "float32", "float64")  # the fields an index may name
_SQL_TYPES = {"string": "TEXT", "int32": "INTEGER", "int64": "INTEGER", "float32": "NUMERIC", "float64": "NUMERIC"}
_FIELD_NAME = re.compile(r"^[0-9a-zA-Z_]+$")


class MindRecordError(RuntimeError):
    """A MindRecord file that cannot be read: missing, truncated, corrupted, or its index not matching."""


# ---------------------------------------------------------------------------------------------
# Schema


def schema_error(content) -> str:
    """Why ``content`` is not a valid MindRecord schema ('' when it is), as MindSpore's FileWriter checks."""
    if not isinstance(content, dict):
        return f"the schema must be a dict, but got {type(content).__name__}"
    if not content:
        return "the schema is empty"
    for name, spec in content.items():
        if not isinstance(name, str) or not _FIELD_NAME.match(name):
            return f"the field name {name!r} must be made of '0-9', 'a-z', 'A-Z' and '_'"
        if not isinstance(spec, dict) or "type" not in spec or len(spec) > 2:
            return f"the field '{name}' must be a dict with 'type' (and 'shape' for an array), but got {spec!r}"
        if len(spec) == 1:
            if spec["type"] not in VALID_ATTRIBUTES:
                return f"the field '{name}' has the type {spec['type']!r}, not one of {list(VALID_ATTRIBUTES)}"
            continue
        if "shape" not in spec:
            return f"the field '{name}' must be a dict with 'type' and 'shape', but got {spec!r}"
        if spec["type"] not in VALID_ARRAY_ATTRIBUTES:
            return f"the array field '{name}' has the type {spec['type']!r}, not one of {list(VALID_ARRAY_ATTRIBUTES)}"
        shape = spec["shape"]
        # [] is a 0-d array (MindSpore's check loops over the dims, so accepts it; the zoo's TB-Net writes its ids so)
        ok = isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)
        if not ok or any(d == 0 or d < -1 for d in shape) or shape.count(-1) > 1:
            return f"the field '{name}' has the shape {shape!r}: a list of ints > 0 with at most one -1"
    return ""


def blob_fields(schema: dict) -> list:
    """The fields stored in blob pages (bytes and arrays), in sorted name order (MindSpore's order)."""
    return [k for k in sorted(schema) if schema[k]["type"] == "bytes" or "shape" in schema[k]]


def compresses_integers(schema: dict, version: str = VERSION) -> bool:
    """Version 3.0 compresses the int32/int64 arrays when the schema has one."""
    arrays = any(v["type"] in ("int32", "int64") and "shape" in v for v in schema.values())
    return arrays and version >= VERSION


# ---------------------------------------------------------------------------------------------
# Integer compression and blobs

_LIMITS = (np.iinfo(np.int8), np.iinfo(np.int16), np.iinfo(np.int32))


def compress_ints(values: np.ndarray) -> bytes:
    """An int32/int64 array compressed: count (BE uint32), 2-bit width codes, each value LE in its width."""
    v = np.ascontiguousarray(values, np.int64).reshape(-1)
    n = len(v)
    code = np.full(n, 3, np.uint8)
    for c in (2, 1, 0):
        code[(v >= _LIMITS[c].min) & (v <= _LIMITS[c].max)] = c
    padded = np.zeros(-(-n // 4) * 4, np.uint8)
    padded[:n] = code
    quads = padded.reshape(-1, 4)
    bitmap = (quads[:, 0] << 6) | (quads[:, 1] << 4) | (quads[:, 2] << 2) | quads[:, 3]
    width = (1 << code.astype(np.int64))[:, None]
    data = v.astype("<i8").view(np.uint8).reshape(n, 8)[np.arange(8)[None, :] < width]
    return struct.pack(">I", n) + bitmap.astype(np.uint8).tobytes() + data.tobytes()


def uncompress_ints(blob: bytes, dtype) -> np.ndarray:
    """``compress_ints``'s inverse, as ``dtype`` (int32 or int64)."""
    if len(blob) < 4:
        raise MindRecordError(f"a compressed integer array has {len(blob)} bytes, fewer than its 4-byte count")
    n = struct.unpack(">I", blob[:4])[0]
    nmap = -(-n // 4)
    b = np.frombuffer(blob, np.uint8)
    if len(b) < 4 + nmap:
        raise MindRecordError(f"a compressed integer array of {n} values ends inside its width bitmap")
    bitmap = b[4 : 4 + nmap]
    code = np.stack([bitmap >> 6, bitmap >> 4, bitmap >> 2, bitmap], axis=1).reshape(-1)[:n] & 3
    width = 1 << code.astype(np.int64)
    starts = 4 + nmap + np.concatenate([[0], np.cumsum(width)[:-1]]).astype(np.int64)
    if n and starts[-1] + width[-1] != len(b):
        raise MindRecordError(
            f"a compressed integer array of {n} values needs {int(starts[-1] + width[-1])} bytes, but has {len(b)}"
        )
    padded = np.concatenate([b, np.zeros(8, np.uint8)])
    gathered = padded[starts[:, None] + np.arange(8)[None, :]]
    gathered = np.where(np.arange(8)[None, :] < width[:, None], gathered, 0).astype(np.uint8)
    raw = gathered.reshape(-1).view("<i8") if n else np.zeros(0, np.int64)
    shift = (64 - 8 * width).astype(np.int64)
    return ((raw << shift) >> shift).astype(dtype)


def merge_blob(schema: dict, fields: list, row: dict, compress: bool) -> bytes:
    """A row's blob: its blob fields' bytes (arrays cast to the schema's type), compressed where the
    format compresses; with several fields each one prefixed by its big-endian uint64 length."""
    parts = []
    for name in fields:
        value, spec = row[name], schema[name]
        if spec["type"] == "bytes":
            data = bytes(value)
        elif compress and spec["type"] in ("int32", "int64"):
            data = compress_ints(np.asarray(value).astype(spec["type"]))
        else:
            data = np.ascontiguousarray(np.asarray(value), "<" + np.dtype(spec["type"]).str[1:]).tobytes()
        parts.append(data)
    if len(parts) == 1:
        return parts[0]
    return b"".join(struct.pack(">Q", len(p)) + p for p in parts)


def split_blob(schema: dict, fields: list, blob: bytes, compress: bool, wanted=None) -> dict:
    """``merge_blob``'s inverse: {field: bytes (bytes fields) or the array (reshaped by the schema)}."""
    chunks = {}
    if len(fields) == 1:
        chunks[fields[0]] = blob
    else:
        pos = 0
        for name in fields:
            if pos + 8 > len(blob):
                raise MindRecordError(f"the blob of {len(blob)} bytes ends before the field '{name}'")
            (size,) = struct.unpack(">Q", blob[pos : pos + 8])
            if pos + 8 + size > len(blob):
                raise MindRecordError(f"the blob field '{name}' needs {size} bytes, past the blob's end")
            chunks[name] = blob[pos + 8 : pos + 8 + size]
            pos += 8 + size
    out = {}
    for name in fields if wanted is None else [f for f in fields if f in wanted]:
        spec, data = schema[name], chunks[name]
        if spec["type"] == "bytes":
            out[name] = bytes(data)
            continue
        if compress and spec["type"] in ("int32", "int64"):
            array = uncompress_ints(data, spec["type"])
        else:
            itemsize = np.dtype(spec["type"]).itemsize
            if len(data) % itemsize:
                raise MindRecordError(f"the array field '{name}' has {len(data)} bytes, not whole {spec['type']}s")
            array = np.frombuffer(data, "<" + np.dtype(spec["type"]).str[1:]).astype(spec["type"])
        try:
            out[name] = array.reshape(spec["shape"])
        except ValueError:
            raise MindRecordError(
                f"the array field '{name}' has {array.size} values, which do not fit its shape {spec['shape']}"
            ) from None
    return out


# ---------------------------------------------------------------------------------------------
# Pages and headers


class Page:
    """One page of a shard file, as its header describes it."""

    __slots__ = ("page_id", "shard_id", "page_type", "page_type_id", "start_row_id", "end_row_id",
                 "row_group_ids", "page_size")  # fmt: skip

    def __init__(self, page_id, shard_id, page_type, page_type_id, start_row_id=0, end_row_id=0,
                 row_group_ids=None, page_size=0):  # fmt: skip
        self.page_id, self.shard_id, self.page_type, self.page_type_id = page_id, shard_id, page_type, page_type_id
        self.start_row_id, self.end_row_id = start_row_id, end_row_id
        self.row_group_ids = list(row_group_ids or [])  # [(group id, offset in this page)]
        self.page_size = page_size

    def to_json(self) -> dict:
        groups = self.row_group_ids or [(0, 0)]  # MindSpore writes one {0, 0} for a page without groups
        return {"page_id": self.page_id, "shard_id": self.shard_id, "page_type": self.page_type,
                "page_type_id": self.page_type_id, "start_row_id": self.start_row_id, "end_row_id": self.end_row_id,
                "row_group_ids": [{"id": g, "offset": o} for g, o in groups], "page_size": self.page_size}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict) -> Page:
        groups = [(int(g["id"]), int(g["offset"])) for g in d.get("row_group_ids") or []]
        if d["page_type"] == PAGE_BLOB:
            groups = []  # a blob page's listed group is MindSpore's placeholder
        return cls(int(d["page_id"]), int(d["shard_id"]), d["page_type"], int(d["page_type_id"]),
                   int(d["start_row_id"]), int(d["end_row_id"]), groups, int(d["page_size"]))  # fmt: skip


def header_json(header_size, page_size, schema, desc, index_fields, pages, addresses, shard_id) -> bytes:
    """A shard's header as MindSpore serializes it (compact JSON, keys sorted; empty lists as null)."""
    fields = [{"index_field": f, "schema_id": 0} for f in index_fields]
    header = {
        "header_size": header_size, "index_fields": fields or None, "page": [p.to_json() for p in pages] or None,
        "page_size": page_size, "schema": [{"blob_fields": blob_fields(schema), "desc": desc, "schema": schema}],
        "shard_addresses": addresses, "shard_id": shard_id, "statistics": None, "version": VERSION,
    }  # fmt: skip
    return json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8")


def read_header(path: str) -> dict:
    """A shard file's header JSON, checked: MindRecordError naming the file when it is not one."""
    if not os.path.isfile(path):
        raise MindRecordError(f"the MindRecord file '{path}' does not exist")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise MindRecordError(f"the file '{path}' has {size} bytes, fewer than a MindRecord header's 8-byte length")
        (length,) = struct.unpack("<Q", head)
        if length > MAX_HEADER_SIZE or length + 8 > size:
            raise MindRecordError(
                f"the file '{path}' is not a MindRecord file or is truncated: its header length is {length} bytes, "
                f"but the file has {size} bytes"
            )
        text = f.read(length)
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise MindRecordError(f"the file '{path}' is not a MindRecord file: its header is not JSON ({e})") from e
    missing = [k for k in ("header_size", "page_size", "schema", "shard_addresses", "version") if k not in header]
    if not isinstance(header, dict) or missing:
        raise MindRecordError(f"the header of the file '{path}' lacks {missing}")
    if header["version"] not in SUPPORTED_VERSIONS:
        raise MindRecordError(
            f"the file '{path}' has the MindRecord version {header['version']!r}; supported: {list(SUPPORTED_VERSIONS)}"
        )
    return header


def pages_of(header: dict) -> list:
    return [Page.from_json(p) for p in header.get("page") or []]


def index_fields_of(header: dict) -> list:
    return [f["index_field"] for f in header.get("index_fields") or []]


# ---------------------------------------------------------------------------------------------
# The index file


def _sql_name(field: str) -> str:
    return field.replace("-", "_").replace(".", "_") + "_0"


def walk_rows(path: str, header: dict):
    """(row id, group id, raw page id, raw start, raw end, blob page id, blob start, blob end) of each row of
    a shard, found as MindSpore's index generator does: each raw page's row groups, the rows of each group
    from its blob page, their raw and blob entries one after the other."""
    header_size, page_size = int(header["header_size"]), int(header["page_size"])
    pages = pages_of(header)
    blobs = {p.page_type_id: p for p in pages if p.page_type == PAGE_BLOB}
    with open(path, "rb") as f:
        for raw_page in (p for p in pages if p.page_type == PAGE_RAW):
            for group, raw_offset in raw_page.row_group_ids:
                blob_page = blobs.get(group)
                if blob_page is None:
                    raise MindRecordError(f"the file '{path}' lists the row group {group}, which has no blob page")
                blob_offset = 0
                for row in range(blob_page.start_row_id, blob_page.end_row_id):
                    f.seek(header_size + page_size * raw_page.page_id + raw_offset)
                    raw_len = _read_u64(f, path, row)
                    raw_end = raw_offset + 8 + raw_len
                    f.seek(header_size + page_size * blob_page.page_id + blob_offset)
                    blob_end = blob_offset + 8 + _read_u64(f, path, row)
                    yield (row, group, raw_page.page_id, raw_offset, raw_end, blob_page.page_id, blob_offset, blob_end)
                    raw_offset, blob_offset = raw_end, blob_end


def _read_u64(f, path: str, row: int) -> int:
    data = f.read(8)
    if len(data) < 8:
        raise MindRecordError(f"the file '{path}' is truncated: row {row}'s entry is past the end of the file")
    return struct.unpack("<Q", data)[0]


def write_index(path: str, header: dict) -> None:
    """Write ``<path>.db``, the shard's SQLite index, as MindSpore's ``ShardIndexGenerator``."""
    schema = header["schema"][0]["schema"]
    fields = index_fields_of(header)
    header_size, page_size = int(header["header_size"]), int(header["page_size"])
    db_path = path + ".db"
    if os.path.exists(db_path):
        os.remove(db_path)
    columns = ("ROW_ID INT NOT NULL, PAGE_ID_RAW INT NOT NULL, PAGE_OFFSET_RAW INT NOT NULL, PAGE_OFFSET_RAW_END "
               "INT NOT NULL, ROW_GROUP_ID INT NOT NULL, PAGE_ID_BLOB INT NOT NULL, PAGE_OFFSET_BLOB INT NOT NULL, "
               "PAGE_OFFSET_BLOB_END INT NOT NULL")  # fmt: skip
    for k, field in enumerate(fields):
        columns += f",INC_{k} INT, {_sql_name(field)} {_SQL_TYPES[schema[field]['type']]}"
    keys = "".join(f",INC_{k}" for k in range(len(fields)))
    names = ["ROW_ID", "ROW_GROUP_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW", "PAGE_OFFSET_RAW_END", "PAGE_ID_BLOB",
             "PAGE_OFFSET_BLOB", "PAGE_OFFSET_BLOB_END"]  # fmt: skip
    for k, field in enumerate(fields):
        names += [f"INC_{k}", _sql_name(field)]
    rows = []
    with open(path, "rb") as f:
        for loc in walk_rows(path, header):
            values = list(loc)
            if fields:
                f.seek(header_size + page_size * loc[2] + loc[3] + 8)
                raw = msgpack.unpack(f.read(loc[4] - loc[3] - 8))
                for field in fields:
                    values += [0, raw[field]]
            rows.append(values)
    db = sqlite3.connect(db_path)
    try:
        db.execute(f"CREATE TABLE INDEXES({columns}, PRIMARY KEY(ROW_ID{keys}));")
        db.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL);")
        db.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?);", (os.path.basename(path),))
        marks = ",".join("?" * len(names))
        db.executemany(f"INSERT INTO INDEXES ({','.join(names)}) VALUES ({marks});", rows)
        db.commit()
    finally:
        db.close()


def read_index(path: str) -> np.ndarray:
    """The row locations of a shard from its index file, by row id: an int64 array of (raw page id, raw
    start, raw end, blob page id, blob start, blob end) rows; MindRecordError when the index is missing or
    belongs to another file."""
    db_path = path + ".db"
    if not os.path.isfile(db_path):
        raise MindRecordError(f"the index file '{db_path}' of the MindRecord file '{path}' does not exist")
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            names = db.execute("SELECT NAME FROM SHARD_NAME;").fetchall()
            locations = db.execute(
                "SELECT PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, PAGE_OFFSET_BLOB, "
                "PAGE_OFFSET_BLOB_END FROM INDEXES ORDER BY ROW_ID;"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error as e:
        raise MindRecordError(f"the index file '{db_path}' cannot be read: {e}") from e
    if not names or names[0][0] != os.path.basename(path):
        found = names[0][0] if names else None
        raise MindRecordError(
            f"the index file '{db_path}' belongs to the file {found!r}, not '{os.path.basename(path)}'"
        )
    return np.asarray(locations, np.int64).reshape(-1, 6)
