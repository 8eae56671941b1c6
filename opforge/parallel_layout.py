"""MindSpore's ``Layout`` (``mindspore.Layout``, ``mindspore.parallel.Layout``): a strategy written with named
axes. ``Layout((2, 4), ("dp", "mp"))`` names the axes of a device matrix; calling it with one name per tensor
dim (``layout("dp", "None")``; a tuple of names splits a dim over several axes) describes one tensor's
layout, which ``Primitive.shard``, ``Cell.shard`` and ``shard(fn)`` take in place of a tuple of split counts.

opforge's sharding rules take split counts and arrange the device matrix themselves, so a Layout is read as
the split count of each dim (the product of its axes' sizes): the values computed are the same, and the
rules place the blocks on the ranks as they would for that tuple. A top-level module, not in the parallel
package, so that the primitives can read it."""

from __future__ import annotations

import math

__all__ = ["Layout", "checked_split_counts", "split_counts"]

_NONE = "None"
_INTERLEAVED = "interleaved_parallel"  # MindSpore's alias of an axis that copies an operator within one device


class Layout:
    """``Layout(device_matrix, alias_name, rank_list=None)``: the device matrix's size per axis and a name per
    axis (unique, not "None"); ``layout(*names)`` the layout of one tensor, a name (or "None", or a tuple of
    names) per dim. ``rank_list`` (MindSpore's ranks the matrix maps to) is checked and kept."""

    def __init__(self, device_matrix, alias_name, rank_list=None):
        if not isinstance(device_matrix, tuple) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in device_matrix
        ):
            raise TypeError(
                f"For 'Layout', the 'device_matrix' must be a tuple of ints >= 1, but got {device_matrix!r}."
            )
        if not isinstance(alias_name, tuple) or not all(isinstance(a, str) for a in alias_name):
            raise TypeError(f"For 'Layout', the 'alias_name' must be a tuple of str, but got {alias_name!r}.")
        if len(alias_name) != len(device_matrix):
            raise ValueError(
                f"For 'Layout', the 'alias_name' must name each of the {len(device_matrix)} axes of the "
                f"'device_matrix', but got {len(alias_name)} names."
            )
        if _NONE in alias_name or "" in alias_name or len(set(alias_name)) != len(alias_name):
            raise ValueError(
                f"For 'Layout', the 'alias_name' must be unique, non-empty and not 'None', but got {alias_name}."
            )
        if rank_list is not None and (
            not isinstance(rank_list, (tuple, list)) or len(rank_list) != math.prod(device_matrix)
        ):
            raise ValueError(
                f"For 'Layout', the 'rank_list' must list the {math.prod(device_matrix)} ranks of the device "
                f"matrix, but got {rank_list!r}."
            )
        self._device_matrix, self._alias_name = device_matrix, alias_name
        self._rank_list = None if rank_list is None else tuple(rank_list)
        self._tensor_map = None

    def __call__(self, *tensor_map) -> Layout:
        used = []
        for entry in tensor_map:
            names = entry if isinstance(entry, tuple) else (entry,)
            for name in names:
                if name != _NONE and name not in self._alias_name:
                    raise ValueError(
                        f"For 'Layout', each dim's name must be one of {self._alias_name} or 'None', but got {name!r}."
                    )
                if name != _NONE and name in used:
                    raise ValueError(f"For 'Layout', the axis '{name}' splits more than one dim: {tensor_map}.")
                used.append(name)
        layout = Layout(self._device_matrix, self._alias_name, self._rank_list)
        layout._tensor_map = tuple(tensor_map)
        return layout

    def _axis(self, name: str) -> int:
        """MindSpore's tensor-map number of an axis: counted from the right (the last axis is 0), -1 for None."""
        return -1 if name == _NONE else len(self._alias_name) - 1 - self._alias_name.index(name)

    def to_dict(self) -> dict:
        """The layout as MindSpore writes it: device_matrix, tensor_map (per dim an axis number counted from the
        right, -1 for none, a tuple for several), interleaved_parallel, alias_name."""
        if self._tensor_map is None:
            raise ValueError("For 'Layout', the tensor map is not set: call the layout with a name per dim first.")
        tensor_map = tuple(
            tuple(self._axis(n) for n in e) if isinstance(e, tuple) else self._axis(e) for e in self._tensor_map
        )
        return {
            "device_matrix": self._device_matrix,
            "tensor_map": tensor_map,
            "interleaved_parallel": _INTERLEAVED in self._alias_name,
            "alias_name": self._alias_name,
        }

    def split_counts(self) -> tuple:
        """The split count of each dim: the product of the sizes of the axes that split it (the
        "interleaved_parallel" axis, copies of an operator on one device, splits nothing across them)."""
        if self._tensor_map is None:
            raise ValueError("For 'Layout', the tensor map is not set: call the layout with a name per dim first.")
        size = dict(zip(self._alias_name, self._device_matrix))
        size.pop(_INTERLEAVED, None)
        return tuple(math.prod(size.get(n, 1) for n in (e if isinstance(e, tuple) else (e,))) for e in self._tensor_map)

    def __repr__(self) -> str:
        names = "" if self._tensor_map is None else f", tensor_map={self._tensor_map}"
        return f"Layout(device_matrix={self._device_matrix}, alias_name={self._alias_name}{names})"


def split_counts(strategy):
    """A strategy element as split counts: a Layout read so (``Layout.split_counts``), anything else as given."""
    return strategy.split_counts() if isinstance(strategy, Layout) else strategy


def checked_split_counts(strategy, subject: str) -> tuple:
    """``strategy`` (a tuple of split counts, one per dim, or a Layout) as split counts, or a TypeError (not a tuple
    of ints) or ValueError (a count below 1) whose message starts with ``subject`` (who gave it, and what)."""
    counts = split_counts(strategy)
    if not isinstance(counts, tuple) or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        raise TypeError(f"{subject} must be a tuple of ints (a split count per dim) or a Layout, but got {counts!r}.")
    if any(c < 1 for c in counts):
        raise ValueError(f"{subject} must hold split counts >= 1, but got {counts}.")
    return counts
