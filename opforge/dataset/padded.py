"""MindSpore's ``mindspore.dataset.PaddedDataset``: rows given as a list of dicts, to pad a dataset (``+``) so
that its rows divide evenly among the shards of a ``DistributedSampler`` (the model zoo's BERT
``create_eval_dataset``: ``(data_set + PaddedDataset(samples)).use_sampler(DistributedSampler(...,
shuffle=False))``)."""

from __future__ import annotations

import numpy as np

from opforge.dataset.engine import GeneratorDataset

__all__ = ["PaddedDataset"]


class _Samples:
    """The samples as a random-access source: row ``i`` is sample ``i``'s values, one per column."""

    def __init__(self, samples: list, columns: list):
        self.samples, self.columns = samples, columns

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> tuple:
        return tuple(np.asarray(self.samples[i][c]) for c in self.columns)


class PaddedDataset(GeneratorDataset):
    """MindSpore's ``PaddedDataset(padded_samples)``: one row per dict of ``padded_samples`` (a non-empty list
    of dicts with the same keys), one column per key in the first dict's key order, each value as a NumPy
    array (any dtype); read in order (not shuffled), and random access, so a sampler can pick its rows."""

    where = "PaddedDataset"

    def __init__(self, padded_samples):
        if not isinstance(padded_samples, list):
            raise TypeError(
                f"For 'PaddedDataset', the 'padded_samples' must be a list of dicts, but got "
                f"{type(padded_samples).__name__}."
            )
        if not padded_samples:
            raise ValueError("For 'PaddedDataset', the 'padded_samples' must not be empty.")
        for k, sample in enumerate(padded_samples):
            if not isinstance(sample, dict):
                raise TypeError(
                    f"For 'PaddedDataset', every padded sample must be a dict, but padded_samples[{k}] is "
                    f"{type(sample).__name__}."
                )
        columns = list(padded_samples[0])
        for k, sample in enumerate(padded_samples):
            if set(sample) != set(columns):
                raise ValueError(
                    f"For 'PaddedDataset', every padded sample must have the keys {columns}, but "
                    f"padded_samples[{k}] has {list(sample)}."
                )
        self.padded_samples = padded_samples
        super().__init__(_Samples(padded_samples, columns), column_names=columns, shuffle=False)
