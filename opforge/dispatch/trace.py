"""Traces: a function's primitive calls recorded once as plans, then replayed (``opforge.jit``).

A ``Tracer`` is an interpreter at the bottom of the stack: the traced function runs eagerly once,
and every primitive call it makes (its own, its cells', a tape's backward pass, an optimizer's
in-place updates) is run by its cached plan and recorded as a ``Step``: the plan, where each
argument comes from (an input of the function, an earlier step's output, or a constant: a Python
value, a Parameter, a Tensor made outside the trace) and where its outputs go. A ``Trace`` replays
the steps on new inputs of the same signature without running the function's Python: no binding,
no inference, no selection; with no interpreter active, straight from plan to plan.

What a trace cannot see is refused while tracing: reading a traced Tensor's data into Python (its
value could steer Python code that a replay does not run), copying it outside an operator, or
``Parameter.set_data`` (not an operator: a replay would not repeat it). ``TraceError`` names the
line of the function that did it; a Tracer that allows graph breaks (``opforge.jit``'s default, as
MindSpore's ``fullgraph=False``) notes the first such line instead (``broken``) and lets the function run
on: it runs eagerly anyway while it is traced, so its result stands, and the trace is not kept.
"""

from __future__ import annotations

import contextlib
import os
import sys
import weakref
from typing import NamedTuple

import numpy as np

from opforge import _C
from opforge import tensor as tensor_module
from opforge.device import get_device
from opforge.dispatch import binding, cse, device_graph, epilogue, fusion, placement
from opforge.dispatch.interpreter import EVAL, Interpreter, current_interpreter
from opforge.dispatch.plan import freeze
from opforge.tensor import Parameter, Tensor, is_placeholder

__all__ = [
    "GraphBreakWarning",
    "TraceError",
    "Tracer",
    "Trace",
    "Step",
    "replay_counter",
    "replay_steps",
    "same_constant",
    "tracing",
    "can_trace",
    "user_stacklevel",
    "note_gradient_cut",
]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TraceError(RuntimeError):
    """Something a trace cannot record happened inside a jitted function."""


class GraphBreakWarning(UserWarning):
    """A jitted function did what a trace cannot record (a graph break): it runs eagerly for those inputs."""


