"""Activation recomputation (checkpointing): what ``Cell.recompute()`` and ``opforge.recompute(block, *args)``
(MindSpore's ``mindspore.recompute``) do while a gradient is being taken.

The call runs with the tapes set aside, so none of its intermediate tensors is kept, and is recorded on them as
ONE operation (``tape.PythonBackward``): its inputs are the tensors the call read that a tape tracks (its Tensor
arguments, the Parameters its cells read, tensors it closes over), its outputs the Tensors it returned. The
backward pass of that operation runs the call again on a tape of its own and differentiates it with the
gradients of the outputs, so the gradients are those of the plain call (the recomputed calls and the backward
are recorded on the enclosing tapes too: grad of grad works). Without a tape the call just runs.

The second run computes what the first one did:

* Random operators draw what they drew the first time. The first run notes, call by call, the seeds of each
  random operator, the primitive itself when its seeds are attrs (``Dropout``'s ``Seed0`` and ``Seed1``), the
  values of its ``seed`` and ``offset`` inputs otherwise (``DropoutExt``, ``Randn``, ...; under a trace that
  records, the very Tensors each replay refills), and the second run calls the operator with those.
* What the second run changes in Python is put back afterwards: the int attributes of the cells and of the
  objects they hold (``nn.Dropout``'s step, an operator's generator offset), the default ``Generator`` and the
  global seed's generator. Under a recording trace the counter refills it registered are dropped, so each
  replay moves a counter once, as without recomputation.
* In-place writes of Parameters (operators with written inputs: ``Assign``, BatchNorm's moving statistics) are
  made by the first run only; the second returns what the first returned.

The second run must make the same operator calls as the first (a RuntimeError says where it did not). Under a
trace that records, the second run is recorded in a region of its own (``Tracer.own_region``), so the trace
compiler never merges its calls with the identical first ones: a replay computes the block twice and frees the
first pass's intermediates after the forward pass, as PyNative does.
"""

from __future__ import annotations

import contextlib
import types

import numpy as np

from opforge import _C
from opforge import seed as global_seed
from opforge.bprop._utils import zeros_like
from opforge.bprop.tape import (
    PythonBackward,
    Tape,
    _differentiable,
    backward,
    needs_input_grad,
    output_grad_reached,
    record_on_tapes,
    taping,
)
from opforge.dispatch.binding import written_positions
from opforge.dispatch.interpreter import Interpreter, current_interpreter
from opforge.dispatch.trace import Tracer, tracing
from opforge.generator import default_generator
from opforge.tensor import Tensor

__all__ = ["RECOMPUTE_KWARGS", "configure_cell", "call_recomputed"]

# Cell.recompute's keyword arguments and their defaults (MindSpore's): how communication operators are treated
# in (semi-)auto parallel mode. opforge keeps them on the cell: its communication is not recomputed apart.
RECOMPUTE_KWARGS = {"mp_comm_recompute": True, "parallel_optimizer_comm_recompute": False,
                    "recompute_slice_activation": False}  # fmt: skip

_SEED_INPUTS = ("seed", "offset")  # the inputs random operators take their generator's state from


def configure_cell(cell, kwargs: dict) -> None:
    """``Cell.recompute(**kwargs)``: check the keywords (each a bool, TypeError; an unknown one, ValueError) and mark
    ``cell`` recomputed. As MindSpore's, a cell is configured once: the cell and every cell in it are marked, and
    configuring any of them again raises RuntimeError."""
    for key, value in kwargs.items():
        if key not in RECOMPUTE_KWARGS:
            raise ValueError(
                f"For 'recompute', the keyword '{key}' is not recognized: the keywords are "
                f"{', '.join(repr(k) for k in RECOMPUTE_KWARGS)}."
            )
        if not isinstance(value, bool):
            raise TypeError(f"For 'recompute', the '{key}' must be bool, but got {type(value).__name__}.")
    cells = [c for _, c in cell.cells_and_names()]
    for c in cells:
        if c.__dict__.get("_has_config_recompute"):
            raise RuntimeError(
                f"For 'recompute', the cell '{type(c).__name__}' is configured already: the recompute interface can "
                "be configured only once, and when a parent cell is configured its sub-cells must not be."
            )
    for c in cells:
        object.__setattr__(c, "_has_config_recompute", True)
    object.__setattr__(cell, "_recompute_kwargs", {**RECOMPUTE_KWARGS, **kwargs})


# -- the operators' kinds ---------------------------------------------------------------------------

_KINDS: dict = {}  # primitive class -> (written input positions, seed input positions, seeds in its attrs)


def _kind(prim) -> tuple:
    cls = type(prim)
    kind = _KINDS.get(cls)
    if kind is None:
        signature = cls._signature() if hasattr(cls, "_signature") else ()
        names = [s.name for s in signature] or list(getattr(prim, "input_names", None) or ())
        seeds = tuple(i for i, name in enumerate(names) if name in _SEED_INPUTS)
        kind = _KINDS[cls] = (written_positions(signature), seeds, hasattr(prim, "Seed0"))
    return kind


