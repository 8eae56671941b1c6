"""The padding of ``Dataset.padded_batch(batch_size, drop_remainder=False, num_parallel_workers=None,
pad_info=None)`` (MindSpore 2.x) and of MindSpore 1.x's ``batch(..., pad_info=...)``: before a batch's rows are
stacked (after ``per_batch_map``, as MindSpore's batch runs them), the columns that ``pad_info`` names are padded
at the end of each dim to one shape.

``pad_info`` maps a column name to ``(pad_shape, pad_value)`` or to None:

- ``pad_shape`` None: the largest size of each dim in the batch; a list of one size per dim of the column,
  each an int > 0 or None (that dim's largest size in the batch). A row larger than ``pad_shape`` in a dim
  is cut to it (MindSpore copies the overlap of the row and the padded shape).
- ``pad_value`` None: 0 (an empty string for a string column); a number (cast to float32 and then to the
  column's dtype, as MindSpore fills) or, for a string column, a str.
- ``pad_info={}`` pads every column to its largest shape in the batch with 0.

The rows of a padded column must have one rank (a rank-0 value is kept as it is). The dataset operations
themselves are ``engine._Batch`` and ``engine._MapBatch``; this module holds the rules they apply."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_pad_info", "check_pad_columns", "pad_rows"]


def _type_name(value) -> str:
    return type(value).__name__


def check_pad_info(where: str, pad_info):
    """``pad_info`` checked as MindSpore checks it (TypeError for a wrong type, ValueError for a wrong size or a
    dim <= 0): None, or a dict {column name: None or (pad_shape, pad_value)}; returned as a dict
    {name: (list of dims or None, value or None)}."""
    if pad_info is None:
        return None
    if not isinstance(pad_info, dict):
        raise TypeError(f"For '{where}', the 'pad_info' must be a dict or None, but got {_type_name(pad_info)}.")
    checked = {}
    for name, value in pad_info.items():
        if not isinstance(name, str):
            raise TypeError(f"For '{where}', every key in 'pad_info' must be a column name (str), but got {name!r}.")
        if value is None:
            checked[name] = (None, None)
            continue
        if not isinstance(value, tuple):
            raise TypeError(
                f"For '{where}', the value of pad_info['{name}'] must be a tuple (pad_shape, pad_value) or None, "
                f"but got {_type_name(value)}."
            )
        if len(value) != 2:
            raise ValueError(
                f"For '{where}', the value of pad_info['{name}'] must be a tuple of size 2 (pad_shape, pad_value), "
                f"but got {len(value)} items."
            )
        shape, fill = value
        if shape is not None:
            if not isinstance(shape, list):
                raise TypeError(
                    f"For '{where}', the pad_shape of pad_info['{name}'] must be a list or None, but got "
                    f"{_type_name(shape)}."
                )
            for dim in shape:
                if dim is None:
                    continue
                if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)):
                    raise TypeError(
                        f"For '{where}', every dim of pad_info['{name}']'s pad_shape must be an int or None, but "
                        f"got {dim!r}."
                    )
                if dim <= 0:
                    raise ValueError(
                        f"For '{where}', every dim of pad_info['{name}']'s pad_shape must be > 0 (or None), but got "
                        f"{dim}."
                    )
            shape = [None if d is None else int(d) for d in shape]
        if fill is not None and (
            isinstance(fill, (bool, np.bool_)) or not isinstance(fill, (numbers.Real, str, bytes))
        ):
            raise TypeError(
                f"For '{where}', the pad_value of pad_info['{name}'] must be an int, a float, a str or None, but "
                f"got {_type_name(fill)}."
            )
        checked[name] = (shape, fill)
    return checked


def check_pad_columns(where: str, pad_info, columns: list) -> None:
    """Every column ``pad_info`` names must be one of the batch's ``columns`` (MindSpore: RuntimeError)."""
    if not pad_info:
        return
    for name in pad_info:
        if name not in columns:
            raise RuntimeError(f"For '{where}', the pad_info column '{name}' is not one of the columns {columns}.")


def _is_text(array: np.ndarray) -> bool:
    return array.dtype.kind in "USO"


def _fill_array(where: str, name: str, values: list, fill) -> np.ndarray:
    """The padding value as a 0-d array of the column's dtype (strings: one width that holds every row's and
    the padding's)."""
    first = values[0]
    if _is_text(first):
        if fill is None:
            fill = b"" if first.dtype.kind == "S" else ""
        elif isinstance(fill, numbers.Real):
            raise RuntimeError(
                f"For '{where}', the column '{name}' holds strings, but its pad_value {fill!r} is a number: the "
                "column and its pad_value must be of the same type."
            )
        if first.dtype.kind == "U" and isinstance(fill, bytes):
            fill = fill.decode()
        elif first.dtype.kind == "S" and isinstance(fill, str):
            fill = fill.encode()
        value = np.asarray(fill)
        if first.dtype.kind == "O":
            return value.astype(object)
        return value.astype(np.result_type(value.dtype, *(v.dtype for v in values)))
    if isinstance(fill, (str, bytes)):
        raise RuntimeError(
            f"For '{where}', the column '{name}' is numeric ({first.dtype}), but its pad_value {fill!r} is a string: "
            "the column and its pad_value must be of the same type."
        )
    value = np.float32(0 if fill is None else fill)  # MindSpore fills through a float32
    with np.errstate(invalid="ignore", over="ignore"):
        return value.astype(first.dtype)


def _pad_column(where: str, name: str, values: list, pad_shape) -> list:
    shape, fill = pad_shape
    first = values[0]
    rank = first.ndim
    for k, v in enumerate(values):
        if v.ndim != rank:
            raise RuntimeError(
                f"For '{where}', the rows of the padded column '{name}' must have one rank, but row 0 has shape "
                f"{first.shape} and row {k} {v.shape}."
            )
    largest = [max(v.shape[d] for v in values) for d in range(rank)]
    if shape is None:
        target = largest
    else:
        if len(shape) != rank:
            raise RuntimeError(
                f"For '{where}', the pad_shape {shape} of column '{name}' must have one dim per dim of the column "
                f"(rank {rank}, shape {first.shape})."
            )
        target = [largest[d] if s is None else s for d, s in enumerate(shape)]
    target = tuple(target)
    if rank == 0:
        return values
    value = _fill_array(where, name, values, fill)
    out = []
    for v in values:
        if v.shape == target:
            out.append(v if v.dtype == value.dtype or not _is_text(v) else v.astype(value.dtype))
            continue
        padded = np.full(target, value, dtype=value.dtype)
        overlap = tuple(slice(0, min(a, b)) for a, b in zip(v.shape, target))
        padded[overlap] = v[overlap]
        out.append(padded)
    return out


def pad_rows(where: str, columns: list, rows: list, pad_info) -> list:
    """``rows`` (tuples, one value per column of ``columns``) with the columns ``pad_info`` names padded (every
    column when it is empty); ``pad_info`` as ``check_pad_info`` returns it, None for no padding."""
    if pad_info is None or not rows:
        return rows
    names = columns if not pad_info else [c for c in columns if c in pad_info]
    table = [list(row) for row in rows]
    for name in names:
        k = columns.index(name)
        values = [np.asarray(row[k]) for row in table]
        for row, v in zip(table, _pad_column(where, name, values, pad_info.get(name, (None, None)))):
            row[k] = v
    return [tuple(row) for row in table]
