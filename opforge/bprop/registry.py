"""The bprop registry: ``bprop_getters.register(Prim)`` stores a getter per operator.

``getter(prim)`` returns ``bprop(*inputs, out, dout)``, which returns a tuple with one gradient
per input (MindSpore's convention). A primitive may override its class's getter with its own
``get_bprop()``, defined on its class or set on one instance.
"""

from __future__ import annotations

import weakref
from typing import Callable

from opforge.dispatch import binding
from opforge.dispatch.op_table import OpTable
from opforge.primitives.array_ops import Cast
from opforge.tensor import Tensor

__all__ = ["Registry", "bprop_getters", "get_bprop"]

Registry = OpTable  # (the name opforge.bprop exports)

bprop_getters = OpTable("bprop getter")


def get_bprop(prim) -> Callable:
    """The bprop function of a primitive instance; raises a TypeError naming the operator when there is none."""
    d = prim.__dict__
    entry = d.get("_bprop_cache")
    if entry is not None and "get_bprop" not in d:  # the fast path: a bprop built for this primitive
        owner, version, attrs, bprop = entry
        try:
            if version == bprop_getters.version and owner() is prim and attrs == prim.attrs:
                return bprop
        except Exception:  # attrs that do not compare (arrays): rebuild
            pass
    own = d.get("get_bprop") or getattr(type(prim), "get_bprop", None)
    if own is not None:
        bprop = prim.get_bprop()
    else:
        getter = bprop_getters.get(prim.name) or bprop_getters.get(type(prim))
        if getter is None:
            cls = _class_reference(type(prim))
            raise TypeError(
                f"For '{prim.name}', no bprop is registered, so it cannot be differentiated. "
                f"Register one with @bprop_getters.register({cls}) or define {type(prim).__name__}.get_bprop()."
            )
        bprop = _cached(prim, getter)
    if not callable(bprop):
        raise TypeError(f"For '{prim.name}', the bprop getter must return a function, but got {type(bprop).__name__}.")
    return bprop


def _class_reference(cls) -> str:
    """How the user names the operator's class: ``ops.Elu`` for a built-in one, else the class itself
    (a user's class is not in ``opforge.ops``)."""
    return f"ops.{cls.__name__}" if cls.__module__.startswith("opforge.primitives") else cls.__name__


def _cached(prim, getter) -> Callable:
    """``getter(prim)``, kept on the primitive until its attrs or the registry change: building a bprop
    creates the grad primitives it uses, which would otherwise happen on every backward pass."""
    bprop = getter(prim)
    if callable(bprop) and type(prim)._group_positions():
        bprop = _in_group_dtypes(prim, bprop)
    if callable(bprop):
        # The owner check keeps a copied primitive (whose __dict__ is copied) from using this entry.
        prim.__dict__["_bprop_cache"] = (weakref.ref(prim), bprop_getters.version, dict(prim.attrs), bprop)
    return bprop


_cast = Cast()


def _in_group_dtypes(prim, bprop) -> Callable:
    """``bprop`` seeing each input of a dtype group in the dtype the call computed in (a float16 ``x`` of a
    group with a float32 ``gamma`` as float32, as the kernel saw it and as ``dout`` is), its gradients cast
    back to each input's own dtype."""
    positions = type(prim)._group_positions()
    signature = type(prim)._signature()

    def bprop_in_group_dtypes(*args):
        inputs = args[:-2]
        dtypes = {a.dtype for i, a in enumerate(inputs) if i in positions and isinstance(a, Tensor)}
        if len(dtypes) <= 1:  # one dtype (the usual case): nothing was promoted
            return bprop(*args)
        casts = {
            i: t
            for i, t in binding.plan_promotion(prim.name, signature, inputs).items()
            if isinstance(inputs[i], Tensor) and inputs[i].dtype.kind == "f" and t.kind == "f"
        }
        if not casts:
            return bprop(*args)
        promoted = tuple(_cast(a, casts[i]) if i in casts else a for i, a in enumerate(inputs))
        grads = bprop(*promoted, *args[-2:])
        return tuple(
            _cast(g, inputs[i].dtype) if i in casts and isinstance(g, Tensor) else g for i, g in enumerate(grads)
        )

    return bprop_in_group_dtypes