def user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` called here that points at the innermost caller outside opforge."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def user_frame() -> str:
    """``file:line`` of the innermost caller outside opforge (where the user's code did it)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


# -- what a step's arguments and outputs are ----------------------------------------------------
# An argument source is ("slot", i): the value in slot i of the replay's environment (slots 0..n-1
# are the function's Tensor inputs, the rest the steps' outputs), ("const", value), or
# ("seq", type, sources) for a tuple or list of them (AddN's, Concat's inputs).


class Step(NamedTuple):
    """One recorded primitive call."""

    prim: object
    plan: object
    sources: tuple  # one argument source per argument
    outputs: object  # the slot of its one output, or a tuple of slots (None: not a Tensor)
    region: int = 0  # calls merge as common subexpressions only within one region (a recomputation's own)


class Trace:
    """A recorded program: ``replay(inputs)`` runs its steps on new input Tensors of the same
    signature and returns the function's outputs (the recorded output structure)."""

    # (sink, key) of each value the function handed to the host (opforge/dispatch/side_outputs.py): the
    # outputs are then (value, those values), and opforge.jit delivers them after each replay
    side_targets: tuple = ()
    cuts_gradient: bool = False  # a stop_gradient ran while it recorded (note_gradient_cut)

    def __init__(
        self,
        n_inputs: int,
        steps: list,
        n_slots: int,
        outputs,
        where: str,
        compiled=None,
        graph: bool = True,
        before_replay: tuple = (),
    ):
        self.n_inputs = n_inputs
        self.before_replay = tuple(before_replay)  # refills of its counters (replay_counter), run first
        self.steps = steps  # as recorded: what a tape or a profiler replays, call by call
        self.n_slots = n_slots
        # ("slot", i) / ("const", v) / ("tuple"|"list", [...]) / ("dict", keys, [...]) / ("wrap", rebuild, [spec])
        self.outputs = outputs
        self.where = where
        # compiled (repeated calls merged, elementwise runs fused): what a replay runs, and where its
        # outputs are
        self.program, self.program_outputs = compiled if compiled is not None else (steps, outputs)
        returned = sorted(cse.output_slots(self.program_outputs))
        # the outputs as the native replay gives them back: the returned slots' values, in order
        self._native_outputs = cse.remap_outputs(self.program_outputs, {s: k for k, s in enumerate(returned)})
        self._native = _native_program(self.program, n_slots, n_inputs, self.program_outputs, returned)
        # a GPU program: replayed as one device graph once captured (opforge/dispatch/device_graph.py)
        self.device_graph = device_graph.for_program(self.program) if graph else None

    def __len__(self) -> int:
        return len(self.steps)

    def replay(self, inputs: list):
        for refill in self.before_replay:
            refill()
        if current_interpreter() is not None:
            return self.replay_each(inputs, current_interpreter())  # a tape or a profiler sees every call
        if self.device_graph is not None:
            return self.device_graph.replay(self.run_program, inputs)
        return self.run_program(inputs)

    def run_program(self, inputs: list, each=None):
        """The compiled program on ``inputs``: natively (_C.Program), or its plans from Python calling
        ``each(step)`` before each step where given."""
        if each is None:
            returned = self._native.run(tuple(inputs))
            spec = self._native_outputs
            return returned[0] if spec == _FIRST else _rebuild(returned, spec)
        env = list(inputs)
        env.extend([None] * (self.n_slots - len(env)))
        for step in self.program:
            each(step)
            _store(env, step.outputs, step.plan(_arguments(env, step.sources)))
        return _rebuild(env, self.program_outputs)

    def explain(self) -> str:
        """What the compiler did: the calls recorded, then each step a replay runs (a primitive, or a
        fused kernel with the calls it replaces and the values it writes)."""
        fused = [s for s in self.program if isinstance(s, fusion.FusedStep)]
        updates = epilogue.fused_pairs(self.program)
        merged = len(self.steps) - len(self.program) - sum(len(s.group.ops) - 1 for s in fused) - updates
        native = self._native.native()
        lines = [
            f"{self.where}: {len(self.steps)} calls recorded; {len(self.program)} steps replayed"
            f" ({merged} repeated calls merged;{f' {updates} MatMul updates fused;' if updates else ''}"
            f" {sum(native)} run without entering Python)"
        ]
        if self.device_graph is not None:
            lines.append(f"  ({self.device_graph.explain()})")
        for step, in_c in zip(self.program, native):
            why = "" if in_c else f"  [Python: {_why_python(step)}]"
            if not isinstance(step, fusion.FusedStep):
                lines.append(f"  {step.prim.name}{why}")
            else:
                group = step.group
                shape = "x".join(map(str, group.shape))
                lines.append(
                    f"  fused[{len(group.ops)}] {' '.join(group.ops)} on {group.dtype} {shape} ({group.device.name}):"
                    f" {group.n_inputs} inputs read, {len(group.outputs)} outputs written{_reduced(group)}{why}"
                )
        return "\n".join(lines)

    def replay_each(self, inputs: list, interpreter=EVAL):
        """Replay call by call through ``interpreter`` (a tape or a profiler sees every call), each call
        finding (or building) the plan for its arguments' metas."""
        return replay_steps(self.steps, self.n_slots, self.outputs, inputs, interpreter)


_FIRST = ("slot", 0)  # the common output spec of a native replay: one Tensor


def _why_python(step) -> str:
    """Why a replayed step enters Python (explain)."""
    if isinstance(step, fusion.FusedStep):
        return "a fused kernel, called through ctypes"
    if not isinstance(step.plan, _C.FastPlan):
        if binding.written_positions(step.prim._signature()):
            return "writes a Parameter in place (the plan bumps its version and returns it)"
        constants = [type(s[1]).__name__ for s in step.sources if s[0] == "const" and not isinstance(s[1], Tensor)]
        if any(name not in ("int", "float", "bool", "complex") for name in constants):
            return f"takes a constant argument ({', '.join(sorted(set(constants)))})"
        if any(s[0] == "seq" for s in step.sources):
            return "takes a tuple of Tensors (its plan is called from C++ with the tuple built there)"
        return "a kernel with casts around it, a Python kernel, or another device's"
    return "a constant argument the native step does not take"


def _reduced(group) -> str:
    red = group.reduction
    if red is None:
        return ""
    kind, shape = red.reducer[: -len("Reducer")].lower(), "x".join(map(str, red.shape)) or "one value"
    return f", then {kind} over rows of {red.row} to {shape}"


def same_constant(a, b) -> bool:
    """Whether two constants of a call are the same value (Tensors by metas and bytes)."""
    if a is b:
        return True
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or isinstance(a, Parameter) or a._meta != b._meta:
            return False
        host = a._meta[2].to_host
        return host(a._data).tobytes() == host(b._data).tobytes()
    try:
        return freeze("trace", "constant", a) == freeze("trace", "constant", b)
    except TypeError:
        return False


def replay_steps(steps, n_slots: int, outputs, inputs, interpreter):
    """Run ``steps`` on ``inputs`` call by call through ``interpreter``; the outputs as ``outputs`` says."""
    env = list(inputs)
    env.extend([None] * (n_slots - len(env)))
    for step in steps:
        _store(env, step.outputs, interpreter.process_primitive(step.prim, _arguments(env, step.sources)))
    return _rebuild(env, outputs)


def _argument(env, source):
    kind = source[0]
    if kind == "slot":
        return env[source[1]]
    if kind == "const":
        return source[1]
    return source[1](_argument(env, s) for s in source[2])


def _arguments(env, sources) -> tuple:
    return tuple([_argument(env, s) for s in sources])


def _store(env, outputs, out) -> None:
    if outputs.__class__ is int:
        env[outputs] = out
    elif outputs is not None:
        for slot, value in zip(outputs, out):
            if slot is not None:
                env[slot] = value


def _rebuild(env, spec):
    kind = spec[0]
    if kind == "slot":  # (the common output: one Tensor)
        return env[spec[1]]
    if kind == "const":
        return spec[1]
    if kind == "dict":
        return dict(zip(spec[1], (_rebuild(env, s) for s in spec[2])))
    if kind == "wrap":  # a new wrapper (a sharded Tensor) around this replay's value
        return spec[1](_rebuild(env, spec[2][0]))
    values = [_rebuild(env, s) for s in spec[1]]
    return tuple(values) if kind == "tuple" else values


def _native_program(steps: list, n_slots: int, n_inputs: int, outputs_spec, returned: list):
    """The steps as a ``_C.Program`` (run in C++; a step with a tuple of Tensors calls its plan with the
    tuple built there). Each step releases the slots it reads or writes last (buffer planning: a value's
    memory is reused as soon as nothing later reads it), except the function's inputs and outputs."""
    encoded, last = [], {}
    for i, step in enumerate(steps):
        for slot in _slots_read(step.sources):
            last[slot] = i
        for slot in _written(step.outputs):
            last.setdefault(slot, i)  # written and never read: dropped at once
    kept = set(range(n_inputs)) | cse.output_slots(outputs_spec)
    release: dict = {}
    for slot, i in last.items():
        if slot not in kept:
            release.setdefault(i, []).append(slot)
    for i, step in enumerate(steps):
        plan, sources = step.plan, step.sources
        tensors_only = getattr(plan, "tensors_only", None)
        if tensors_only is not None and _writes_constants(step):  # the in-place kernel, run natively
            plan = tensors_only
        encoded.append((plan, [_encoded(s) for s in sources], step.outputs, sorted(release.get(i, ()))))
    return _C.Program(n_slots, encoded, returned)


def _slots_read(sources):
    for s in sources:
        if s[0] == "slot":
            yield s[1]
        elif s[0] == "seq":
            yield from _slots_read(s[2])


def _encoded(source):
    """A source as _C.Program takes it: a slot's index, ("const", value) or ("seq", is_list, (sources...))."""
    if source[0] == "slot":
        return source[1]
    if source[0] == "seq":
        return ("seq", source[1] is list, tuple(_encoded(s) for s in source[2]))
    return source


def _writes_constants(step) -> bool:
    """Whether every argument the step writes in place is a Parameter the trace holds (checked when it
    was recorded), not a slot that a later call could fill with something else."""
    signature = step.prim._signature() if step.prim is not None else ()
    return all(
        i < len(step.sources) and step.sources[i][0] == "const" and isinstance(step.sources[i][1], Parameter)
        for i in binding.written_positions(signature)
    )


def _written(outputs) -> tuple:
    if outputs.__class__ is int:
        return (outputs,)
    return tuple(s for s in outputs or () if s is not None)


# -- recording ----------------------------------------------------------------------------------


class Tracer(Interpreter):
    """Records every primitive call while a function runs once (eagerly) on its inputs."""

    def __init__(self, inputs: list, where: str, fuse: bool = True, graph: bool = True, graph_breaks: bool = False):
        self.parent = None
        self.where = where
        # with graph_breaks, what the trace cannot record is noted (the first: its message), not raised
        self.graph_breaks, self.broken = graph_breaks, None
        self.fuse, self.graph = fuse, graph
        self.steps: list = []
        self.inputs = list(inputs)
        self.metas: list = [t._meta for t in inputs]  # each slot's meta when it was recorded
        # The live Tensors' slots by id (and their arrays', below). An intermediate Tensor may die while
        # the function runs, as it would eagerly: its entries go with it, so a new object given its id is
        # not taken for it (_forget_when_gone).
        self.slots = {id(t): i for i, t in enumerate(inputs)}
        # aliases share an input's array (placeholders, in a dry run, have none)
        self.arrays = {id(t._data): i for i, t in enumerate(inputs) if not is_placeholder(t)}
        self.n_inputs = len(inputs)
        self.n_slots = len(inputs)
        self.watched: list = []  # weak references whose callbacks drop dead objects' entries
        self.pinned: list = []
        self.before_replay: list = []
        self.cuts_gradient = False  # a stop_gradient ran (note_gradient_cut)
        self.region, self._regions = 0, 0  # the region calls are recorded in (own_region), and the last made

    def __enter__(self):
        if not can_trace():
            raise TraceError(f"A trace of {self.where} starts under an interpreter that is not an observer.")
        super().__enter__()
        tensor_module._set_read_check(self.check_read)
        return self

    def __exit__(self, *exc) -> None:
        tensor_module._set_read_check(None)
        super().__exit__(*exc)

    def process_primitive(self, prim, args: tuple):
        plan = prim._plan_for(args)
        out = plan(args)
        self.steps.append(Step(prim, plan, tuple(self.source(a) for a in args), self.assign(out), self.region))
        return out

    @contextlib.contextmanager
    def own_region(self):
        """Record the calls made inside in a region of their own: the trace compiler never merges them with
        calls outside (a recomputation, which must compute again what the first pass computed)."""
        self._regions += 1
        previous, self.region = self.region, self._regions
        try:
            yield
        finally:
            self.region = previous

    def source(self, value):
        if isinstance(value, Tensor):
            slot = self.slot_of(value)
            return ("const", value) if slot is None else ("slot", slot)
        if value.__class__ in (tuple, list) and any(isinstance(v, Tensor) for v in value):
            return ("seq", value.__class__, tuple(self.source(v) for v in value))
        return ("const", value)

    def slot_of(self, t: Tensor):
        slot = self.slots.get(id(t))
        if slot is None and not isinstance(t, Parameter) and not is_placeholder(t):
            slot = self.arrays.get(id(t._data))  # a view made outside an operator (autodiff's aliases)
            if slot is not None and self.metas[slot] != t._meta:
                slot = None
        return slot

    def assign(self, out):
        if isinstance(out, Tensor):
            return self.new_slot(out)
        if out.__class__ in (tuple, list):
            return tuple(self.new_slot(o) if isinstance(o, Tensor) else None for o in out)
        return None  # a Python value (infer_value): constant for this signature

    def new_slot(self, t: Tensor) -> int:
        slot = self.n_slots
        self.n_slots += 1
        self.slots[id(t)] = slot
        self.metas.append(t._meta)
        self._forget_when_gone(t, self.slots, slot)
        if not isinstance(t, Parameter) and not is_placeholder(t):
            if self.arrays.setdefault(id(t._data), slot) == slot:
                self._forget_when_gone(t._data, self.arrays, slot)
        return slot

    def _forget_when_gone(self, obj, table: dict, slot: int) -> None:
        """Drop ``table[id(obj)]`` when ``obj`` dies (if it still names ``slot``); an object without weak
        references stays alive with the trace instead."""
        key = id(obj)

        def forget(_ref, table=table, key=key, slot=slot):
            if table.get(key) == slot:
                del table[key]

        try:
            self.watched.append(weakref.ref(obj, forget))
        except TypeError:
            self.pinned.append(obj)

    def value_of(self, slot: int) -> Tensor:
        """An input's Tensor, or a placeholder with the meta another slot had when it was recorded."""
        return self.inputs[slot] if slot < self.n_inputs else Tensor._placeholder(*self.metas[slot])

    def swap_tensors(self, updated, old) -> None:
        """``updated[key] = value`` while tracing (``Tensor.__setitem__``): ``updated`` now holds the value
        recorded into ``old``'s slot and ``old`` the value ``updated`` had, so the two trade slots (the later
        calls that read ``updated`` read the new value at a replay). A Tensor made outside the trace (a
        constant of the steps) is replaced by ``old`` in the steps recorded before, which read its old value.
        An input of the traced function cannot be assigned into: a replay does not write the caller's Tensor."""
        su, so = self.slots.get(id(updated)), self.slots.get(id(old))
        if su is not None and su < self.n_inputs:
            raise TraceError(
                f"Tensor.__setitem__ on an input of {self.where} (at {user_frame()}): a replay would not write the "
                f"caller's Tensor. Assign into a copy (y = x * 1; y[...] = v) and return it."
            )
        self.slots.pop(id(updated), None)
        self.slots.pop(id(old), None)
        if so is not None:
            self.slots[id(updated)] = so
            self._forget_when_gone(updated, self.slots, so)
        if su is not None:
            self.slots[id(old)] = su
            self._forget_when_gone(old, self.slots, su)
            return
        # old stays alive with the steps that now read it

        def swap(source):
            if source[0] == "const" and source[1] is updated:
                return ("const", old)
            if source[0] == "seq":
                return ("seq", source[1], tuple(swap(s) for s in source[2]))
            return source

        self.steps = [step._replace(sources=tuple(swap(s) for s in step.sources)) for step in self.steps]

    def output_spec(self, value):
        if isinstance(value, Tensor):
            slot = self.slot_of(value)
            if slot is None:  # a Tensor wrapping a traced one (a sharded value's block): rebuilt around it
                wrapped = getattr(getattr(value, "_data", None), "trace_output", None)
                if wrapped is not None:
                    block, rebuild = wrapped()
                    return ("wrap", rebuild, [self.output_spec(block)])
            spec = ("const", value) if slot is None else ("slot", slot)
            # a parallel network's output block made by this trace: each replay's placed alike (an input passed
            # through keeps whatever place its caller's tensor has)
            where = placement.placement_of(value) if slot is None or slot >= self.n_inputs else None
            return spec if where is None else ("wrap", placement.placer(where[0]), [spec])
        if value.__class__ in (tuple, list):
            return (value.__class__.__name__, [self.output_spec(v) for v in value])
        if value.__class__ is dict:
            return ("dict", list(value), [self.output_spec(v) for v in value.values()])
        return ("const", value)

    def check_read(self, t: Tensor, what: str) -> None:
        """Called by Tensor's methods that read data into Python or write outside an operator."""
        if what == "Parameter.set_data" or isinstance(t, Parameter) or self.slot_of(t) is not None:
            if self.graph_breaks:
                if self.broken is None:
                    self.broken = f"{what} on a Tensor inside {self.where} (at {user_frame()})"
                return
            raise TraceError(
                f"{what} on a Tensor inside {self.where} (at {user_frame()}): a trace records operators, "
                f"and this reads or writes data outside them, so a replay would reuse the value of the first "
                f"call. Compute it with operators, pass it as an argument, or call the function without jit."
            )

    def finish(self, value) -> Trace:
        outputs = self.output_spec(value)
        compiled = self.compile(outputs)
        trace = Trace(
            self.n_inputs, self.steps, self.n_slots, outputs, self.where, compiled, self.graph, self.before_replay
        )
        trace.cuts_gradient = self.cuts_gradient
        return trace

    def compile(self, outputs):
        """(program, its outputs) from the compiler's passes, or None without them."""
        if not self.fuse:
            return None
        steps, merged = cse.eliminate(self.steps)
        outputs = cse.remap_outputs(outputs, merged)
        steps = epilogue.fuse_updates(steps, outputs, self.value_of)
        return fusion.fuse(steps, self.metas.__getitem__, outputs), outputs


def replay_counter(advance, device: str):
    """While a trace records: a 0-d int64 Tensor on ``device`` holding ``advance()`` now, and refilled with
    the next ``advance()`` before each replay of the trace (a counter the replays move on, as a Python
    counter moves on at each eager call: ``nn.Dropout``'s step, read by ``DropoutExt``). None when no trace
    records on this thread."""
    tracer = _recording()
    if tracer is None:
        return None
    counter = Tensor(np.array(advance(), np.int64), device=device)
    target = get_device(device)

    def refill():
        target.write(counter._data, np.array(advance(), np.int64))

    tracer.before_replay.append(refill)
    return counter


def note_gradient_cut() -> None:
    """``stop_gradient`` ran while a trace records: its output is its input's array (no step), so a replay
    under a tape would let gradients through it; such a trace is not replayed under a tape (``opforge.jit``
    runs the function eagerly there instead)."""
    tracer = _recording()
    if tracer is not None:
        tracer.cuts_gradient = True


def _recording() -> Tracer | None:
    """The Tracer recording on this thread, if any."""
    interpreter = current_interpreter()
    return next((i for i in interpreter.enclosing() if isinstance(i, Tracer)), None) if interpreter else None


def tracing() -> bool:
    """Whether a trace is recording on this thread (Python state changed now is not replayed)."""
    return _recording() is not None


def can_trace() -> bool:
    """Whether a trace may start on this thread: no interpreter is active but observers (a profiler)."""
    interpreter = current_interpreter()
    return interpreter is None or all(i.observer for i in interpreter.enclosing())
