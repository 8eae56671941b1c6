"""The global seed (MindSpore's ``set_seed`` / ``get_seed``) and the NumPy generator drawn from it by the
weight initializers (opforge/nn/init.py) and for the seeds of Dropout masks and of random operators
created without one. Without ``set_seed`` the generator is seeded from the operating system's entropy.
The default ``Generator`` of the random operators (opforge/generator.py) restarts from each seed given.
As MindSpore's, ``set_seed`` also seeds ``numpy.random``'s global state (the model zoo draws initial
weights with ``np.random.normal``) and the datasets' seed (``dataset.config.set_seed``, which registers
itself here: opforge/dataset/config.py)."""

from __future__ import annotations

import numpy as np

__all__ = ["set_seed", "get_seed"]

_state = {"seed": None, "rng": np.random.default_rng(), "sets": 0}

# Called with each seed given to ``set_seed`` (the datasets' ``config.set_seed``).
_seed_listeners: list = []


def on_set_seed(listener) -> None:
    _seed_listeners.append(listener)


def set_seed(seed: int) -> None:
    """Seed the random initializers, Dropout masks and the random operators."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"For 'set_seed', the 'seed' must be a non-negative int, but got {seed!r}.")
    if seed > 2**32 - 1:  # numpy.random's and the datasets' seeds are 32-bit, as MindSpore's
        raise ValueError(f"For 'set_seed', the 'seed' must be in [0, 4294967295], but got {seed!r}.")
    np.random.seed(int(seed))
    for listener in _seed_listeners:
        listener(int(seed))
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
