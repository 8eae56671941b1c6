"""The eager autodiff tape: an interpreter that records primitive calls while a gradient is being
taken; ``backward`` replays them in reverse through their bprops.

Tapes nest (the interpreter stack of the thread): a call is recorded on every active tape that
tracks one of its inputs. Bprops are written with primitives, so the backward pass of an inner
gradient is itself recorded on the outer tapes; that is what makes grad of grad work. Tapes are
per thread: gradients taken in several threads at once never see each other's calls.

A saved Parameter that is written in place (an optimizer step, Assign) after the forward pass
would silently give a wrong gradient: each record keeps the versions of the Parameters it saved
and the backward pass raises if one changed.

Only the gradients somebody uses are computed: while a bprop runs, ``needs_input_grad(i)`` says
whether input ``i`` of the call is tracked by the tape being differentiated (a watched tensor or
one computed from one). The gradient of any other input (data, labels, constants, tensors of an
enclosing gradient only) is dropped by the backward pass, so a bprop may skip it and return None.
That holds under enclosing tapes too: an inner gradient call returns only the gradients of its own
tracked tensors, so what it skips is used by no order of differentiation. Likewise
``output_grad_reached(i)`` says whether output ``i`` of a multi-output call got a gradient or zeros
made by the pass, so a bprop may leave out the terms of an output nobody read (BatchNorm's batch
statistics).
"""

from __future__ import annotations

import threading

from opforge import _C
from opforge import dtype as mstype
from opforge.bprop.registry import get_bprop
from opforge.dispatch.interpreter import EVAL, Interpreter, backward_pass, current_interpreter
from opforge.ops import functional as F
from opforge.tensor import Parameter, Tensor

__all__ = [
    "Tape", "PythonBackward", "record_on_tapes", "backward", "needs_input_grad", "output_grad_reached",
    "differentiated_operator",
]  # fmt: skip

_SEQUENCES = (tuple, list)  # a variadic input: its gradient is a tuple, one per element

# The dtypes gradients flow through.
_DIFF_DTYPES = frozenset(t for t in mstype.all_types if t.kind in "fc")


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and t._meta[0] in _DIFF_DTYPES


class Tape(Interpreter):
    """What one gradient computation saw: the tensors it tracks and the calls that made them.

    ``with tape:`` installs it on this thread; every primitive call then runs (through the
    interpreters below) and is recorded when one of its inputs is tracked.
    """

    differentiates = True

    def __init__(self):
        self.parent = None
        self.tracked: dict = {}  # id -> tensor; holding the tensor keeps its id unique
        self.records: list = []  # (primitive, inputs, output, saved Parameter versions or None)
        self.reducers: list = []  # gradient reducers the call enlisted (``enlist_reducer``)

    def watch(self, t) -> None:
        if _differentiable(t):
            self.tracked[id(t)] = t

    def process_primitive(self, prim, args: tuple):
        parent = self.parent
        # The bottom interpreter's work done here when it is the parent: the cached plan, from C.
        out = _C.run_cached(prim, args) if parent is EVAL else None
        if out is None:
            out = parent.process_primitive(prim, args)
        self.record(prim, args, out)
        return out

    def record(self, prim, args: tuple, out) -> None:
        """Record a call if it reads a tracked tensor (a Tensor of ``args``, or an element of a tuple
        of them); its differentiable outputs become tracked. The record is ``(prim, args with the
        defaults filled in, out, versions of the Parameters among args or None)``. In C
        (``csrc/python/tape.cc``): the fast call path records there directly."""
        _C.tape_record(self, prim, args, out)

    def swap_tensors(self, updated, old) -> None:
        """``updated`` now holds the value ``old`` was computed to have, and ``old`` the value ``updated``
        had (``Tensor.__setitem__``): each takes the other's place in the records, so the calls that read
        ``updated`` before see its old value and the later ones the new. A watched tensor (a leaf whose
        gradient is the answer) cannot move: assigning into it raises."""
        tracked = self.tracked
        if id(updated) in tracked and not any(
            r[2] is updated or (r[2].__class__ is tuple and any(o is updated for o in r[2])) for r in self.records
        ):
            raise RuntimeError(
                "For 'Tensor.__setitem__', the Tensor is an input whose gradient is being taken, so it cannot be "
                "assigned into in place (its gradient would be lost): assign into a copy (y = x * 1; y[...] = v)."
            )

        def swap(t):
            return old if t is updated else updated if t is old else t

        was_updated, was_old = tracked.pop(id(updated), None), tracked.pop(id(old), None)
        if was_updated is not None:
            tracked[id(old)] = old
        if was_old is not None:
            tracked[id(updated)] = updated
        for i, (prim, args, out, versions) in enumerate(self.records):
            args = tuple(type(a)(swap(t) for t in a) if a.__class__ in _SEQUENCES else swap(a) for a in args)
            out = tuple(swap(o) for o in out) if out.__class__ is tuple else swap(out)
            self.records[i] = (prim, args, out, versions)

    def release(self) -> None:
        """Drop every tensor and call the tape holds (after the backward pass)."""
        self.tracked = {}
        self.records = []


