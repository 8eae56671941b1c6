"""``GeneratorDataset(source, ..., sampler=...)`` with a sampler that is an iterable of row indices (MindSpore
wraps such an object in ``IterSampler``): each epoch iterates it afresh and reads those rows of the source, in
its order (the model zoo's DeepSpeech2 passes its own ``DistributedSampler`` class). MindSpore's built-in
sampler classes are not here."""

from __future__ import annotations

import numpy as np

__all__ = ["check_sampler", "sampled_indices"]


def check_sampler(where: str, sampler, random_access: bool, shuffle, num_shards) -> None:
    """MindSpore's argument rules for ``sampler``: an iterable, a random-access source, no shuffle or shards."""
    if not hasattr(sampler, "__iter__"):
        raise TypeError(
            f"For '{where}', the 'sampler' must be an iterable of row indices, but got {type(sampler).__name__}."
        )
    if not random_access:
        raise ValueError(f"For '{where}', 'sampler' needs a random-access source (__getitem__ and __len__).")
    if shuffle is not None:
        raise ValueError(f"For '{where}', 'sampler' and 'shuffle' cannot be specified at the same time.")
    if num_shards is not None:
        raise ValueError(f"For '{where}', 'sampler' and sharding cannot be specified at the same time.")


def sampled_indices(where: str, sampler, length: int) -> np.ndarray:
    """One epoch of the sampler's indices, each checked to be a row of the source."""
    idx = np.array([int(i) for i in sampler], dtype=np.int64)
    bad = idx[(idx < 0) | (idx >= length)]
    if bad.size:
        raise ValueError(f"For '{where}', the sampler gave the index {int(bad[0])}, but the source has {length} rows.")
    return idx
