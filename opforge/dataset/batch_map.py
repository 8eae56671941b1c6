"""``Dataset.batch`` with MindSpore's keyword arguments ``per_batch_map``, ``input_columns`` and
``output_columns``, and a callable ``batch_size``: a batch's rows are gathered, ``per_batch_map`` receives one
list of NumPy arrays per input column and a ``BatchInfo``, and returns a tuple of columns (lists of arrays, or
arrays whose first dim is the batch), which are then stacked. The model zoo's EfficientNet augments its
images this way (``RandAugment``). The dataset operation itself is ``engine._MapBatch``; this module holds
the rules it applies."""

from __future__ import annotations

import inspect

import numpy as np

__all__ = ["BatchInfo", "column_names", "check_signature", "batch_size_at", "call_per_batch_map"]


class BatchInfo:
    """What ``per_batch_map`` and a callable ``batch_size`` get as their last argument: ``get_batch_num()``
    is the batch's index in the current epoch and ``get_epoch_num()`` the epoch's, both from 0."""

    def __init__(self, batch_num: int, epoch_num: int):
        self._batch_num, self._epoch_num = int(batch_num), int(epoch_num)

    def get_batch_num(self) -> int:
        return self._batch_num

    def get_epoch_num(self) -> int:
        return self._epoch_num


def column_names(where: str, value, what: str) -> list:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"For '{where}', '{what}' must be a str or a non-empty list of str, but got {value!r}.")
    return list(names)


def check_signature(fn, count: int) -> None:
    """MindSpore's check: ``per_batch_map`` takes one argument per input column, then the BatchInfo."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: not checked
        return
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return
    if len(params) != count + 1:
        raise ValueError(
            f"For 'batch', the signature of per_batch_map should match with input columns: it takes "
            f"{len(params)} argument(s), but the {count} input column(s) and the BatchInfo are {count + 1}."
        )


def batch_size_at(batch_size, batch_num: int, epoch: int) -> int:
    """The size of batch ``batch_num`` of ``epoch``: ``batch_size``, or what a callable one returns."""
    if not callable(batch_size):
        return batch_size
    size = batch_size(BatchInfo(batch_num, epoch))
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"For 'batch', the callable 'batch_size' must return an int >= 1, but returned {size!r}.")
    return int(size)


def call_per_batch_map(fn, columns: dict, inputs: list, outputs: list, info: BatchInfo) -> list:
    """``fn``'s output columns (lists of rows) for the batch's ``columns`` {name: list of rows}, checked."""
    try:
        out = fn(*[columns[c] for c in inputs], info)
    except Exception as e:
        name = getattr(fn, "__name__", type(fn).__name__)
        raise RuntimeError(
            f"For 'batch', the per_batch_map {name} raised {type(e).__name__} on the columns {inputs}: {e}"
        ) from e
    if not isinstance(out, tuple):
        raise RuntimeError(
            f"For 'batch', per_batch_map should return a tuple of columns (lists of numpy arrays, or numpy "
            f"arrays), but returned {type(out).__name__}."
        )
    if len(out) != len(outputs):
        raise RuntimeError(
            f"For 'batch', per_batch_map returned {len(out)} column(s), but the output columns are "
            f"{outputs} (give 'output_columns' when their number differs from the input columns')."
        )
    outs = []
    for name, value in zip(outputs, out):
        if not isinstance(value, (list, tuple, np.ndarray)) or isinstance(value, np.ndarray) and value.ndim == 0:
            raise RuntimeError(
                f"For 'batch', per_batch_map's output column '{name}' must be a list of numpy arrays or a "
                f"numpy array, but is {type(value).__name__}."
            )
        outs.append(list(value))  # an array: its rows, as MindSpore reads it
    if len({len(v) for v in outs}) > 1:
        raise RuntimeError(
            f"For 'batch', per_batch_map's output columns {outputs} have different numbers of rows "
            f"{[len(v) for v in outs]}."
        )
    return outs
