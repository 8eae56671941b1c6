"""MindSpore's ``mindspore.mindrecord.FileWriter``: writes rows (dicts) into MindRecord shard files and
their SQLite index files, in MindSpore's format (``shard_format``), so that MindSpore reads them too."""

from __future__ import annotations

import os
import struct
import warnings

import numpy as np

from opforge.mindrecord import msgpack
from opforge.mindrecord.filereader import dataset_paths
from opforge.mindrecord.shard_format import (
    DEFAULT_HEADER_SIZE,
    DEFAULT_PAGE_SIZE,
    MAX_HEADER_SIZE,
    MAX_PAGE_SIZE,
    MAX_SHARD_COUNT,
    MIN_HEADER_SIZE,
    MIN_PAGE_SIZE,
    MIN_SHARD_COUNT,
    PAGE_BLOB,
    PAGE_RAW,
    SCALAR_TYPES,
    MindRecordError,
    Page,
    blob_fields,
    compresses_integers,
    header_json,
    index_fields_of,
    merge_blob,
    pages_of,
    read_header,
    schema_error,
    write_index,
)

__all__ = ["FileWriter"]

# The Python types a field's value may have, by type name, and the schema types each may fill (MindSpore's).
VALUE_TYPE_MAP = {"int": ["int32", "int64"], "float": ["float32", "float64"], "str": ["string"], "bytes": ["bytes"],
                  "int32": ["int32"], "int64": ["int64"], "float32": ["float32"], "float64": ["float64"],
                  "ndarray": ["int32", "int64", "float32", "float64"]}  # fmt: skip
_FORBIDDEN = set("\\/:*?\"<>|`&';")


def check_filename(where: str, path) -> str:
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"For '{where}', the file name must be a non-empty str, but got {path!r}.")
    path = os.fspath(path)
    name = os.path.basename(path)
    if path.endswith("/") or set(name) & _FORBIDDEN or name != name.strip(" "):
        raise ValueError(
            f"For '{where}', the file name '{path}' must not end with '/', start or end with a space, or hold any of "
            "\\/:*?\"<>|`&;'."
        )
    return path


def _row_error(schema: dict, row: dict) -> str:
    """Why ``row`` does not fit the schema ('' when it does), as MindSpore's FileWriter checks a row."""
    for field, spec in schema.items():
        if field not in row:
            return f"there is not '{field}' object in the raw data"
        value = row[field]
        kind = type(value).__name__
        if kind not in VALUE_TYPE_MAP or spec["type"] not in VALUE_TYPE_MAP[kind]:
            return f"data type for '{field}' is not matched (a {kind} for the type {spec['type']})"
        if kind == "ndarray":
            if "shape" not in spec:
                return f"data type for '{field}' is not matched (an array for a scalar field)"
            try:
                np.reshape(value, spec["shape"])
            except ValueError:
                return f"the array of '{field}' has the shape {value.shape}, which does not fit {spec['shape']}"
        elif "shape" in spec:
            return f"data type for '{field}' is not matched (a {kind} for an array field)"
        elif spec["type"] == "int32" and not -(1 << 31) <= int(value) < 1 << 31:
            return f"the value {value} of '{field}' is out of the range of int32"
    return ""


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value


class _ShardState:
    """The pages of one shard file being written: the open blob page (the current row group) and raw
    page (in memory until it is full or committed)."""

    def __init__(self, shard_id: int, pages: list, raw_bytes: bytes = b""):
        self.shard_id = shard_id
        self.pages = pages
        blobs = [p for p in pages if p.page_type == PAGE_BLOB]
        raws = [p for p in pages if p.page_type == PAGE_RAW]
        self.blob = blobs[-1] if blobs else None
        self.raw = raws[-1] if raws else None
        self.raw_bytes = bytearray(raw_bytes)
        self.next_row = self.blob.end_row_id if self.blob else 0
        continues = self.raw is not None and self.blob is not None and self.raw.row_group_ids
        if continues and self.raw.row_group_ids[-1][0] == self.blob.page_type_id:
            self.group_offset = self.raw.row_group_ids[-1][1]
        else:  # the last blob page's group is not the last raw page's last: start a new group
            self.group_offset = None


