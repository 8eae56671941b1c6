"""MindSpore's ``mindspore.common.seed`` (``mindspore.common.seed.set_seed(1)``): the global seed's
``set_seed`` and ``get_seed`` (opforge/seed.py)."""

from opforge.seed import get_seed, set_seed

__all__ = ["set_seed", "get_seed"]
