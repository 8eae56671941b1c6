"""MindSpore's ``mindspore.dataset.Schema``: the columns (name, type, shape) a reader gives, built with
``add_column`` / ``parse_columns`` or read from a JSON schema file as MindSpore writes them::

    {"datasetType": "TF", "numRows": 3,
     "columns": {"image": {"type": "uint8", "rank": 1}, "label": {"type": "int64", "rank": 1, "shape": [1]}}}

``columns`` may also be a list of ``{"name": ..., "type": ..., "shape": ...}``. A column's type is a
MindSpore dataset type name (``bool``, ``int8`` ... ``uint64``, ``float16``, ``float32``, ``float64``,
``string``) or an opforge dtype; ``shape`` (optional, at most one -1) is the shape of each row's value, and
without it ``rank`` 0 means a scalar. ``numRows`` caps the rows a reader gives (``TFRecordDataset``).
"""

from __future__ import annotations

import json
import os

import numpy as np

from opforge.dtype import Type

__all__ = ["Schema"]

TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64", "string")  # fmt: skip
_FROM_DTYPE = {"bool_": "bool"}  # an opforge dtype name (lower case) that is not the dataset type's name


def type_name(where: str, de_type) -> str:
    """The dataset type name of ``de_type`` (a name, an opforge dtype or a NumPy dtype)."""
    if isinstance(de_type, Type):
        name = de_type.np_dtype.name
    elif isinstance(de_type, str):
        name = de_type.lower()
    else:
        try:
            name = np.dtype(de_type).name
        except TypeError:
            name = repr(de_type)
    name = _FROM_DTYPE.get(name, name)
    if name not in TYPES:
        raise ValueError(f"For '{where}', the column type must be one of {list(TYPES)}, but got {de_type!r}.")
    return name


def numpy_type(name: str):
    """The NumPy dtype of a dataset type name (``string``: Python str values)."""
    return np.dtype(np.str_) if name == "string" else np.dtype(name)


class Column:
    """One column of a schema: its name, type name and shape (None when not given) or rank."""

    __slots__ = ("name", "type", "shape", "rank")

    def __init__(self, name: str, type_: str, shape=None, rank=None):
        self.name, self.type, self.shape = name, type_, None if shape is None else [int(d) for d in shape]
        self.rank = len(self.shape) if self.shape is not None else rank

    def to_dict(self) -> dict:
        out = {"name": self.name, "type": self.type}
        if self.rank is not None:
            out["rank"] = self.rank
        if self.shape is not None:
            out["shape"] = list(self.shape)
        return out


def _check_shape(where: str, name: str, shape):
    if shape is None:
        return None
    ok = isinstance(shape, (list, tuple)) and all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and (d > 0 or d == -1) for d in shape
    )
    if not ok or sum(1 for d in shape if d == -1) > 1:
        raise ValueError(
            f"For '{where}', the shape of column '{name}' must be a list of ints > 0 with at most one -1, "
            f"but got {shape!r}."
        )
    return list(shape)


