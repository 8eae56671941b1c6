"""``opforge.dataset.config``: the seed of the datasets' shuffles and random transforms (MindSpore's
``dataset.config``). ``opforge.set_seed`` sets it too, as MindSpore's global ``set_seed`` does."""

from __future__ import annotations

import random

import numpy as np

from opforge import seed as _global_seed

__all__ = [
    "set_seed",
    "get_seed",
    "set_num_parallel_workers",
    "get_num_parallel_workers",
    "set_prefetch_size",
    "get_prefetch_size",
    "set_numa_enable",
    "get_numa_enable",
    "set_enable_shared_mem",
    "get_enable_shared_mem",
]

_state = {"seed": None, "workers": 1, "prefetch_size": 16, "sets": 0, "numa_enable": False, "shared_mem": True}


def set_seed(seed: int) -> None:
    """Make every shuffle reproducible: epoch e of a dataset is shuffled the same way in every run. Each call
    also restarts the random transforms' draws from the seed (opforge/dataset/vision/random_source.py), as
    MindSpore's random transforms made after ``set_seed(s)`` all start from ``s``: two transforms made after
    the same seed draw the same (the model zoo's Pix2Pix flips its input and target images alike so)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"For 'set_seed', the 'seed' must be an int >= 0, but got {seed!r}.")
    if seed > 2**32 - 1:
        raise ValueError(f"For 'set_seed', the 'seed' must be in [0, 4294967295], but got {seed!r}.")
    random.seed(seed)  # as MindSpore's: Python's and NumPy's generators too (the Python transforms draw there)
    np.random.seed(seed)
    _state["seed"] = seed
    _state["sets"] += 1


def seed_sets() -> int:
    """How many times ``set_seed`` was called (the random transforms restart their draws when it changes)."""
    return _state["sets"]


def get_seed():
    return _state["seed"]


_global_seed.on_set_seed(set_seed)


def set_num_parallel_workers(num: int) -> None:
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise ValueError(f"For 'set_num_parallel_workers', the 'num' must be an int >= 1, but got {num!r}.")
    _state["workers"] = num


def get_num_parallel_workers() -> int:
    return _state["workers"]


def set_prefetch_size(size: int) -> None:
    """The rows a pipeline stage queues ahead (MindSpore's default 16): recorded; opforge's pipeline reads rows
    as they are asked for (AlexNet's dataset.py sets it)."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"For 'set_prefetch_size', the 'size' must be an int, but got {type(size).__name__}.")
    if not 0 < size <= 2**31 - 1:
        raise ValueError(f"For 'set_prefetch_size', the 'size' must be in (0, 2147483647], but got {size}.")
    _state["prefetch_size"] = size


def get_prefetch_size() -> int:
    return _state["prefetch_size"]


def set_numa_enable(numa_enable) -> None:
    """Whether the pipeline's workers bind to the device's NUMA node (MindSpore's ``set_numa_enable``, default
    False; the model zoo's ResNet GPU benchmark sets it): checked (a bool, else TypeError) and kept; opforge's
    pipeline threads and worker processes run where the operating system places them."""
    if not isinstance(numa_enable, bool):
        raise TypeError(
            f"For 'set_numa_enable', the 'numa_enable' must be a bool, but got {type(numa_enable).__name__}."
        )
    _state["numa_enable"] = numa_enable


def get_numa_enable() -> bool:
    return _state["numa_enable"]


def set_enable_shared_mem(enable) -> None:
    """Whether map's worker processes pass rows through shared memory (MindSpore's ``set_enable_shared_mem``,
    default True): checked (a bool, else TypeError) and kept; opforge's worker processes pass rows through
    their pool's pipes either way."""
    if not isinstance(enable, bool):
        raise TypeError(f"For 'set_enable_shared_mem', the 'enable' must be a bool, but got {type(enable).__name__}.")
    _state["shared_mem"] = enable


def get_enable_shared_mem() -> bool:
    return _state["shared_mem"]
