"""The global seed (MindSpore's ``set_seed`` / ``get_seed``) and the NumPy generator drawn from it by the
weight initializers (opforge/nn/init.py) and for the seeds of Dropout masks and of random operators
created without one. Without ``set_seed`` the generator is seeded from the operating system's entropy.
The default ``Generator`` of the random operators (opforge/generator.py) restarts from each seed given."""

from __future__ import annotations

import numpy as np

__all__ = ["set_seed", "get_seed"]

_state = {"seed": None, "rng": np.random.default_rng(), "sets": 0}


def set_seed(seed: int) -> None:
    """Seed the random initializers, Dropout masks and the random operators."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"For 'set_seed', the 'seed' must be a non-negative int, but got {seed!r}.")
    _state["seed"] = int(seed)
    _state["rng"] = np.random.default_rng(int(seed))
    _state["sets"] += 1


def get_seed():
    """The seed last given to ``set_seed`` (None when never set)."""
    return _state["seed"]


def seed_sets() -> int:
    """How many times ``set_seed`` was called (the default Generator restarts when it changes)."""
    return _state["sets"]


def rng() -> np.random.Generator:
    return _state["rng"]


def derived_seed() -> int:
    """A fresh seed for a component with its own generator (Dropout, a random operator), drawn from the
    global generator."""
    return int(_state["rng"].integers(0, 2**63 - 1))