def _kept_seed(t):
    """A seed input as the second run must see it: the Tensor itself while a trace records (each replay refills
    it once, before the replay), else a copy of its value (a counter refilled in place may move on meanwhile)."""
    if not isinstance(t, Tensor) or tracing() or not hasattr(t, "_data"):
        return t
    dtype, _, device = t._meta
    return Tensor._from_array(device.asarray(device.to_host(t._data), dtype.np_dtype), dtype, device)


def _tensors(args):
    for a in args:
        if a.__class__ in (tuple, list):
            for t in a:
                if isinstance(t, Tensor):
                    yield t
        elif isinstance(a, Tensor):
            yield a


class _FirstRun(Interpreter):
    """Watches the first run (with the tapes set aside): which tracked tensors from outside the call it reads,
    which tensors it makes, and per call what the second run needs (the seeds, the results of in-place writes)."""

    def __init__(self, tapes: list, inputs: tuple):
        self.parent = None
        self.tapes = tapes
        self.inputs = {id(t): t for t in inputs}  # the call's own Tensor arguments
        self.produced: set = set()  # ids of the tensors the call's operators made (ids only: nothing is kept)
        self.read: dict = {}  # id -> tensor: tracked tensors from outside the call that it read, in order
        self.calls: list = []  # per operator call: (its class, None | ("write", out) | ("random", prim, seeds))

    def _tracked(self, t) -> bool:
        return any(id(t) in tape.tracked for tape in self.tapes)

    def process_primitive(self, prim, args: tuple):
        for t in _tensors(args):
            if id(t) not in self.produced and id(t) not in self.read and self._tracked(t):
                self.read[id(t)] = t
        written, seed_positions, seeded_attrs = _kind(prim)
        entry = None
        if not written and (seed_positions or seeded_attrs):
            seeds = {i: _kept_seed(args[i]) for i in seed_positions if i < len(args)}
            entry = ("random", prim, seeds)
        out = self.parent.process_primitive(prim, args)
        if written:
            entry = ("write", out)
        self.calls.append((type(prim), entry))
        for o in out if out.__class__ is tuple else (out,):
            if id(o) not in self.read:  # (an operator handing back its input: still the outside tensor)
                self.produced.add(id(o))
        return out

    def swap_tensors(self, updated, old) -> None:
        # (Tensor.__setitem__) the tensors made inside may be assigned into; an input of the call may not: the
        # second run would read the new value
        if id(updated) in self.inputs or self._tracked(updated):
            raise RuntimeError(
                "For 'recompute', a Tensor given to the recomputed call (or tracked by a gradient) cannot be assigned "
                "into in place inside it: the recomputation would read the new value. Assign into a copy."
            )


class _SecondRun(Interpreter):
    """The recomputation's innermost interpreter: each call checked against the first run's, random operators
    given the first run's seeds, in-place writes skipped."""

    def __init__(self, calls: list, where: str):
        self.parent = None
        self.calls, self.where, self.index = calls, where, 0

    def process_primitive(self, prim, args: tuple):
        k = self.index
        self.index += 1
        if k >= len(self.calls) or self.calls[k][0] is not type(prim):
            first = self.calls[k][0].__name__ if k < len(self.calls) else "nothing more"
            raise RuntimeError(
                f"For 'recompute' of '{self.where}', the recomputed forward pass must make the operator calls the "
                f"first one made, but its call {k} is '{prim.name}' where the first pass called {first}. Keep the "
                "cell's Python control flow independent of state its calls change."
            )
        entry = self.calls[k][1]
        if entry is None:
            return self.parent.process_primitive(prim, args)
        if entry[0] == "write":  # made by the first run
            return entry[1]
        _, first_prim, seeds = entry
        if seeds:
            args = tuple(seeds.get(i, a) for i, a in enumerate(args))
        return self.parent.process_primitive(first_prim, args)

    def swap_tensors(self, updated, old) -> None:
        """(The tape under it swaps them in its records.)"""


# -- Python state the second run changes --------------------------------------------------------------


def _int_attributes(obj, entries: list, seen: set, depth: int) -> None:
    """(obj, name, value) of the int attributes of ``obj`` and, ``depth`` levels down, of the plain objects it holds
    (operators, their generators); Tensors, classes and modules are not entered."""
    attrs = getattr(obj, "__dict__", None)
    if not isinstance(attrs, dict) or id(obj) in seen:
        return
    seen.add(id(obj))
    for name, value in attrs.items():
        if value.__class__ is int:
            entries.append((obj, name, value))
        elif depth > 0 and not isinstance(value, (Tensor, type, types.ModuleType)):
            _int_attributes(value, entries, seen, depth - 1)


def _python_state(owner) -> tuple:
    entries, seen = [], set()
    _int_attributes(default_generator, entries, seen, 0)
    for _, cell in owner.cells_and_names():
        _int_attributes(cell, entries, seen, 2)
    return entries, global_seed.rng().bit_generator.state, np.random.get_state()


