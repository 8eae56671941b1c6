"""The generator the random vision transforms draw from (RandomCrop, RandomHorizontalFlip,
RandomColorAdjust, ...): fresh entropy, or one stream per dataset seed (``ds.config.set_seed``), restarted by
each ``set_seed`` call. A map run by several workers draws each row's seed from that stream in row order and
runs the row's transforms on a generator of its own (``RowSeeded``), so that a seeded pipeline gives the same
rows whichever worker takes which row."""

from __future__ import annotations

import threading

import numpy as np

from opforge.dataset import config

__all__ = ["transform_rng", "RowSeeded", "row_seeds"]

_seeded: dict = {}
_row = threading.local()  # the generator of the row a worker is transforming


def transform_rng() -> np.random.Generator:
    own = getattr(_row, "rng", None)
    if own is not None:
        return own
    seed = config.get_seed()
    if seed is None:
        return np.random.default_rng()
    key = (seed, config.seed_sets())
    if _seeded.get("key") != key:
        _seeded.update(key=key, rng=np.random.default_rng(seed))
    return _seeded["rng"]


def row_seeds(rows):
    """``(seed, row)`` for each row, the seeds drawn in row order from the seeded stream (None without a
    dataset seed: the workers' transforms then draw fresh entropy)."""
    for row in rows:
        yield (None if config.get_seed() is None else int(transform_rng().integers(0, 2**63 - 1))), row


class RowSeeded:
    """``fn`` run on a ``(seed, row)`` pair with the row's transforms drawing from ``default_rng(seed)``
    (picklable with ``fn``, for worker processes)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, item):
        seed, row = item
        _row.rng = None if seed is None else np.random.default_rng(seed)
        try:
            return self.fn(row)
        finally:
            _row.rng = None
