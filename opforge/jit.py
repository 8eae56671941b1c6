"""``opforge.jit``: trace a function (or a Cell) once per input signature, replay it after.

``jit(fn)`` returns a ``JitFunction``. Its first call with a given signature (the Tensors' dtypes,
shapes and devices, the other arguments by value, a Cell's training flag) runs ``fn`` once under a
``Tracer`` (``opforge/dispatch/trace.py``): every primitive call is inferred, selected and recorded
with its plan. Later calls with that signature replay the recorded plans without running ``fn``'s
Python. A new signature traces again; at most ``max_traces`` traces are kept (least recently used
first out). ``set_context(mode=GRAPH_MODE)`` makes every top-level ``Cell`` call go through a
``JitFunction`` of its ``construct``, as MindSpore's graph mode compiles a Cell.

Under a tape or a profiler (a gradient of a jitted function, ``opforge profile``) a recorded trace
replays through that interpreter, so it records or times each call; without a trace for the
signature, ``fn`` runs eagerly under it, as it does under a tape for a trace in which ``stop_gradient``
ran (that cut is no recorded call a tape could see).

A function that does what a trace cannot record (reads a traced Tensor's data into Python, as an ``if`` on
a Tensor does; writes data outside operators) is a graph break, as MindSpore's ``fullgraph=False``: its
first run finishes eagerly (its result stands), a ``GraphBreakWarning`` names the line once, and later
calls with that signature run it eagerly (in GRAPH_MODE the cells it calls are still traced, each its own
graph). ``jit(fn, fullgraph=True)`` raises ``TraceError`` there instead.

``JitFunction.lower(*specs)`` is the shape-only dry run: the outputs' shapes and dtypes from
``Tensor(shape=..., dtype=...)`` placeholders, with no kernel run (``opforge.dispatch.abstract``).
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections import OrderedDict

from opforge import context
from opforge.dispatch import sharding, side_outputs, symbolic
from opforge.dispatch.abstract import eval_shape
from opforge.dispatch.interpreter import current_interpreter
from opforge.dispatch.plan import freeze
from opforge.dispatch.trace import GraphBreakWarning, TraceError, Tracer, can_trace, user_stacklevel
from opforge.jit_config import check_jit_config
from opforge.kernels import registry
from opforge.parallel_context import operator_parallel, optimizer_parallel
from opforge.tensor import Tensor

__all__ = ["jit", "JitFunction", "GraphBreakWarning", "TraceError", "GRAPH_MODE", "PYNATIVE_MODE"]

GRAPH_MODE = context.GRAPH_MODE
PYNATIVE_MODE = context.PYNATIVE_MODE


_META = operator.attrgetter("_meta")


def _flatten(value, tensors: list):
    """The signature key of one argument; its Tensors appended to ``tensors`` in order."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return value._meta
    cls = value.__class__
    if cls in (tuple, list):
        return (cls, tuple([_flatten(v, tensors) for v in value]))
    if cls is dict:
        return (dict, tuple((k, _flatten(v, tensors)) for k, v in value.items()))
    training = getattr(value, "training", None)  # a Cell passed as an argument: its mode too
    if isinstance(training, bool):
        return ("object", id(value), training)
    return freeze("jit", "argument", value)


def _substituted(value, tensors):
    """``value`` with its Tensors replaced, in ``_flatten``'s order, by the next of ``tensors``."""
    if isinstance(value, Tensor):
        return next(tensors)
    cls = value.__class__
    if cls in (tuple, list):
        return cls([_substituted(v, tensors) for v in value])
    if cls is dict:
        return {k: _substituted(v, tensors) for k, v in value.items()}
    return value


