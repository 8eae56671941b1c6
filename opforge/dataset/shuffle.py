"""MindSpore's ``mindspore.dataset.Shuffle`` levels and the row order of the readers of several files
(``TFRecordDataset``, ``MindDataset``): which rows an epoch reads, in which order, on which shard.

- ``Shuffle.GLOBAL`` (and ``shuffle=True``): every row in a new random order each epoch.
- ``Shuffle.FILES``: the files in a new random order, the rows of each file in their order.
- ``Shuffle.INFILE``: the files in their order, the rows of each file in a new random order.
- ``False``: the files and rows in order.

The orders come from ``ds.config.set_seed``'s seed (epoch e of a run is the same in every run), or from
MindSpore's default seed 5489 when the dataset is sharded, so that every rank draws the same order. A
sharded reader takes every ``num_shards``-th row of that order from ``shard_id`` (the shards wrapped
around to one size, as the other readers), or, reading by files, every ``num_shards``-th file of the
epoch's file order; ``num_samples`` caps each shard.
"""

from __future__ import annotations

import numpy as np

from opforge.dataset import config
from opforge.dataset.engine import _check_positive, _epoch_rng, _Source
from opforge.dataset.shuffle_level import Shuffle

__all__ = ["Shuffle"]


def shuffle_mode(where: str, shuffle, default, allowed=(Shuffle.GLOBAL, Shuffle.FILES, Shuffle.INFILE)):
    """The reader's shuffle level from its ``shuffle`` argument (a bool, a ``Shuffle`` or None: ``default``);
    None for no shuffling."""
    if shuffle is None:
        shuffle = default
    if isinstance(shuffle, (bool, np.bool_)):
        return Shuffle.GLOBAL if shuffle else None
    if isinstance(shuffle, Shuffle):
        if shuffle not in allowed:
            names = ", ".join(f"Shuffle.{s.name}" for s in allowed)
            raise ValueError(f"For '{where}', the 'shuffle' must be a bool or one of {names}, but got {shuffle}.")
        return shuffle
    raise TypeError(
        f"For '{where}', the 'shuffle' must be a bool or a Shuffle level (Shuffle.GLOBAL, Shuffle.FILES, "
        f"Shuffle.INFILE), but got {shuffle!r}."
    )


class FileRows(_Source):
    """A random-access source over the rows of several files (``file_lengths`` rows each, end to end),
    ordered per epoch by a shuffle level, sharded by rows (or by files with ``by_files``), with
    ``num_padded`` extra rows (indices from the files' total on) after the files' rows."""

    def __init__(self, columns, file_lengths, mode, num_samples, num_parallel_workers, num_shards, shard_id,
                 by_files=False, num_padded=0):  # fmt: skip
        if num_samples is not None:
            _check_positive(self.where, "num_samples", num_samples)
        self._starts = np.cumsum([0] + [int(n) for n in file_lengths])
        self._mode, self._by_files, self._num_padded = mode, by_files, num_padded
        workers = config.get_num_parallel_workers() if num_parallel_workers is None else num_parallel_workers
        total = int(self._starts[-1]) + num_padded
        super().__init__(columns, total, mode is not None, num_samples, num_shards, shard_id, workers, False)

    def _indices(self, epoch: int) -> np.ndarray:
        if self._sampler is not None:  # a sampler's rows (opforge/dataset/samplers.py)
            return super()._indices(epoch)
        num_shards, shard_id = self._shards
        mode, starts = self._mode, self._starts
        rng = _epoch_rng(epoch, shared=num_shards is not None) if mode is not None else None
        files = np.arange(len(starts) - 1)
        if mode in (Shuffle.GLOBAL, Shuffle.FILES):
            files = rng.permutation(files)
        if self._by_files and num_shards is not None:
            files = files[shard_id::num_shards]
        parts = [np.arange(starts[f], starts[f + 1]) for f in files]
        if mode is Shuffle.INFILE:
            parts = [rng.permutation(p) for p in parts]
        idx = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        if mode is Shuffle.GLOBAL:
            idx = rng.permutation(idx)
        if self._num_padded:
            idx = np.concatenate([idx, np.arange(starts[-1], starts[-1] + self._num_padded)])
        if num_shards is not None and not self._by_files:
            per = -(-len(idx) // num_shards)
            idx = np.resize(idx, per * num_shards)[shard_id::num_shards]
        if self._num_samples is not None:
            idx = idx[: self._num_samples]
        return idx

    def locate(self, i: int) -> tuple:
        """(file number, row within the file) of row ``i``."""
        f = int(np.searchsorted(self._starts, i, side="right")) - 1
        return f, i - int(self._starts[f])
