"""The sizes of MindSpore's ``Dataset.split(sizes, randomize=True)``: the checks of its arguments and the row
count of each part. The parts themselves are made by ``engine.Dataset.split``.

``sizes`` is a non-empty list of ints > 0 that sum to the dataset's size, or of floats in (0, 1] that sum to 1
(within 1e-5). Part i of floats has ``round(f_i * K)`` rows (Python's ``round``, K the dataset's size); a part
rounded to 0 is an error; when the rounded sizes fall short of K the first part takes the rest, and when they
exceed K the excess comes off the first part that keeps at least one row."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_split", "absolute_sizes"]

_EPSILON = 1e-5  # MindSpore's tolerance on the floats' sum


def _is_int(item) -> bool:
    return isinstance(item, (numbers.Integral, np.integer)) and not isinstance(item, (bool, np.bool_))


def _is_float(item) -> bool:
    return isinstance(item, (float, np.floating))


def check_split(sizes, randomize) -> None:
    """MindSpore's checks of ``split``'s arguments: TypeError for a ``sizes`` that is not a list or a
    ``randomize`` that is not a bool; ValueError for an empty list, a mix of ints and floats (or other items),
    an int <= 0, a float outside (0, 1], floats that do not sum to 1."""
    if not isinstance(sizes, list):
        raise TypeError(f"For 'split', the 'sizes' must be a list of int or of float, but got {type(sizes).__name__}.")
    if not isinstance(randomize, (bool, np.bool_)):
        raise TypeError(f"For 'split', the 'randomize' must be a bool, but got {type(randomize).__name__}.")
    if not sizes:
        raise ValueError("For 'split', the 'sizes' cannot be empty.")
    all_int = all(_is_int(item) for item in sizes)
    all_float = all(_is_float(item) for item in sizes)
    if not (all_int or all_float):
        raise ValueError(f"For 'split', the 'sizes' must be a list of int or a list of float, but got {sizes}.")
    if all_int and any(item <= 0 for item in sizes):
        raise ValueError(f"For 'split', the 'sizes' are ints, so every one must be > 0, but got {sizes}.")
    if all_float:
        if not all(0 < item <= 1 for item in sizes):
            raise ValueError(f"For 'split', the 'sizes' are floats, so every one must be in (0, 1], but got {sizes}.")
        if not abs(sum(sizes) - 1) < _EPSILON:
            raise ValueError(
                f"For 'split', the 'sizes' are floats, so they must sum to 1, but they sum to {sum(sizes)}."
            )


def absolute_sizes(sizes: list, dataset_size) -> list:
    """The row count of each part of a dataset of ``dataset_size`` rows (``sizes`` checked by ``check_split``);
    RuntimeError, as MindSpore's, for an unknown or empty size, ints that do not sum to it, a part of 0 rows."""
    if dataset_size is None or dataset_size <= 0:
        raise RuntimeError(f"For 'split', the dataset's size is unknown or 0 ({dataset_size}): it cannot be split.")
    if all(_is_int(item) for item in sizes):
        total = sum(int(item) for item in sizes)
        if total != dataset_size:
            raise RuntimeError(
                f"For 'split', the 'sizes' {sizes} sum to {total}, but the dataset has {dataset_size} rows."
            )
        return [int(item) for item in sizes]
    counts = []
    for item in sizes:
        count = int(round(float(item) * dataset_size))
        if count == 0:
            raise RuntimeError(
                f"For 'split', the size {item} is too small: it makes a part of 0 of the {dataset_size} rows."
            )
        counts.append(count)
    difference = dataset_size - sum(counts)
    if difference > 0:
        counts[0] += difference
    else:
        for i, count in enumerate(counts):
            if count + difference > 0:
                counts[i] += difference
                break
    if sum(counts) != dataset_size:
        raise RuntimeError(
            f"For 'split', the sizes {counts} computed from {sizes} do not sum to the dataset's {dataset_size} rows."
        )
    return counts
