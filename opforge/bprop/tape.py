"""The eager autodiff tape: primitive calls are recorded while a gradient is being taken, then
replayed backwards through their bprops.

Tapes nest (a stack): a call is recorded on every active tape that tracks one of its inputs.
Bprops are written with primitives, so the backward pass of an inner gradient is itself recorded
on the outer tapes; that is what makes grad of grad work. With no active tape nothing is
recorded and a primitive call pays one list check.
"""

from __future__ import annotations

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

    def release(self) -> None:
        """Drop every tensor and call the tape holds (after the backward pass)."""
        self.tracked = {}
        self.records = []


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


def _describe(t) -> str:
    return f"{t.dtype}{list(t.shape)}"


def _check_grads(prim, args, grads) -> tuple:
    if not isinstance(grads, (tuple, list)):
        raise TypeError(
            f"For '{prim.name}', the bprop must return a tuple of gradients (one per input), "
            f"but got {type(grads).__name__}."
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
                f"For '{prim.name}', the gradient of input {i} ({_describe(a)}) must be a Tensor, "
                f"but got {type(g).__name__}."
            )
        if g.dtype is not a.dtype:
            raise TypeError(
                f"For '{prim.name}', the gradient of input {i} must have the input's dtype ({_describe(a)}), "
                f"but got {_describe(g)}."
            )
        if g.shape != a.shape:
            raise ValueError(
                f"For '{prim.name}', the gradient of input {i} must have the input's shape ({_describe(a)}), "
                f"but got {_describe(g)}."
            )
    return tuple(grads)


def _run_bprop(prim, args, out, dout) -> tuple:
    try:
        bprop = get_bprop(prim)
        grads = bprop(*args, out, dout)
    except Exception as e:
        note = f"(raised by the bprop of '{prim.name}')"
        if hasattr(e, "add_note") and note not in getattr(e, "__notes__", ()):  # Python >= 3.11
            e.add_note(note)
        raise
    return _check_grads(prim, args, grads)


def backward(tape: Tape, outputs: tuple, senses: tuple, keep=None) -> dict:
    """Propagate ``senses`` (one per output) back through ``tape``; returns ``{id(tensor): grad}``.

    Gradients are accumulated with the Add primitive and unreached outputs of multi-output
    operators get zeros from primitives, so under an outer tape the whole pass is recorded too.
    With ``keep`` (a set of ids), the gradient of any other tensor is dropped as soon as the call
    that made it has been differentiated, so intermediate gradients do not pile up.
    """
    from opforge.bprop._utils import zeros_like
    from opforge.ops import functional as F

    grads: dict = {}
    tracked = tape.tracked

    def accumulate(t, g):
        key = id(t)
        prev = grads.get(key)
        grads[key] = g if prev is None else F.add(prev, g)

    for out, sens in zip(outputs, senses):
        if id(out) in tracked:
            accumulate(out, sens)
    for prim, args, out in reversed(tape.records):
        multi = isinstance(out, tuple)
        outs = out if multi else (out,)
        douts = [grads.get(id(o)) for o in outs]
        if all(d is None for d in douts):
            continue
        if multi:
            dout = tuple(zeros_like(o) if d is None else d for o, d in zip(outs, douts))
        else:
            dout = douts[0]
        in_grads = _run_bprop(prim, args, out, dout)
        if keep is not None:
            for o in outs:
                if id(o) not in keep:
                    grads.pop(id(o), None)
        for a, g in zip(args, in_grads):
            if id(a) in tracked and _differentiable(a):
                accumulate(a, g)
    return grads