class JitFunction:
    """A function traced once per input signature and replayed (see the module docstring)."""

    def __init__(
        self,
        fn,
        *,
        max_traces: int = 8,
        state=None,
        input_signature=None,
        fuse: bool = True,
        device_graph: bool = True,
        fullgraph: bool = False,
        name: str | None = None,
    ):
        if not callable(fn):
            raise TypeError(f"For 'jit', the 'function' must be callable, but got {type(fn).__name__}.")
        if isinstance(max_traces, bool) or not isinstance(max_traces, int) or max_traces < 1:
            raise ValueError(f"For 'jit', the 'max_traces' must be an int >= 1, but got {max_traces!r}.")
        self.fn = fn
        self.name = name  # what messages call it (a Cell's construct by its class); default: fn's qualified name
        self.max_traces = max_traces
        self.fuse, self.device_graph = bool(fuse), bool(device_graph)
        self.fullgraph = bool(fullgraph)  # False: graph breaks run eagerly (_Eager); True: they raise TraceError
        self._warned: set = set()  # the graph breaks warned about
        self._state = state if state is not None else _default_state(fn)
        self._traces: OrderedDict = OrderedDict()
        self._specs = tuple(input_signature) if input_signature is not None else None
        self._symbolic: dict = {}  # dynamic key -> its SymbolicProgram (None: its sizes change the program)
        self.traced = 0  # runs of fn traced (a growing count means the signature keeps changing)
        self.outermost = False  # fn is itself a parallel network's outermost call (a parallel Cell's trace)
        self._parallel = None  # the trace of fn as the outermost call, once its first call has laid weights out
        functools.update_wrapper(self, fn, updated=())

    @property
    def where(self) -> str:
        return f"jit({self.name or getattr(self.fn, '__qualname__', type(self.fn).__name__)})"

    def _key(self, args: tuple, kwargs: dict):
        if not kwargs:  # the common call: Tensors only, keyed by their metas
            try:
                return (tuple(map(_META, args)), self._state()), args
            except AttributeError:
                pass
        tensors: list = []
        key = (_flatten(args, tensors), _flatten(kwargs, tensors) if kwargs else None, self._state())
        return key, tensors

    def _dynamic(self, tensors) -> tuple | None:
        """With input specs that leave dims unknown (``input_signature``, ``Cell.set_inputs``): the key
        of the call with those dims as -1, and each input's unknown dims; else None."""
        specs = self._specs if self._specs is not None else _cell_inputs(self.fn)
        if not specs or len(specs) != len(tensors):
            return None
        key, unknown = [], []
        for spec, t in zip(specs, tensors):
            dims = _unknown_dims(spec)
            dtype, shape, device = t._meta
            if not dims or len(spec.shape) != len(shape):
                dims = frozenset()
            unknown.append(dims)
            key.append((dtype, tuple(-1 if i in dims else d for i, d in enumerate(shape)), device))
        if not any(unknown):
            return None
        return (tuple(key), self._state()), unknown

    def __call__(self, *args, **kwargs):
        if not self.outermost and (operator_parallel() or optimizer_parallel()) and not sharding.outer_call_active():
            return self._parallel_call(args, kwargs)
        key, tensors = self._key(args, kwargs)
        trace = self._traces.get(key)
        if trace is not None and trace.version == registry.version():  # (else a kernel was registered since)
            return self._run_kept(key, trace, tensors, args, kwargs)
        aliases = _aliases(tensors)
        if aliases:  # one Tensor at several positions: a trace of its own, whose steps read one slot for them
            key = (key, aliases)
            trace = self._traces.get(key)
            if trace is not None and trace.version == registry.version():
                return self._run_kept(key, trace, tensors, args, kwargs)
        dynamic = None
        if not aliases and (self._specs is not None or hasattr(self.fn, "__self__")):
            dynamic = self._dynamic(tensors)
        if dynamic is not None and current_interpreter() is None:
            program = self._symbolic.get(dynamic[0])
            offsets = program.symbols.offsets(tensors) if program is not None else None
            if offsets is not None and program.version == registry.version():
                trace, value = program.instantiate(list(tensors), offsets, self.where, self.fuse, self.device_graph)
                self._keep(key, trace)
                return value
        if not can_trace():  # under a tape: fn runs under it (no trace starts there)
            return self.fn(*args, **kwargs)
        return self._trace(key, tensors, args, kwargs, dynamic)

    def _parallel_call(self, args: tuple, kwargs: dict):
        """Called in a parallel mode outside any parallel network (MindSpore's functional training step, a jitted
        function of a network, its loss and its optimizer): fn is the outermost call (``sharding.run_outermost``).
        Its first call runs eagerly (it lays the weights and states out, splitting them in place); the later ones
        replay a trace of each rank's local program, as a parallel Cell's calls do."""
        if self._parallel is None:
            out = self._run_outermost(*args, **kwargs)
            self._parallel = JitFunction(
                self._run_outermost,
                max_traces=self.max_traces,
                fuse=self.fuse,
                device_graph=self.device_graph,
                fullgraph=self.fullgraph,
            )
            self._parallel.outermost = True
            return out
        return self._parallel(*args, **kwargs)

    def _run_outermost(self, *args, **kwargs):
        return sharding.run_outermost(self.fn, args, kwargs, getattr(self.fn, "__name__", "jit"))

    def _run_kept(self, key, trace, tensors: list, args: tuple, kwargs: dict):
        """The call by the trace kept for its signature, or eagerly: a graph break, or a trace in which
        ``stop_gradient`` ran called under a tape (that cut is no step a tape could see)."""
        self._traces.move_to_end(key)
        if trace.__class__ is _Eager or (trace.cuts_gradient and not can_trace()):
            return self.fn(*args, **kwargs)
        return _replayed(trace, tensors)

    def _trace(self, key, tensors: list, args: tuple, kwargs: dict, dynamic=None):
        tracer = Tracer(tensors, self.where, fuse=self.fuse, graph=self.device_graph, graph_breaks=not self.fullgraph)
        with tracer, side_outputs.capturing() as emitted:
            value = self.fn(*args, **kwargs)
        if tracer.broken is not None:  # it ran eagerly to its end: the value stands, later calls run eagerly
            side_outputs.deliver(tuple((sink, k) for sink, k, _ in emitted), tuple(v for _, _, v in emitted))
            self._graph_break(key, tracer.broken)
            return value
        if emitted:  # the values handed to the host become extra outputs, handed over again by each replay
            values = tuple(v for _, _, v in emitted)
            trace = tracer.finish((value, values))
            trace.side_targets = tuple((sink, key) for sink, key, _ in emitted)
            side_outputs.deliver(trace.side_targets, values)
            dynamic = None  # (no symbolic program: it would not hand them over)
        else:
            trace = tracer.finish(value)
        trace.version = registry.version()
        self._keep(key, trace)
        self.traced += 1
        if dynamic is not None and dynamic[0] not in self._symbolic:
            self._symbolic[dynamic[0]] = symbolic.derive(
                trace, list(tensors), dynamic[1], functools.partial(self._dry_run, args, kwargs), trace.version
            )
        return value

    def _graph_break(self, key, reason: str) -> None:
        self._keep(key, _Eager(reason, registry.version()))
        if reason not in self._warned:
            self._warned.add(reason)
            warnings.warn(
                f"{reason} reads or writes data outside operators, which a trace cannot record: a graph break. "
                f"{self.where} runs eagerly for inputs like these (in GRAPH_MODE the cells it calls are still "
                f"traced); jit(fullgraph=True) raises TraceError there instead.",
                GraphBreakWarning,
                stacklevel=user_stacklevel(),
            )

    def _dry_run(self, args: tuple, kwargs: dict, placeholders: list):
        """``fn`` called with ``placeholders`` in place of its Tensor arguments (in ``_flatten``'s order)."""
        args, kwargs = _substituted((args, kwargs), iter(placeholders))
        return self.fn(*args, **kwargs)

    def _keep(self, key, trace) -> None:
        self._traces[key] = trace
        if len(self._traces) > self.max_traces:
            self._traces.popitem(last=False)

    def traces(self) -> list:
        """The kept traces, least recently used first (not the signatures that run eagerly: graph breaks)."""
        return [t for t in self._traces.values() if t.__class__ is not _Eager]

    def explain(self) -> str:
        """What the trace compiler did to the most recent trace (``Trace.explain``), and whether one
        symbolic trace serves every size of the unknown dims (``opforge/dispatch/symbolic.py``)."""
        if not self._traces:
            return f"{self.where}: not traced yet"
        lines = [next(reversed(self._traces.values())).explain()]
        for program in self._symbolic.values():
            lines.append(f"  dynamic dims: {program.describe()}" if program else "  dynamic dims: a trace per size")
        return "\n".join(lines)

    def clear_cache(self) -> None:
        self._traces.clear()
        self._symbolic.clear()

    def lower(self, *specs, **kwargs):
        """The outputs (placeholder Tensors: shapes and dtypes) for inputs like ``specs``, without
        running a kernel (``opforge.dispatch.abstract.eval_shape``)."""
        return eval_shape(self.fn, *specs, **kwargs)

    def __get__(self, obj, objtype=None):
        """``@jit`` on a method: one JitFunction per instance, kept on it."""
        if obj is None:
            return self
        name = f"_jit_{getattr(self.fn, '__name__', 'method')}"
        bound = obj.__dict__.get(name)
        if bound is None:
            bound = JitFunction(
                self.fn.__get__(obj, objtype),
                max_traces=self.max_traces,
                fuse=self.fuse,
                device_graph=self.device_graph,
                fullgraph=self.fullgraph,
            )
            obj.__dict__[name] = bound
        return bound

    def __repr__(self) -> str:
        return f"<{self.where}: {len(self._traces)} trace(s)>"


