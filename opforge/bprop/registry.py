"""The bprop registry: ``bprop_getters.register(Prim)`` stores a getter per operator.

``getter(prim)`` returns ``bprop(*inputs, out, dout)``, which returns a tuple with one gradient
per input (MindSpore's convention). A primitive may override its class's getter with its own
``get_bprop()``, defined on its class or set on one instance.
"""

from __future__ import annotations

import weakref
from typing import Callable

__all__ = ["Registry", "bprop_getters", "get_bprop"]

# Bumped by every registration change: a bprop cached on a primitive is valid while it is unchanged.
_version = [0]


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
            if not callable(fn):
                raise TypeError(f"a {self.what} for '{name}' must be callable, but got {type(fn).__name__}")
            self._by_name[name] = fn
            _version[0] += 1
            return fn

        return deco

    def unregister(self, key) -> None:
        """Remove the entry of an operator (for user-defined ones); a missing entry is a KeyError."""
        name = self._name(key)
        if name not in self._by_name:
            raise KeyError(f"no {self.what} is registered for '{name}'")
        del self._by_name[name]
        _version[0] += 1

    def get(self, key, default=None):
        return self._by_name.get(self._name(key), default)

    def __contains__(self, key) -> bool:
        return self._name(key) in self._by_name

    def names(self) -> list:
        return sorted(self._by_name)


bprop_getters = Registry("bprop getter")


def get_bprop(prim) -> Callable:
    """The bprop function of a primitive instance; raises a TypeError naming the operator when there is none."""
    d = prim.__dict__
    entry = d.get("_bprop_cache")
    if entry is not None and "get_bprop" not in d:  # the fast path: a bprop built for this primitive
        owner, version, attrs, bprop = entry
        try:
            if version == _version[0] and owner() is prim and attrs == prim.attrs:
                return bprop
        except Exception:  # attrs that do not compare (arrays): rebuild
            pass
    own = d.get("get_bprop") or getattr(type(prim), "get_bprop", None)
    if own is not None:
        bprop = prim.get_bprop()
    else:
        getter = bprop_getters.get(prim.name) or bprop_getters.get(type(prim))
        if getter is None:
            raise TypeError(
                f"For '{prim.name}', no bprop is registered, so it cannot be differentiated. "
                f"Register one with @bprop_getters.register(ops.{prim.name}) or define {prim.name}.get_bprop()."
            )
        bprop = _cached(prim, getter)
    if not callable(bprop):
        raise TypeError(f"For '{prim.name}', the bprop getter must return a function, but got {type(bprop).__name__}.")
    return bprop


def _cached(prim, getter) -> Callable:
    """``getter(prim)``, kept on the primitive until its attrs or the registry change: building a bprop
    creates the grad primitives it uses, which would otherwise happen on every backward pass."""
    bprop = getter(prim)
    if callable(bprop):
        # The owner check keeps a copied primitive (whose __dict__ is copied) from using this entry.
        prim.__dict__["_bprop_cache"] = (weakref.ref(prim), _version[0], dict(prim.attrs), bprop)
    return bprop
