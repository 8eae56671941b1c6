"""MindSpore's ``Dataset.save(file_name, num_files=1, file_type='mindrecord')``: one epoch of a dataset's rows
written as MindRecord files with ``opforge.mindrecord.FileWriter`` (read them back with ``MindDataset``).

The schema comes from the first row, as MindSpore infers it: a column's name with its ASCII punctuation
replaced by ``_``; its type by the value's dtype (MindSpore's table):

=================================  =========
dataset dtype                      MindRecord
=================================  =========
bool, int8, uint8, int16, uint16,  int32
int32
uint32, int64, uint64              int64 (uint64 wraps above 2**63 - 1)
float16, float32                   float32
float64                            float64
str                                string
bytes                              bytes
=================================  =========

A 0-d value is a scalar field (and an index field, but bytes); an array an array field of shape ``[-1, ...]``:
its first dim may change from row to row, the others may not ("Tensor with dynamic shape do not currently
support saving..."). A string or bytes column must be 0-d. ``num_files`` > 1 splits the rows among
``file_name`` + the file number (``FileWriter``'s names: zero-padded to the width of ``num_files - 1``, where
MindSpore does not pad). Existing files are a RuntimeError."""

from __future__ import annotations

import os
import string

import numpy as np

from opforge.mindrecord.filewriter import FileWriter

__all__ = ["save_dataset"]

_TYPES = {
    "bool": "int32", "int8": "int32", "uint8": "int32", "int16": "int32", "uint16": "int32", "int32": "int32",
    "uint32": "int64", "int64": "int64", "uint64": "int64", "float16": "float32", "float32": "float32",
    "float64": "float64",
}  # fmt: skip
_CHUNK = 256  # rows handed to the writer at a time


def _check(file_name, num_files, file_type) -> None:
    if isinstance(num_files, bool) or not isinstance(num_files, int):
        raise TypeError(f"Argument num_files with value {num_files!r} is not of type [<class 'int'>].")
    if num_files <= 0 or num_files > 1000:
        raise ValueError("num_files should between 1 and 1000.")
    for name, value in (("file_name", file_name), ("file_type", file_type)):
        if not isinstance(value, str):
            raise TypeError(f"Argument {name} with value {value!r} is not of type [<class 'str'>].")
    if file_type != "mindrecord":
        raise ValueError(f"{file_type} dataset format is not supported.")
    if not file_name:
        raise RuntimeError("SaveToDisk failed, dataset_path must not be empty")
    if os.path.isdir(file_name):
        raise RuntimeError("SaveToDisk failed, dataset_path must not be a directory")
    parent = os.path.dirname(os.path.abspath(file_name))
    if not os.path.isdir(parent):
        raise RuntimeError(f"SaveToDisk failed, can not get real dataset path: {parent}")


def _field_name(column: str) -> str:
    return "".join("_" if c in string.punctuation else c for c in column)


def _kind(value: np.ndarray) -> str:
    """The MindRecord type of a value."""
    if value.dtype.kind == "U":
        return "string"
    if value.dtype.kind == "S":
        return "bytes"
    kind = _TYPES.get(value.dtype.name)
    if kind is None:
        raise RuntimeError(f"Invalid type, unsupported data type: {value.dtype.name}")
    return kind


def _schema(names: list, row: tuple) -> dict:
    schema = {}
    for name, value in zip(names, row):
        kind = _kind(value)
        if value.ndim == 0:
            schema[name] = {"type": kind}
        elif kind == "string":
            raise RuntimeError("Invalid data, mindrecord can not support multi-dimensional string tensor.")
        elif kind == "bytes":
            raise RuntimeError("Invalid data, mindrecord can not support multi-dimensional bytes tensor.")
        else:
            schema[name] = {"type": kind, "shape": [-1, *value.shape[1:]]}
    return schema


def _field_value(spec: dict, value: np.ndarray, column: str):
    kind = spec["type"]
    if "shape" not in spec:
        if value.ndim != 0:
            raise RuntimeError(
                f"For 'save', the column '{column}' is a scalar in the first row but has the shape {value.shape} in "
                "another: a column keeps its rank."
            )
        if kind == "string":
            return str(value)
        if kind == "bytes":
            return bytes(value[()])
        return value.astype(kind)[()]
    if value.ndim == 0 or _kind(value) in ("string", "bytes"):
        raise RuntimeError(
            f"For 'save', the column '{column}' is a {kind} array in the first row but a {value.dtype} of shape "
            f"{value.shape} in another."
        )
    if list(value.shape[1:]) != spec["shape"][1:]:
        raise RuntimeError(
            "Tensor with dynamic shape do not currently support saving. Except for the shape of dimension 0, the "
            "other dimension shapes must be fixed. You can reshape the Tensor to a fixed shape before saving."
        )
    return np.ascontiguousarray(value.astype(kind))


def save_dataset(dataset, file_name, num_files=1, file_type="mindrecord") -> None:
    """Write one epoch of ``dataset`` to MindRecord (the module's docstring)."""
    _check(file_name, num_files, file_type)
    columns = dataset.get_col_names()
    names = [_field_name(c) for c in columns]
    if len(set(names)) != len(names):
        raise RuntimeError(f"For 'save', the column names {columns} give the same MindRecord field names {names}.")
    writer, schema, chunk = None, None, []
    for row in dataset.create_tuple_iterator(num_epochs=1, output_numpy=True):
        row = tuple(np.asarray(v) for v in row)
        if writer is None:
            schema = _schema(names, row)
            writer = FileWriter(file_name, shard_num=num_files)
            writer.add_schema(schema, "saved by Dataset.save")
            index = [n for n in names if "shape" not in schema[n] and schema[n]["type"] != "bytes"]
            if index:
                writer.add_index(index)
        chunk.append({n: _field_value(schema[n], v, c) for n, c, v in zip(names, columns, row)})
        if len(chunk) == _CHUNK:
            writer.write_raw_data(chunk)
            chunk = []
    if writer is None:
        raise RuntimeError(f"For 'save', the dataset (columns {columns}) has no rows to save.")
    if chunk:
        writer.write_raw_data(chunk)
    writer.commit()