class FileWriter:
    """MindSpore's ``FileWriter(file_name, shard_num=1, overwrite=False)``: ``add_schema(content, desc=None)``
    (a dict {field: {"type": t}} with t one of int32, int64, float32, float64, string, bytes, or
    {"type": t, "shape": [...]} for an int32/int64/float32/float64 array, one dim may be -1), optionally
    ``add_index(index_fields)`` (scalar fields; by default every scalar field), then ``write_raw_data(rows)``
    any number of times and ``commit()``. ``open_for_append(file_name)`` reopens a committed dataset to add
    rows. With ``shard_num`` > 1 the files are ``file_name`` + the shard number (zero-padded), each call's
    rows split among them in turn.

    A row (a dict) must hold every field: an int (int32/int64), a float (float32/float64), a str (string),
    bytes (bytes), a NumPy scalar of the field's type, or an array that reshapes to the field's shape. As
    MindSpore, a row that does not fit is dropped with a warning saying why. Files that exist raise a
    RuntimeError unless ``overwrite=True`` (which deletes them and their index files)."""

    def __init__(self, file_name, shard_num=1, overwrite=False):
        file_name = check_filename("FileWriter", file_name)
        if isinstance(shard_num, bool) or not isinstance(shard_num, int):
            raise TypeError(f"For 'FileWriter', the 'shard_num' must be an int, but got {shard_num!r}.")
        if not MIN_SHARD_COUNT <= shard_num <= MAX_SHARD_COUNT:
            raise ValueError(
                f"For 'FileWriter', the 'shard_num' must be in [{MIN_SHARD_COUNT}, {MAX_SHARD_COUNT}], but got "
                f"{shard_num}."
            )
        if not isinstance(overwrite, bool):
            raise TypeError(f"For 'FileWriter', the 'overwrite' must be a bool, but got {overwrite!r}.")
        self._file_name = file_name
        width = len(str(shard_num - 1))
        self._paths = (
            [file_name] if shard_num == 1 else [f"{file_name}{str(k).rjust(width, '0')}" for k in range(shard_num)]
        )
        for path in self._paths:
            for existing in (path, path + ".db"):
                if os.path.exists(existing):
                    if not overwrite:
                        raise RuntimeError(
                            f"For 'FileWriter', the file '{existing}' already exists: delete it or give overwrite=True."
                        )
                    os.remove(existing)
        self._schema, self._desc, self._index = None, "", None
        self._header_size, self._page_size = DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE
        self._states, self._fds = None, []
        self._append, self._flushed = False, False

    # -- the schema and the header ---------------------------------------------------------------
    def add_schema(self, content, desc=None):
        """Set the schema (one per dataset); returns its id, 0."""
        if self._schema is not None:
            raise RuntimeError("For 'add_schema', the dataset already has a schema: MindRecord holds one.")
        error = schema_error(content)
        if error:
            raise ValueError(f"For 'add_schema', {error}.")
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"For 'add_schema', the 'desc' must be a str or None, but got {desc!r}.")
        self._schema = {k: dict(v) for k, v in content.items()}
        self._desc = desc or ""
        return 0

    def add_index(self, index_fields):
        """Index the scalar fields ``index_fields`` (a list of names) in the index files."""
        if not index_fields or not isinstance(index_fields, list):
            raise TypeError(f"For 'add_index', the 'index_fields' must be a non-empty list, but got {index_fields!r}.")
        if self._schema is None:
            raise RuntimeError("For 'add_index', add the schema first (add_schema).")
        for field in index_fields:
            if not isinstance(field, str):
                raise TypeError(f"For 'add_index', each index field must be a str, but got {field!r}.")
            spec = self._schema.get(field)
            if spec is None or spec["type"] not in SCALAR_TYPES or "shape" in spec:
                raise ValueError(
                    f"For 'add_index', the field {field!r} cannot be indexed: index fields must be scalar fields of "
                    f"the schema (int32, int64, float32, float64, string)."
                )
        if len(set(index_fields)) != len(index_fields) or (self._index and set(index_fields) & set(self._index)):
            raise ValueError(f"For 'add_index', a field is indexed twice: {index_fields}.")
        self._index = (self._index or []) + list(index_fields)
        return 0

    def set_header_size(self, header_size):
        """The bytes reserved for each file's header: a multiple of 4 in [16 KB, 128 MB] (default 16 MB)."""
        self._header_size = self._check_size("set_header_size", "header_size", header_size, MIN_HEADER_SIZE,
                                             MAX_HEADER_SIZE)  # fmt: skip
        return 0

    def set_page_size(self, page_size):
        """The bytes of each page: a multiple of 4 in [32 KB, 256 MB] (default 32 MB); a row's blob must fit."""
        self._page_size = self._check_size("set_page_size", "page_size", page_size, MIN_PAGE_SIZE, MAX_PAGE_SIZE)
        return 0

    def _check_size(self, where, name, value, low, high) -> int:
        if self._states is not None:
            raise RuntimeError(f"For '{where}', set the {name} before writing rows.")
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high or value % 4:
            raise ValueError(
                f"For '{where}', the '{name}' must be a multiple of 4 in [{low}, {high}], but got {value!r}."
            )
        return value

    # -- writing -----------------------------------------------------------------------------------
    def _open(self) -> None:
        if self._states is not None:
            return
        if self._schema is None:
            raise RuntimeError("For 'FileWriter', add the schema (add_schema) before writing or committing.")
        for path in self._paths:
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise RuntimeError(f"For 'FileWriter', the folder '{parent}' of the file '{path}' does not exist.")
        if self._index is None:  # MindSpore indexes every scalar field by default
            self._index = [k for k in sorted(self._schema) if self._scalar_field(k)]
        self._fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o644) for p in self._paths]
        self._states = [_ShardState(k, []) for k in range(len(self._paths))]

    def open_and_set_header(self):
        """Open the files (MindSpore's call before parallel writing; the model zoo's graph converter makes it):
        the schema must be set. Writing opens them too, so the call is optional. Returns 0 (SUCCESS)."""
        if self._flushed and not self._append:
            raise RuntimeError("For 'open_and_set_header', the files are committed.")
        self._open()
        return 0

    def _scalar_field(self, name: str) -> bool:
        spec = self._schema[name]
        return spec["type"] in SCALAR_TYPES and "shape" not in spec

    def write_raw_data(self, raw_data, parallel_writer=False):
        """Write the rows of ``raw_data`` (a list of dicts); a row that does not fit the schema is dropped
        with a warning. ``parallel_writer`` is accepted (the rows are written in this process)."""
        if self._flushed and not self._append:
            raise RuntimeError(
                "For 'write_raw_data', the files are committed: to add rows, open them with "
                "FileWriter.open_for_append(file_name)."
            )
        if not isinstance(raw_data, list):
            raise TypeError(
                f"For 'write_raw_data', the 'raw_data' must be a list of dicts, but got {type(raw_data).__name__}."
            )
        for row in raw_data:
            if not isinstance(row, dict):
                raise TypeError(f"For 'write_raw_data', each row must be a dict, but got {type(row).__name__}.")
        self._open()
        rows = []
        for k, row in enumerate(raw_data):
            error = _row_error(self._schema, row)
            if error:
                warnings.warn(f"For 'write_raw_data', the row {k} is dropped: {error}.", stacklevel=2)
            else:
                rows.append(row)
        for shard, chunk in self._split(rows):
            for row in chunk:
                self._write_row(shard, row)
        return 0

    def _split(self, rows: list):
        """Each shard's contiguous share of the rows: equal counts, the remainder to the shards with fewest."""
        n, shards = len(rows), len(self._states)
        counts = [n // shards] * shards
        for s in sorted(range(shards), key=lambda s: (self._states[s].next_row, s))[: n % shards]:
            counts[s] += 1
        start = 0
        for s, count in enumerate(counts):
            yield s, rows[start : start + count]
            start += count

    def _write_row(self, shard: int, row: dict) -> None:
        schema, blobs = self._schema, blob_fields(self._schema)
        raw = {k: _scalar(row[k]) for k in sorted(schema) if k not in blobs} or {"id": 0}  # MindSpore's dummy
        raw_entry = _entry(msgpack.pack(raw))
        blob = merge_blob(schema, blobs, row, compresses_integers(schema)) if blobs else b"\x00" * 4
        blob_entry = _entry(blob)
        if max(len(raw_entry), len(blob_entry)) > self._page_size:
            raise RuntimeError(
                f"For 'write_raw_data', a row needs {max(len(raw_entry), len(blob_entry))} bytes in one page, more "
                f"than the page size {self._page_size}: raise it with set_page_size."
            )
        state = self._states[shard]
        group_bytes = len(state.raw_bytes) - state.group_offset if state.group_offset is not None else 0
        if (state.blob is None or state.group_offset is None or state.blob.page_size + len(blob_entry) > self._page_size
                or group_bytes + len(raw_entry) > self._page_size):  # fmt: skip
            self._new_group(state, len(raw_entry))
        elif len(state.raw_bytes) + len(raw_entry) > self._page_size:
            self._shift_group(state)
        blob_page = state.blob
        self._pwrite(shard, blob_entry, blob_page.page_id, blob_page.page_size)
        blob_page.page_size += len(blob_entry)
        blob_page.end_row_id += 1
        state.raw_bytes += raw_entry
        state.raw.page_size = len(state.raw_bytes)
        state.next_row += 1

    def _new_group(self, state: _ShardState, raw_len: int) -> None:
        """A new row group: a new blob page, and its rows' start in the raw page (a new one if full)."""
        group = state.blob.page_type_id + 1 if state.blob else 0
        state.blob = Page(len(state.pages), state.shard_id, PAGE_BLOB, group, state.next_row, state.next_row)
        state.pages.append(state.blob)
        if state.raw is None or len(state.raw_bytes) + raw_len > self._page_size:
            self._new_raw_page(state, b"")
        state.group_offset = len(state.raw_bytes)
        state.raw.row_group_ids.append((group, state.group_offset))

    def _new_raw_page(self, state: _ShardState, carried: bytes) -> None:
        if state.raw is not None:
            self._flush_raw(state)
        type_id = state.raw.page_id + 1 if state.raw else 0  # MindSpore numbers raw pages so
        state.raw = Page(len(state.pages), state.shard_id, PAGE_RAW, type_id)
        state.pages.append(state.raw)
        state.raw_bytes = bytearray(carried)
        state.raw.page_size = len(carried)

    def _shift_group(self, state: _ShardState) -> None:
        """The raw page is full but the current group fits a page: move the group's rows to a new raw page
        (a group's raw entries are in one page), as MindSpore's ShiftRawPage."""
        carried = bytes(state.raw_bytes[state.group_offset :])
        group = state.raw.row_group_ids.pop()[0]
        del state.raw_bytes[state.group_offset :]
        state.raw.page_size = len(state.raw_bytes)
        self._new_raw_page(state, carried)
        state.group_offset = 0
        state.raw.row_group_ids.append((group, 0))

    def _flush_raw(self, state: _ShardState) -> None:
        self._pwrite(state.shard_id, bytes(state.raw_bytes), state.raw.page_id, 0)

    def _pwrite(self, shard: int, data: bytes, page_id: int, offset: int) -> None:
        os.pwrite(self._fds[shard], data, self._header_size + self._page_size * page_id + offset)

    def commit(self):
        """Write the headers and the index files, and close the files."""
        self._flushed = True
        self._open()
        addresses = [os.path.basename(p) for p in self._paths]
        for shard, state in enumerate(self._states):
            if state.raw is not None:
                self._flush_raw(state)
            header = header_json(self._header_size, self._page_size, self._schema, self._desc, self._index,
                                 state.pages, addresses, shard)  # fmt: skip
            if len(header) + 8 > self._header_size:
                raise RuntimeError(
                    f"For 'commit', the header of '{self._paths[shard]}' needs {len(header) + 8} bytes, more than the "
                    f"header size {self._header_size}: raise it with set_header_size."
                )
            os.pwrite(self._fds[shard], struct.pack("<Q", len(header)) + header, 0)
        for fd in self._fds:
            os.close(fd)
        self._fds, self._states = [], None
        for path in self._paths:
            write_index(path, read_header(path))
        return 0

    def __del__(self):  # a writer dropped without commit closes its files (they hold no header yet)
        for fd in getattr(self, "_fds", []):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- appending ---------------------------------------------------------------------------------
    @classmethod
    def open_for_append(cls, file_name):
        """A FileWriter that adds rows to the committed dataset of ``file_name`` (one of its shards)."""
        file_name = check_filename("open_for_append", file_name)
        try:
            paths = dataset_paths("open_for_append", file_name)
            headers = [read_header(p) for p in paths]
        except MindRecordError as e:
            raise RuntimeError(str(e)) from e
        writer = cls.__new__(cls)
        first = headers[0]
        writer._file_name, writer._paths = file_name, paths
        writer._schema = first["schema"][0]["schema"]
        writer._desc = first["schema"][0].get("desc", "")
        writer._index = index_fields_of(first)
        writer._header_size, writer._page_size = int(first["header_size"]), int(first["page_size"])
        writer._append, writer._flushed = True, False
        writer._fds = [os.open(p, os.O_RDWR) for p in paths]
        writer._states = []
        for shard, header in enumerate(headers):
            pages = pages_of(header)
            for k, page in enumerate(pages):
                page.page_id, page.shard_id = k, shard
            raws = [p for p in pages if p.page_type == PAGE_RAW]
            raw_bytes = b""
            if raws:
                offset = writer._header_size + writer._page_size * raws[-1].page_id
                raw_bytes = os.pread(writer._fds[shard], raws[-1].page_size, offset)
            writer._states.append(_ShardState(shard, pages, raw_bytes))
        return writer


def _entry(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data