class _Eager:
    """Kept in place of a trace for a signature whose trace broke (``reason``): its calls run eagerly."""

    cuts_gradient = False

    def __init__(self, reason: str, version):
        self.reason, self.version = reason, version

    def explain(self) -> str:
        return f"{self.reason}: a graph break; these inputs run eagerly"


def _replayed(trace, tensors: list):
    """The trace's value for ``tensors``; the values its function handed to the host go to their sinks."""
    out = trace.replay(tensors)
    if not trace.side_targets:
        return out
    value, emitted = out
    side_outputs.deliver(trace.side_targets, emitted)
    return value


def _aliases(tensors) -> tuple:
    """``(first, later)`` position pairs of a Tensor given at several positions."""
    first: dict = {}
    pairs = []
    for i, t in enumerate(tensors):
        j = first.setdefault(id(t), i)
        if j != i:
            pairs.append((j, i))
    return tuple(pairs)


def _unknown_dims(spec) -> frozenset:
    """The positions of a spec's unknown dims (None or negative)."""
    if not isinstance(spec, Tensor):
        return frozenset()
    return frozenset(i for i, d in enumerate(spec.shape) if d is None or d < 0)


def _cell_inputs(fn):
    """The input specs ``Cell.set_inputs`` gave the Cell whose construct ``fn`` is, if any."""
    get_inputs = getattr(getattr(fn, "__self__", None), "get_inputs", None)
    return get_inputs() if callable(get_inputs) else None


