"""Primitive signatures: argument names, read/write roles, defaults and dtype groups.

A primitive declares ``__mindspore_signature__ = (make_sig('x', dtype=sig_dtype.T), ...)``
(MindSpore's ``ops.signature``). What a call does with it (binding, promotion, write checks) is in
``opforge.dispatch.binding``. RW_WRITE arguments are the operator's in-place writes: the one
declaration of them, from which the dispatcher derives which outputs alias which inputs.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

__all__ = [
    "sig_rw",
    "sig_kind",
    "sig_dtype",
    "Signature",
    "make_sig",
    "EMPTY",
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
