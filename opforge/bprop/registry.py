"""The bprop registry: ``bprop_getters.register(Prim)`` stores a getter per operator.

``getter(prim)`` returns ``bprop(*inputs, out, dout)``, which returns a tuple with one gradient
per input (MindSpore's convention). A primitive instance may override its class's getter with its
own ``get_bprop()``.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["Registry", "bprop_getters", "get_bprop"]


class Registry:
    """Maps an operator (its class or its name) to a value; lookups try the class, then the name."""

    def __init__(self, what: str):
        self.what = what
        self._by_name: dict = {}

    @staticmethod
    def _name(key) -> str:
        if isinstance(key, str):
            return key
        if isinstance(key, type):
            return key.__name__
        raise TypeError(f"a registry key must be a Primitive class or an operator name, but got {key!r}")

    def register(self, key) -> Callable:
        """Decorator: ``@bprop_getters.register(ops.Elu)`` or ``.register("Elu")``."""
        name = self._name(key)

        def deco(fn: Callable) -> Callable:
            self._by_name[name] = fn
            return fn

        return deco

    def get(self, key, default=None):
        return self._by_name.get(self._name(key), default)

    def __contains__(self, key) -> bool:
        return self._name(key) in self._by_name

    def names(self) -> list:
        return sorted(self._by_name)


bprop_getters = Registry("bprop getter")


def get_bprop(prim) -> Callable:
    """The bprop function of a primitive instance; raises naming the operator when there is none."""
    own = getattr(type(prim), "get_bprop", None)
    if own is not None:
        return prim.get_bprop()
    getter = bprop_getters.get(prim.name) or bprop_getters.get(type(prim))
    if getter is None:
        raise TypeError(
            f"For '{prim.name}', no bprop is registered, so it cannot be differentiated. "
            f"Register one with @bprop_getters.register(ops.{prim.name}) or define {prim.name}.get_bprop()."
        )
    return getter(prim)