def _check_versions(prim, args: tuple, versions) -> None:
    for i, version in versions:
        if args[i]._version != version:
            raise RuntimeError(
                f"For '{prim.name}', the Parameter '{args[i].name}' (input {i}) was modified in place after it was "
                f"used in the forward pass (version {version}, now {args[i]._version}), so its gradient would be "
                f"wrong. Take the gradient before updating it, or compute the forward pass again."
            )


class PythonBackward:
    """A call the tapes record as one operation, differentiated by a Python function ``bprop(*inputs, out, dout)``
    (a Cell's own bprop, a gradient hook): not a primitive, so its inputs are recorded as they came."""

    __mindspore_signature__ = ()
    attrs: dict = {}

    def __init__(self, name: str, bprop):
        self.name, self._bprop = name, bprop

    def get_bprop(self):
        return self._bprop


def taping() -> bool:
    """Whether a gradient is being taken on this thread (a tape is among the active interpreters)."""
    interpreter = current_interpreter()
    return interpreter is not None and any(isinstance(i, Tape) for i in interpreter.enclosing())


def enlist_reducer(reducer) -> bool:
    """While a gradient is taken, have the innermost tape's backward pass hand ``reducer`` the watched tensors'
    gradients: ``reducer.ready(id, grad)`` as each is final, ``reducer.finish(grads)`` (``{id: grad}`` ->
    the same, reduced) once the pass ends (a data-parallel wrapper's all-reduces). False when no gradient is
    being taken."""
    interpreter = current_interpreter()
    for interp in interpreter.enclosing() if interpreter is not None else ():
        if isinstance(interp, Tape):
            if reducer not in interp.reducers:
                interp.reducers.append(reducer)
            return True
    return False


def record_on_tapes(prim, args: tuple, out) -> None:
    """Record a call made outside the interpreters (an alias joining a tensor) on every active tape."""
    interpreter = current_interpreter()
    if interpreter is not None:
        for interp in interpreter.enclosing():
            if isinstance(interp, Tape):
                interp.record(prim, args, out)


# Per thread: which inputs of the call being differentiated need a gradient; None (outside a
# backward pass, e.g. a bprop called directly): all of them.
_state = threading.local()
_state.needs = None
_state.reached = None  # per output of a multi-output call: whether it got a gradient (not zeros)
_state.prim = None  # the operator whose bprop is running (set by the backward pass)


def needs_input_grad(index: int) -> bool:
    """For bprops: whether the gradient of input ``index`` of the call being differentiated is used.

    False for inputs the tape does not track (their gradient would be thrown away): a bprop may
    skip computing it and return None in its place. True outside a backward pass.
    """
    needs = getattr(_state, "needs", None)
    return needs is None or needs[index]


def output_grad_reached(index: int) -> bool:
    """For bprops: whether output ``index`` of the call being differentiated got a gradient. False when
    nothing read it: its ``dout`` holds zeros the backward pass made, and the bprop may leave out the
    terms that multiply it. True outside a backward pass and for single-output calls."""
    reached = getattr(_state, "reached", None)
    return reached is None or reached[index]


