"""MindSpore's ``mindspore.ops.primitive``: the primitive base classes and ``prim_attr_register`` (from
opforge/primitives/primitive.py), and ``constexpr``."""

from __future__ import annotations

from opforge.primitives.primitive import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, prim_attr_register

__all__ = ["Primitive", "PrimitiveWithCheck", "PrimitiveWithInfer", "prim_attr_register", "constexpr"]


def constexpr(fn=None, get_instance=True, name=None, reuse_result=True, check=True):
    """MindSpore's ``@constexpr``: a function of constants (shapes, dtypes, Python values) that MindSpore's
    graph compiler evaluates while compiling. opforge runs Python as it goes, and a trace records only the
    operators, so the function is simply called: ``@constexpr`` and ``@constexpr(...)`` return it unchanged
    (``get_instance=False``: a class whose instances call it)."""
    if fn is None:
        return lambda f: constexpr(f, get_instance, name, reuse_result, check)
    if get_instance:
        return fn
    return type(name or fn.__name__, (), {"__call__": lambda self, *args, **kwargs: fn(*args, **kwargs)})
