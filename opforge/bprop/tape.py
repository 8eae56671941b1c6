"""The eager autodiff tape: primitive calls are recorded while a gradient is being taken, then
replayed backwards through their bprops.

Tapes nest (a stack): a call is recorded on every active tape that tracks one of its inputs.
Bprops are written with primitives, so the backward pass of an inner gradient is itself recorded
on the outer tapes; that is what makes grad of grad work. With no active tape nothing is
recorded and a primitive call pays one list check.
"""

from __future__ import annotations

import numpy as np

from opforge.bprop.registry import get_bprop
from opforge.primitives import observers
from opforge.tensor import Tensor

__all__ = ["Tape", "record", "backward"]


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and t.dtype.kind in "fc"


class Tape:
    """What one gradient computation saw: the tensors it tracks and the calls that made them."""

    __slots__ = ("tracked", "records")

    def __init__(self):
        self.tracked: dict = {}  # id -> tensor; holding the tensor keeps its id unique
        self.records: list = []  # (primitive, inputs, output)

    def watch(self, t) -> None:
        if _differentiable(t):
            self.tracked[id(t)] = t

    def __enter__(self) -> Tape:
        observers.start(self, observers.tapes)
        return self

    def __exit__(self, *exc) -> None:
        observers.stop(self, observers.tapes)


def record(prim, args: tuple, out) -> None:
    """Record a call on every active tape that tracks one of its inputs."""
    for tape in observers.tapes:
        tracked = tape.tracked
        if any(id(a) in tracked for a in args):
            outs = out if isinstance(out, tuple) else (out,)
            for o in outs:
                if _differentiable(o) and id(o) not in tracked:
                    tracked[id(o)] = o
            tape.records.append((prim, args, out))


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._from_array(np.zeros(t.shape, t.dtype.np_dtype), t.dtype)


def _check_grads(prim, args, grads) -> tuple:
    if not isinstance(grads, (tuple, list)):
        raise TypeError(
            f"For '{prim.name}', the bprop must return a tuple of gradients, but got {type(grads).__name__}."
        )
    if len(grads) != len(args):
        raise ValueError(
            f"For '{prim.name}', the bprop must return one gradient per input ({len(args)}), but returned {len(grads)}."
        )
    for i, (a, g) in enumerate(zip(args, grads)):
        if not _differentiable(a):
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"For '{prim.name}', the gradient of input {i} must be a Tensor, but got {type(g).__name__}."
            )
        if g.shape != a.shape or g.dtype is not a.dtype:
            raise ValueError(
                f"For '{prim.name}', the gradient of input {i} must match the input ({a.dtype}{list(a.shape)}), "
                f"but got {g.dtype}{list(g.shape)}."
            )
    return tuple(grads)


def backward(tape: Tape, outputs: tuple, senses: tuple) -> dict:
    """Propagate ``senses`` (one per output) back through ``tape``; returns ``{id(tensor): grad}``."""
    from opforge.ops import functional as F

    grads: dict = {}

    def accumulate(t, g):
        key = id(t)
        grads[key] = g if key not in grads else F.add(grads[key], g)

    for out, sens in zip(outputs, senses):
        if id(out) in tape.tracked:
            accumulate(out, sens)
    for prim, args, out in reversed(tape.records):
        outs = out if isinstance(out, tuple) else (out,)
        douts = [grads.get(id(o)) for o in outs]
        if all(d is None for d in douts):
            continue
        douts = [_zeros_like(o) if d is None else d for o, d in zip(outs, douts)]
        bprop = get_bprop(prim)
        in_grads = _check_grads(prim, args, bprop(*args, out, douts[0] if len(outs) == 1 else tuple(douts)))
        for a, g in zip(args, in_grads):
            if _differentiable(a) and id(a) in tape.tracked:
                accumulate(a, g)
    return grads
