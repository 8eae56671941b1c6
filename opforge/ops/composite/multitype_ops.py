"""MindSpore's ``MultitypeFuncGraph``, ``HyperMap`` and ``Map``: a function chosen by its arguments' kinds,
applied across (nested) tuples and lists, as MindSpore's optimizers and gradient transforms write them:

    _grad_scale = C.MultitypeFuncGraph("grad_scale")

    @_grad_scale.register("Tensor", "Tensor")
    def _(scale, grad):
        return grad / scale

    grads = C.HyperMap()(F.partial(_grad_scale, scale), grads)
"""

from __future__ import annotations

import numbers

from opforge.ops.functional import partial
from opforge.sparse_tensor import RowTensor
from opforge.tensor import Tensor

__all__ = ["MultitypeFuncGraph", "HyperMap", "Map", "partial"]


def _kind_matches(kind: str, value) -> bool:
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "Number":
        return isinstance(value, numbers.Number) and not isinstance(value, bool)
    if kind == "Bool":
        return isinstance(value, bool)
    if kind == "Tuple":
        return isinstance(value, tuple)
    if kind == "List":
        return isinstance(value, list)
    if kind == "String":
        return isinstance(value, str)
    if kind == "None":
        return value is None
    if kind == "Function":
        return callable(value) and not isinstance(value, Tensor)
    if kind == "Dictionary":
        return isinstance(value, dict)
    if kind == "RowTensor":  # (one a program builds: opforge's gradients are dense)
        return isinstance(value, RowTensor)
    if kind in _SPARSE_KINDS:  # opforge's gradients are dense: a sparse overload is registered, never chosen
        return False
    raise ValueError(f"For 'MultitypeFuncGraph', the type name {kind!r} is not one of Tensor, Number, Bool, Tuple, "
                     "List, String, None, Function, Dictionary, RowTensor, COOTensor, CSRTensor.")  # fmt: skip


_SPARSE_KINDS = frozenset({"RowTensor", "COOTensor", "CSRTensor", "MapTensor"})


class MultitypeFuncGraph:
    """A function with one implementation per kinds of its arguments (``register("Tensor", "Number")``);
    a call runs the first registered implementation whose kinds match the arguments."""

    def __init__(self, name: str, read_value: bool = False):
        self.name = name
        self.entries: list = []

    def register(self, *kinds: str):
        for kind in kinds:
            _kind_matches(kind, None)  # (checks the name)

        def add(fn):
            self.entries.append((kinds, fn))
            return fn

        return add

    def __call__(self, *args):
        for kinds, fn in self.entries:
            if len(kinds) == len(args) and all(_kind_matches(k, a) for k, a in zip(kinds, args)):
                return fn(*args)
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"For '{self.name}', no implementation is registered for arguments of types ({got}).")


class HyperMap:
    """``HyperMap(ops=None)(fn, *sequences)`` (or ``(*sequences)`` with ``ops``): ``fn`` applied across the
    sequences' elements, recursively through nested tuples and lists; a non-sequence argument goes to
    every call as it is. The results come as a tuple (for a ParameterTuple too, as MindSpore's) or a list."""

    recursive = True

    def __init__(self, ops=None, reverse: bool = False):
        self.ops = ops
        self.reverse = reverse

    def __call__(self, *args):
        fn, args = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        return self._map(fn, args)

    def _map(self, fn, args):
        seqs = [a for a in args if isinstance(a, (tuple, list))]
        if not seqs:
            return fn(*args)
        n = len(seqs[0])
        if any(len(s) != n for s in seqs):
            raise ValueError(
                f"For '{type(self).__name__}', the sequences must have one length, but got {[len(s) for s in seqs]}."
            )
        out = [None] * n
        for i in reversed(range(n)) if self.reverse else range(n):  # (reverse: the calls' order)
            items = tuple(a[i] if isinstance(a, (tuple, list)) else a for a in args)
            out[i] = self._map(fn, items) if self.recursive else fn(*items)
        return list(out) if isinstance(seqs[0], list) else tuple(out)  # a ParameterTuple's map: a tuple


class Map(HyperMap):
    """``Map(ops=None)(fn, *sequences)``: ``fn`` applied to the sequences' elements, one level deep."""

    recursive = False