def _default_state(fn):
    owner = getattr(fn, "__self__", fn)  # a Cell's construct, or a Cell
    if isinstance(getattr(owner, "training", None), bool):
        return lambda: owner.training
    return _no_state


def _no_state():
    return None


def jit(function=None, *, max_traces: int = 8, fuse: bool = True, device_graph: bool = True, **options):
    """Trace ``function`` once per input signature and replay it (MindSpore's ``mindspore.jit``):
    ``jit(fn)``, ``@jit`` or ``@jit(max_traces=4)``, on functions, methods (``construct``) and Cells.
    ``fullgraph=True`` raises ``TraceError`` where the function does what a trace cannot record (by default such
    a graph break runs it eagerly, with a ``GraphBreakWarning``). The other MindSpore compile options
    (``jit_level``, ``capture_mode``, ``dynamic``,
    ``backend``, ``input_signature``, ``jit_config``: a ``JitConfig`` or a dict of its options, checked and
    kept as ``jit_config_dict``) are accepted; opforge always traces (capture by running).
    ``fuse=False`` turns elementwise fusion off (``opforge/dispatch/fusion.py``): the replay then
    runs every recorded kernel; results are the same either way. On the GPU a trace is captured as one
    device graph after its first replays (``opforge/dispatch/device_graph.py``); ``device_graph=False``
    keeps launching kernel by kernel."""
    unknown = set(options) - _MINDSPORE_OPTIONS
    if unknown:
        raise TypeError(f"For 'jit', unknown options {sorted(unknown)}; MindSpore's are {sorted(_MINDSPORE_OPTIONS)}.")
    signature = options.get("input_signature")
    config = check_jit_config("jit", options.get("jit_config"))  # checked and kept (jit_config_dict)
    kwargs = {"max_traces": max_traces, "input_signature": signature, "fuse": fuse, "device_graph": device_graph,
              "fullgraph": bool(options.get("fullgraph", False))}  # fmt: skip

    def make(fn) -> JitFunction:
        jitted = JitFunction(fn, **kwargs)
        jitted.jit_config_dict = None if config is None else dict(config.jit_config_dict)
        return jitted

    if function is None:
        return make
    return make(function)


_MINDSPORE_OPTIONS = frozenset(
    {"jit_level", "capture_mode", "dynamic", "fullgraph", "backend", "input_signature", "mode", "jit_config"}
)