def _restore_python_state(state: tuple) -> None:
    entries, seed_rng, numpy_rng = state
    for obj, name, value in entries:
        if obj.__dict__.get(name) is not value:
            object.__setattr__(obj, name, value)
    global_seed.rng().bit_generator.state = seed_rng
    np.random.set_state(numpy_rng)


def _recording_tracer():
    interpreter = current_interpreter()
    if interpreter is None:
        return None
    return next((i for i in interpreter.enclosing() if isinstance(i, Tracer)), None)


# -- outputs ---------------------------------------------------------------------------------------


def _leaves(value, out: list) -> list:
    """The Tensors of a (nested tuple / list) output, in order."""
    if isinstance(value, Tensor):
        out.append(value)
    elif value.__class__ in (tuple, list):
        for v in value:
            _leaves(v, out)
    return out


def _rebuilt(value, leaves):
    if isinstance(value, Tensor):
        return next(leaves)
    if value.__class__ in (tuple, list):
        return value.__class__(_rebuilt(v, leaves) for v in value)
    return value


def _alias(t: Tensor) -> Tensor:
    """A new Tensor over ``t``'s data: an output the call did not make (an input passed through) stands apart."""
    if not hasattr(t, "_data"):
        return Tensor._placeholder(*t._meta)
    return Tensor._from_array(t._data, *t._meta[::2])


# -- the call --------------------------------------------------------------------------------------


def _set_aside(interpreter):
    """``(the interpreter under the tapes, the tapes)``; None when a tape lies below another interpreter (the
    tapes cannot be set aside: the call then runs as it is)."""
    tapes, below = [], None
    for interp in interpreter.enclosing():
        if isinstance(interp, Tape):
            tapes.append(interp)
        else:
            below = interp
            break
    if below is not None and any(isinstance(i, Tape) for i in below.enclosing()):
        return None
    return below, tapes


def call_recomputed(owner, run, args: tuple, kwargs: dict, where: str):
    """``run()`` (``owner``'s call on ``args`` and ``kwargs``), its activations recomputed in the backward pass of
    every active tape. ``owner``: the Cell whose int counters the recomputation puts back."""
    if not taping():
        return run()
    interpreter = current_interpreter()
    aside = _set_aside(interpreter)
    if aside is None:
        return run()
    below, tapes = aside
    first = _FirstRun(tapes, tuple(_tensors(args)) + tuple(_tensors(kwargs.values())))
    _C.set_interpreter(below)
    try:
        with first:
            value = run()
    finally:
        _C.set_interpreter(interpreter)
    inputs = tuple(first.read.values())
    leaves = _leaves(value, [])
    if not inputs or not leaves:
        return value
    produced = first.produced
    if any(id(t) not in produced for t in leaves):
        leaves = [t if id(t) in produced else _alias(t) for t in leaves]
        value = _rebuilt(value, iter(leaves))
    calls = first.calls
    single, n_leaves = len(leaves) == 1, len(leaves)

    def bprop(*bprop_args):
        n = len(inputs)
        needs = tuple(needs_input_grad(i) for i in range(n))
        if not any(needs):
            return (None,) * n
        douts = (bprop_args[-1],) if single else tuple(bprop_args[-1])
        reached = (True,) if single else tuple(output_grad_reached(i) for i in range(len(douts)))
        tape = Tape()
        try:
            with tape:
                for t, need in zip(inputs, needs):
                    if need:
                        tape.watch(t)
                keep = set(tape.tracked)
                again = _recomputed(owner, run, calls, where)
            new_leaves = _leaves(again, [])
            if len(new_leaves) != n_leaves:
                raise RuntimeError(
                    f"For 'recompute' of '{where}', the recomputed forward pass returned {len(new_leaves)} Tensors, "
                    f"but the first one returned {n_leaves}."
                )
            outs = tuple(o for o, r in zip(new_leaves, reached) if r and _differentiable(o))
            senses = tuple(d for o, d, r in zip(new_leaves, douts, reached) if r and _differentiable(o))
            grads = backward(tape, outs, senses, keep)
        finally:
            tape.release()
        result = []
        for t, need in zip(inputs, needs):
            g = grads.get(id(t)) if need else None
            result.append(zeros_like(t) if need and g is None else g)
        return tuple(result)

    record_on_tapes(PythonBackward(where, bprop), inputs, leaves[0] if single else tuple(leaves))
    return value


def _recomputed(owner, run, calls: list, where: str):
    """The second run of ``run`` under the current tape, the first run's seeds and writes replayed; the Python
    state it changes put back."""
    state = _python_state(owner)
    tracer = _recording_tracer()
    refills = len(tracer.before_replay) if tracer is not None else 0
    region = tracer.own_region() if tracer is not None else contextlib.nullcontext()
    try:
        with region, _SecondRun(calls, where):
            return run()
    finally:
        _restore_python_state(state)
        if tracer is not None:
            del tracer.before_replay[refills:]
