"""``OpTable``: one rule per operator, keyed by the operator's name (``bprop_getters``, ``batching_rules``).

Rules are registered next to the primitives they are for (``@table.register(P.Elu)`` or
``.register("Elu")``, several operators at once where one rule serves them all); ``version`` grows with
every change, so what was built from a rule (a bprop cached on a primitive) knows when it is stale.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["OpTable"]


class OpTable:
    """Maps an operator (its class or its name) to a rule; ``what`` names the rules in messages."""

    def __init__(self, what: str):
        self.what = what
        self.version = 0
        self._by_name: dict = {}

    @staticmethod
    def _name(key) -> str:
        if isinstance(key, str):
            return key
        if isinstance(key, type):
            return key.__name__
        raise TypeError(f"a registry key must be a Primitive class or an operator name, but got {key!r}")

    def register(self, *keys) -> Callable:
        """Decorator: ``@table.register(ops.Elu)``, ``.register("Elu")``, ``.register(P.Add, P.Sub)``."""
        names = [self._name(k) for k in keys]

        def deco(fn: Callable) -> Callable:
            if not callable(fn):
                shown = names[0] if len(names) == 1 else names
                raise TypeError(f"a {self.what} for '{shown}' must be callable, but got {type(fn).__name__}")
            for name in names:
                self._by_name[name] = fn
            self.version += 1
            return fn

        return deco

    def unregister(self, key) -> None:
        """Remove the entry of an operator (for user-defined ones); a missing entry is a KeyError."""
        name = self._name(key)
        if name not in self._by_name:
            raise KeyError(f"no {self.what} is registered for '{name}'")
        del self._by_name[name]
        self.version += 1

    def get(self, key, default=None):
        return self._by_name.get(self._name(key), default)

    def __contains__(self, key) -> bool:
        return self._name(key) in self._by_name

    def names(self) -> list:
        return sorted(self._by_name)
