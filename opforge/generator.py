"""MindSpore's ``Generator``: the state of the random operators, a seed and an offset. Each random operator
call takes the pair and moves the offset on by one; its kernel draws value i from (seed, offset, i) alone
(``csrc/include/opforge/functors/random.h``), so a generator's sequence is the same on every backend.
``default_generator`` serves the functional ops (``ops.randn``, ``ops.rand``, ...) and restarts from the
seed each ``set_seed`` gives, as MindSpore's does; ``manual_seed``, ``initial_seed``, ``seed``,
``get_rng_state`` and ``set_rng_state`` act on it."""

from __future__ import annotations

import numpy as np

from opforge import seed as global_seed
from opforge.tensor import Tensor

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "initial_seed",
    "seed",
    "get_rng_state",
    "set_rng_state",
]


def _check_seed(where: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2**63:
        raise ValueError(f"For '{where}', the 'seed' must be an int in [0, 2**63), but got {value!r}.")
    return int(value)


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


class Generator:
    """A random state (seed, offset): ``Generator().manual_seed(5)``. ``get_state()`` is a 2-element int64
    Tensor [seed, offset], ``set_state`` takes one back."""

    def __init__(self):
        self._seed, self._offset = _fresh_seed(), 0

    def manual_seed(self, seed) -> Generator:
        self._seed, self._offset = _check_seed("Generator.manual_seed", seed), 0
        return self

    def seed(self) -> int:
        """Restart from a fresh random seed, and return it."""
        self._seed, self._offset = _fresh_seed(), 0
        return self._seed

    def initial_seed(self) -> int:
        self._sync()
        return self._seed

    def get_state(self) -> Tensor:
        self._sync()
        return Tensor(np.array([self._seed, self._offset], np.int64))

    def set_state(self, state) -> Generator:
        values = np.asarray(state.asnumpy() if isinstance(state, Tensor) else state)
        if values.shape != (2,) or values.dtype.kind not in "iu":
            raise ValueError(
                f"For 'Generator.set_state', the 'state' must be 2 ints [seed, offset] (get_state's), "
                f"but got {state!r}."
            )
        self._seed, self._offset = int(values[0]), int(values[1])
        return self

    def _step(self) -> tuple:
        """The (seed, offset) of the next call, moving the offset on."""
        self._sync()
        offset = self._offset
        self._offset += 1
        return self._seed, offset

    def _sync(self) -> None:
        """Bring the state up to date (the default generator: with ``set_seed``)."""


class _DefaultGenerator(Generator):
    """The global generator: restarts from ``set_seed``'s seed when that is called."""

    def __init__(self):
        super().__init__()
        self._sets = global_seed.seed_sets()

    def _sync(self) -> None:
        if global_seed.seed_sets() != self._sets:
            self._sets = global_seed.seed_sets()
            self.manual_seed(global_seed.get_seed())


default_generator = _DefaultGenerator()


def manual_seed(seed) -> Generator:
    """Seed the default generator."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    return default_generator.seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state) -> Generator:
    return default_generator.set_state(state)
