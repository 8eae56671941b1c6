"""Primitive signatures: argument names, read/write roles, defaults and dtype groups.

A primitive declares ``__mindspore_signature__ = (make_sig('x', dtype=sig_dtype.T), ...)``.
At call time the arguments are bound to it, and every dtype group (T, T1 ... T9) is promoted to a
single dtype with ``opforge.dtype.result_type`` (Python scalars are weak). RW_WRITE arguments
must be Parameters; they are never cast, and the rest of their group is cast to their dtype when
that is lossless.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from opforge import dtype as mstype
from opforge.tensor import Parameter, Tensor

__all__ = [
    "sig_rw",
    "sig_kind",
    "sig_dtype",
    "Signature",
    "make_sig",
    "bind_arguments",
    "plan_promotion",
]


class sig_rw(enum.IntEnum):
    """Whether an argument is read, written in place (must be a Parameter) or referenced."""

    RW_READ = 0
    RW_WRITE = 1
    RW_REF = 2


class sig_kind(enum.IntEnum):
    KIND_POSITIONAL_KEYWORD = 0
    KIND_VAR_POSITIONAL = 1
    KIND_KEYWORD_ONLY = 2
    KIND_VAR_KEYWARD = 3
    KIND_EMPTY_DEFAULT_VALUE = 4


class sig_dtype(enum.IntEnum):
    """dtype groups: arguments in the same group are promoted to one dtype."""

    T = 0
    T1 = 1
    T2 = 2
    T3 = 3
    T4 = 4
    T5 = 5
    T6 = 6
    T7 = 7
    T8 = 8
    T9 = 9
    T_EMPTY_DEFAULT_VALUE = 10


class _Empty:
    def __repr__(self) -> str:
        return "<empty>"


EMPTY = _Empty()


class Signature(NamedTuple):
    name: str
    rw: sig_rw
    kind: sig_kind
    default: object
    dtype: sig_dtype


def make_sig(
    name="var",
    rw=sig_rw.RW_READ,
    kind=sig_kind.KIND_POSITIONAL_KEYWORD,
    default=sig_kind.KIND_EMPTY_DEFAULT_VALUE,
    dtype=sig_dtype.T_EMPTY_DEFAULT_VALUE,
) -> Signature:
    """One argument of a primitive's signature (MindSpore's ``sig.make_sig``)."""
    if default is sig_kind.KIND_EMPTY_DEFAULT_VALUE:
        default = EMPTY
    return Signature(name, sig_rw(rw), sig_kind(kind), default, sig_dtype(dtype))


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
    0-d tensors). Raises for non-Parameters in RW_WRITE positions and for lossy casts into one.
    """
    for i, sig in enumerate(signature):
        if sig.rw == sig_rw.RW_WRITE and not isinstance(args[i], Parameter):
            raise TypeError(
                f"For '{prim_name}', the '{sig.name}' is written in place, so it must be a Parameter, "
                f"but got {_kind_name(args[i])}."
            )
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


def scalar_to_array(prim_name: str, name: str, value, target: mstype.Type) -> np.ndarray:
    """A Python scalar as a 0-d array of ``target``; an int that does not fit is an error."""
    if target.kind in "iu" and not isinstance(value, bool):
        info = np.iinfo(target.np_dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"For '{prim_name}', the '{name}' ({value}) does not fit {target} [{info.min}, {info.max}]."
            )
    return np.asarray(value, dtype=target.np_dtype)