def differentiated_operator():
    """The operator whose bprop is running on this thread (the innermost backward pass), or None."""
    return getattr(_state, "prim", None)


def _describe(t) -> str:
    return f"{t.dtype}{list(t.shape)}"


def _check_grads(prim, args, grads, needs=None) -> tuple:
    """Check a bprop's answer: one gradient per input, and for each input that needs one (all of
    them when ``needs`` is None) a Tensor of the input's dtype and shape."""
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
        if not _differentiable(a) or (needs is not None and not needs[i]):
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


def _add_note(e: Exception, prim) -> None:
    note = f"(raised by the bprop of '{prim.name}')"
    if hasattr(e, "add_note") and note not in getattr(e, "__notes__", ()):  # Python >= 3.11
        e.add_note(note)


def _accumulate_sequence(prim, inputs, grads_of, grads: dict, tracked: dict, add) -> None:
    """The gradient of a tuple-of-Tensors input is a tuple with one gradient per element."""
    if grads_of.__class__ not in _SEQUENCES or len(grads_of) != len(inputs):
        raise TypeError(
            f"For '{prim.name}', the gradient of a tuple input of {len(inputs)} Tensors must be a tuple of "
            f"{len(inputs)} gradients, but got {type(grads_of).__name__}."
        )
    for t, g in zip(inputs, grads_of):
        if id(t) not in tracked:
            continue
        if not isinstance(g, Tensor) or g._meta[0] is not t._meta[0] or g._meta[1] != t._meta[1]:
            raise TypeError(
                f"For '{prim.name}', each gradient of a tuple input must be a Tensor of its element's dtype and "
                f"shape ({_describe(t)}), but got {_describe(g) if isinstance(g, Tensor) else type(g).__name__}."
            )
        prev = grads.get(id(t))
        grads[id(t)] = g if prev is None else add(prev, g)


def _final_at(records: list, keep) -> list:
    """``[(record index, id), ...]`` in increasing index: for each kept tensor, the first call that
    read it. Once the backward pass has gone below that index, the tensor's gradient is final."""
    first: dict = {}
    for i, (_, args, _, _) in enumerate(records):
        for a in args:
            if a.__class__ in _SEQUENCES:
                for t in a:
                    if id(t) in keep and id(t) not in first:
                        first[id(t)] = i
            elif id(a) in keep and id(a) not in first:
                first[id(a)] = i
    return sorted((i, key) for key, i in first.items())


def backward(tape: Tape, outputs: tuple, senses: tuple, keep=None, on_ready=None) -> dict:
    """Propagate ``senses`` (one per output) back through ``tape``; returns ``{id(tensor): grad}``.

    Gradients are accumulated with the Add primitive and unreached outputs of multi-output
    operators get zeros from primitives, so under an outer tape the whole pass is recorded too.
    A call none of whose outputs got a gradient is skipped; each bprop learns from
    ``needs_input_grad`` which of its inputs need one. With ``keep`` (a set of ids), the gradient
    of any other tensor is dropped as soon as the call that made it has been differentiated, so
    intermediate gradients do not pile up.

    ``on_ready(id, grad)`` (with ``keep``) is called for each kept tensor as soon as its gradient is
    final: after the bprop of the first call that read it, while the rest of the pass goes on (a
    data-parallel reducer starts all-reducing a bucket there). Kept tensors that got no gradient are
    not reported. The walk runs in C (``csrc/python/tape.cc``), calling the bprops and the checks here.
    """
    pending = _final_at(tape.records, keep) if on_ready is not None and keep else []
    return backward_pass(lambda: _C.tape_backward(tape, tuple(outputs), tuple(senses), keep, pending, on_ready))


_C.configure_tape(
    Tape,
    EVAL,
    Tensor,
    Parameter,
    _DIFF_DTYPES,
    _state,
    {
        "add": F.add,
        "zeros_like": F.zeros_like,
        "get_bprop": get_bprop,
        "check_versions": _check_versions,
        "check_grads": _check_grads,
        "accumulate_sequence": _accumulate_sequence,
        "add_note": _add_note,
    },
)
