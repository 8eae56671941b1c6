"""Binding a call to its primitive's signature: names and defaults, dtype-group promotion (Python
scalars are weak), and the rules of in-place writes (docs/architecture.md, "One call").

RW_WRITE arguments must be writable Parameters, never the same one twice; they are never cast, and
the rest of their group is cast to their dtype when that is lossless.
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch.signature import EMPTY, sig_dtype, sig_rw
from opforge.tensor import Parameter, Tensor

__all__ = [
    "bind_arguments",
    "plan_promotion",
    "written_positions",
    "check_written",
    "check_scalar_fits",
]


def bind_arguments(prim_name: str, signature: tuple, args: tuple, kwargs: dict) -> tuple:
    """Bind call arguments to the signature by position and name, filling defaults."""
    if len(args) > len(signature):
        raise TypeError(
            f"For '{prim_name}', it takes {len(signature)} arguments "
            f"({', '.join(s.name for s in signature)}), but got {len(args)}."
        )
    bound = list(args)
    for sig in signature[len(args) :]:
        if sig.name in kwargs:
            bound.append(kwargs.pop(sig.name))
        elif sig.default is not EMPTY:
            bound.append(sig.default)
        else:
            raise TypeError(f"For '{prim_name}', the argument '{sig.name}' is missing.")
    if kwargs:
        raise TypeError(f"For '{prim_name}', got unexpected arguments {sorted(kwargs)}.")
    return tuple(bound)


def _kind_name(value) -> str:
    return type(value).__name__


def plan_promotion(prim_name: str, signature: tuple, args: tuple) -> dict:
    """For each argument of a dtype group, the dtype it must become: ``{index: Type}``.

    Tensors already of that dtype are left out; Python scalars are always listed (they become
    0-d tensors). Raises for bad RW_WRITE arguments (``check_written``) and lossy casts into one.
    """
    check_written(prim_name, signature, args)
    groups: dict = {}
    for i, sig in enumerate(signature):
        if sig.dtype != sig_dtype.T_EMPTY_DEFAULT_VALUE:
            groups.setdefault(sig.dtype, []).append(i)
    targets = {}
    for members in groups.values():
        target = _group_dtype(prim_name, signature, args, members)
        for i in members:
            if not isinstance(args[i], Tensor) or args[i].dtype is not target:
                targets[i] = target
    return targets


def _group_dtype(prim_name, signature, args, members) -> mstype.Type:
    strong, weak = [], []
    for i in members:
        arg = args[i]
        if isinstance(arg, Tensor):
            strong.append(arg.dtype)
        elif mstype.weak_category(arg) is not None:
            weak.append(mstype.weak_category(arg))
        else:
            raise TypeError(
                f"For '{prim_name}', the '{signature[i].name}' must be a Tensor or a number, but got {_kind_name(arg)}."
            )
    writes = [i for i in members if signature[i].rw == sig_rw.RW_WRITE]
    if not writes:
        return mstype.result_type(tuple(strong), tuple(weak))
    target = args[writes[0]].dtype
    for i in writes[1:]:  # a written Parameter is never cast: a cast copy would lose the update
        if args[i].dtype is not target:
            raise TypeError(
                f"For '{prim_name}', the '{signature[i].name}' must have the dtype of '{signature[writes[0]].name}' "
                f"({target}), since both are written in place, but got {args[i].dtype}."
            )
    for i in members:
        arg = args[i]
        if isinstance(arg, Tensor):
            ok = mstype.can_cast_losslessly(arg.dtype, target)
            got = arg.dtype
        else:
            ok = mstype.weak_category(arg) <= target.category
            got = _kind_name(arg)
        if not ok:
            raise TypeError(
                f"For '{prim_name}', the '{signature[i].name}' ({got}) cannot be cast losslessly to "
                f"{target}, the dtype of the Parameter '{signature[writes[0]].name}' it updates."
            )
    return target


def written_positions(signature: tuple) -> tuple:
    """The positions of the RW_WRITE arguments. Output ``i`` of an in-place operator is its ``i``-th
    written argument (Assign returns ``variable``, Adam ``var, m, v``): MindSpore's convention, so
    the signature is the only declaration of an operator's writes."""
    return tuple(i for i, s in enumerate(signature) if s.rw == sig_rw.RW_WRITE)


def check_written(prim_name: str, signature: tuple, args: tuple) -> None:
    """Every RW_WRITE argument a writable Parameter, and no Parameter in two written slots (the
    result would depend on the order of the writes)."""
    seen: dict = {}
    for i in written_positions(signature):
        arg, name = args[i], signature[i].name
        if not isinstance(arg, Parameter):
            raise TypeError(
                f"For '{prim_name}', the '{name}' is written in place, so it must be a Parameter, "
                f"but got {_kind_name(arg)}."
            )
        if not arg._meta[2].is_writable(arg._data):
            raise ValueError(f"For '{prim_name}', the '{name}' is written in place, but its data is read-only.")
        if id(arg) in seen:
            raise ValueError(
                f"For '{prim_name}', the '{seen[id(arg)]}' and the '{name}' are both written in place, so they "
                f"must be different Parameters, but got '{arg.name}' twice."
            )
        seen[id(arg)] = name


def check_scalar_fits(prim_name: str, name: str, value, target: mstype.Type) -> None:
    """A weak scalar joining an integer group must fit its dtype (NumPy wraps silently; we raise)."""
    if target.kind in "iu" and not isinstance(value, (bool, np.bool_)):
        info = np.iinfo(target.np_dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"For '{prim_name}', the '{name}' ({value}) does not fit {target} [{info.min}, {info.max}]."
            )