class Schema:
    """MindSpore's ``Schema(schema_file=None)``: the columns of a dataset. ``add_column(name, de_type,
    shape=None)`` adds one; ``parse_columns(columns)`` adds those of a dict {name: {"type", "shape"}} or a
    list of {"name", "type", "shape"}; ``from_json(json_obj)`` reads a parsed schema file (``columns``,
    ``numRows``, ``datasetType``); ``to_json()`` writes one. A failed load or parse is a RuntimeError, an
    unknown column type a ValueError (as MindSpore)."""

    def __init__(self, schema_file=None):
        self.columns = []
        self.num_rows = 0
        self.dataset_type = ""
        self.schema_file = "" if schema_file is None else schema_file
        if schema_file is not None:
            if not isinstance(schema_file, (str, os.PathLike)):
                raise TypeError(
                    f"For 'Schema', the 'schema_file' must be a str or None, but got {type(schema_file).__name__}."
                )
            path = os.fspath(schema_file)
            try:
                with open(path, encoding="utf-8") as f:
                    obj = json.load(f)
            except (OSError, ValueError) as e:
                raise RuntimeError(f"For 'Schema', the schema file '{path}' cannot be loaded: {e}") from e
            self.from_json(obj)

    def add_column(self, name, de_type, shape=None):
        """Add the column ``name`` of type ``de_type`` (a name such as "int64" or an opforge dtype) and
        ``shape`` (a list of ints; None: any shape)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"For 'add_column', the 'name' must be a non-empty str, but got {name!r}.")
        self.columns.append(Column(name, type_name("add_column", de_type), _check_shape("add_column", name, shape)))

    def parse_columns(self, columns):
        """Add the columns of ``columns``: a dict {name: {"type": ..., "shape": ...}} or a list (or tuple) of
        {"name": ..., "type": ..., "shape": ...}; "rank" may stand for an unknown shape of that rank."""
        if isinstance(columns, dict):
            items = []
            for name, spec in columns.items():
                if not isinstance(spec, dict):
                    raise RuntimeError(f"For 'parse_columns', the column '{name}' must be a dict, but got {spec!r}.")
                items.append({"name": name, **spec})
        elif isinstance(columns, (list, tuple)):
            items = list(columns)
        else:
            raise RuntimeError(
                "For 'parse_columns', the 'columns' must be a dict or a list of dicts, but got "
                f"{type(columns).__name__}."
            )
        for spec in items:
            if not isinstance(spec, dict) or "name" not in spec:
                raise RuntimeError(f"For 'parse_columns', a column has no 'name': {spec!r}.")
            if "type" not in spec:
                raise RuntimeError(f"For 'parse_columns', the column '{spec['name']}' has no 'type'.")
            unknown = set(spec) - {"name", "type", "shape", "rank", "t_impl"}
            if unknown:
                raise RuntimeError(
                    f"For 'parse_columns', the column '{spec['name']}' has unknown fields {sorted(unknown)}."
                )
            try:
                de_type = type_name("parse_columns", spec["type"])
                shape = _check_shape("parse_columns", spec["name"], spec.get("shape"))
            except (TypeError, ValueError) as e:
                raise RuntimeError(str(e)) from e
            rank = spec.get("rank")
            if shape is not None and rank is not None and rank != len(shape):
                raise RuntimeError(
                    f"For 'parse_columns', the column '{spec['name']}' has rank {rank} but shape {shape}."
                )
            self.columns.append(Column(spec["name"], de_type, shape, rank))

    def from_json(self, json_obj):
        """Read a parsed schema file: ``columns`` (required), ``numRows`` and ``datasetType``."""
        if not isinstance(json_obj, dict):
            raise RuntimeError(f"For 'from_json', the 'json_obj' must be a dict, but got {type(json_obj).__name__}.")
        for key in json_obj:
            if key not in ("columns", "numRows", "datasetType"):
                raise RuntimeError(f"For 'from_json', unknown field '{key}' (expected columns, numRows, datasetType).")
        if not json_obj.get("columns"):
            raise RuntimeError("For 'from_json', the columns are missing.")
        num_rows = json_obj.get("numRows", 0)
        if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 0:
            raise RuntimeError(f"For 'from_json', the 'numRows' must be an int >= 0, but got {num_rows!r}.")
        self.parse_columns(json_obj["columns"])
        self.num_rows = num_rows
        self.dataset_type = str(json_obj.get("datasetType", ""))

    def to_json(self) -> str:
        """The schema as a JSON string (the schema file's form)."""
        out = {"columns": [c.to_dict() for c in self.columns]}
        if self.dataset_type:
            out["datasetType"] = self.dataset_type
        if self.num_rows > 0:
            out["numRows"] = self.num_rows
        return json.dumps(out, indent=2, sort_keys=True)

    def __str__(self) -> str:
        return self.to_json()

    def column_names(self) -> list:
        return [c.name for c in self.columns]


def load_schema(where: str, schema):
    """A ``Schema`` from a reader's ``schema`` argument: a Schema, a JSON file's path, or None."""
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, (str, os.PathLike)):
        return Schema(schema)
    raise TypeError(f"For '{where}', the 'schema' must be a Schema, a JSON file path or None, but got {schema!r}.")
