"""The generator the random vision transforms draw from (RandomCrop, RandomHorizontalFlip,
RandomColorAdjust, ...): fresh entropy, or one stream per dataset seed (``ds.config.set_seed``)."""

from __future__ import annotations

import numpy as np

from opforge.dataset import config

__all__ = ["transform_rng"]

_seeded: dict = {}


def transform_rng() -> np.random.Generator:
    seed = config.get_seed()
    if seed is None:
        return np.random.default_rng()
    if _seeded.get("seed") != seed:
        _seeded.update(seed=seed, rng=np.random.default_rng(seed))
    return _seeded["rng"]
