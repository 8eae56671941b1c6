"""Symbolic traces: one trace of a function serves every size of its unknown dims.

``opforge.jit`` with ``input_signature`` (or ``Cell.set_inputs``) holding ``None`` dims traces the
first call on its inputs as usual (a concrete ``Trace``), then runs the function again as shape-only
dry runs (``abstract_call``: inference, no kernel, nothing allocated) with the unknown dims set to
other sizes. Unknown dims of equal size at the first call are one *symbol* (the batch dim shared by
the data and the labels), as a graph compiler's symbolic shapes would tie them.

When every run records the same calls, each constant that differs between them (a shape given to
``Reshape``, a count from ``x.shape[0]``) is fitted as an affine function of the symbols: one dry run
per symbol moves that symbol alone, and a last run moves them all and checks the fit. The result is a
``SymbolicProgram``. A call of another size *instantiates* it: the constants are computed from that
call's sizes and the recorded calls replayed under a ``Tracer``, so each size gets its own compiled
trace (common subexpressions, fusion, native replay) without running the function's Python again.

A function whose runs differ (a branch on a size, a constant that is not affine in the sizes, a
Tensor built from a shape outside an operator, data read into Python) has no symbolic program and
keeps one trace per size, as before: correct, just traced more often.
"""

from __future__ import annotations

from typing import NamedTuple

from opforge import _C
from opforge.dispatch.abstract import abstract_call
from opforge.dispatch.trace import Step, Trace, Tracer, replay_steps, same_constant
from opforge.tensor import Parameter, Tensor, is_placeholder

__all__ = ["SymbolicProgram", "derive"]


class Symbols(NamedTuple):
    """The unknown dims of a call: the size of each symbol at the first call, and where each symbol
    sits (``(input index, dim)`` per unknown dim, with its symbol's index)."""

    bases: tuple
    positions: tuple  # ((input, dim, symbol), ...)

    @classmethod
    def of(cls, tensors, unknown) -> Symbols:
        """``unknown[i]``: the positions of input i's unknown dims (sizes taken from ``tensors``)."""
        bases: list = []
        positions = []
        for i, (t, dims) in enumerate(zip(tensors, unknown)):
            for d in sorted(dims):
                size = t.shape[d]
                if size not in bases:
                    bases.append(size)
                positions.append((i, d, bases.index(size)))
        return cls(tuple(bases), tuple(positions))

    def offsets(self, tensors) -> tuple | None:
        """How far each symbol moved in a call (None: dims of one symbol disagree, or a dim was not
        symbolic at the first call)."""
        offsets: list = [None] * len(self.bases)
        for i, d, s in self.positions:
            moved = tensors[i].shape[d] - self.bases[s]
            if offsets[s] is None:
                offsets[s] = moved
            elif offsets[s] != moved:
                return None
        return tuple(offsets)

    def placeholders(self, tensors, offsets: tuple) -> list:
        """Data-free inputs like ``tensors`` with each symbol moved by ``offsets``."""
        shapes = [list(t.shape) for t in tensors]
        for i, d, s in self.positions:
            shapes[i][d] = self.bases[s] + offsets[s]
        return [Tensor._placeholder(t._meta[0], tuple(shape), t._meta[2]) for t, shape in zip(tensors, shapes)]


def probe_offsets(n_symbols: int) -> list:
    """The dry runs' moves: symbol k alone by k + 2 (sizes stay above 1, which broadcasts), then every
    symbol at once by other amounts (the check of the fit)."""
    alone = [tuple(k + 2 if j == k else 0 for j in range(n_symbols)) for k in range(n_symbols)]
    return alone + [tuple(2 * k + 5 for k in range(n_symbols))]


# -- fitting the constants ----------------------------------------------------------------------


class _Differs(Exception):
    """The runs recorded different programs: no symbolic program."""


class Affine(NamedTuple):
    """A number constant ``base + sum(coefficients[k] * offsets[k])``, of the base's type."""

    base: object
    coefficients: tuple

    def at(self, offsets: tuple):
        return type(self.base)(self.base + sum(c * o for c, o in zip(self.coefficients, offsets)))


class Sequence(NamedTuple):
    """A tuple or list constant some of whose items depend on the sizes."""

    kind: type
    items: tuple

    def at(self, offsets: tuple):
        return self.kind(at(item, offsets) for item in self.items)


class Filled(NamedTuple):
    """A Tensor constant holding one value, of a shape that depends on the sizes (a bprop's ones)."""

    meta: tuple  # (dtype, shape template, device)
    value: object

    def at(self, offsets: tuple):
        dtype, shape, device = self.meta
        return Tensor._from_array(device.full(at(shape, offsets), self.value, dtype.np_dtype), dtype, device)


_TEMPLATES = (Affine, Sequence, Filled)


def at(template, offsets: tuple):
    """A fitted constant's value for a call whose symbols moved by ``offsets``."""
    return template.at(offsets) if isinstance(template, _TEMPLATES) else template


def _fit(values: list, moves: list):
    """One template for a constant seen once per run: ``values[0]`` at the first call, ``values[k]``
    in the run moved by ``moves[k - 1]``; the last run checks the fit of the others."""
    first = values[0]
    if all(_same(first, v) for v in values[1:]):
        return first
    kind = type(first)
    if any(type(v) is not kind for v in values):
        raise _Differs
    if kind in (tuple, list) and all(len(v) == len(first) for v in values):
        return Sequence(kind, tuple(_fit([v[i] for v in values], moves) for i in range(len(first))))
    if issubclass(kind, Tensor):
        return _fit_filled(values, moves)
    if kind not in (int, float):  # (bool is its own type: a flag is never fitted)
        raise _Differs
    fitted = Affine(first, tuple(_slope(first, values[k + 1], moves[k][k], kind) for k in range(len(moves) - 1)))
    if not _close(fitted.at(moves[-1]), values[-1]):
        raise _Differs
    return fitted


def _fit_filled(values: list, moves: list) -> Filled:
    """Tensors of one value whose shapes follow the sizes."""
    first = values[0]
    if any(isinstance(v, Parameter) or is_placeholder(v) for v in values):
        raise _Differs
    fills = set()
    for v in values:
        data = v._meta[2].to_host(v._data)
        if v._meta[0] != first._meta[0] or v._meta[2] != first._meta[2] or data.size == 0:
            raise _Differs
        flat = data.reshape(-1)
        if not (flat == flat[0]).all():
            raise _Differs
        fills.add(flat[0].item())
    if len(fills) != 1:
        raise _Differs
    shape = _fit([tuple(v.shape) for v in values], moves)
    return Filled((first._meta[0], shape, first._meta[2]), fills.pop())


def _slope(first, moved, by: int, kind: type):
    change = moved - first
    if kind is int:
        if change % by:
            raise _Differs
        return change // by
    return change / by


def _close(predicted, seen) -> bool:
    if isinstance(seen, int):
        return predicted == seen
    return abs(predicted - seen) <= 1e-12 * max(abs(seen), 1.0)


def _same(a, b) -> bool:
    if isinstance(a, Parameter) or isinstance(b, Parameter):
        return a is b
    if is_placeholder(a) or is_placeholder(b):
        return False
    return same_constant(a, b)


def _fit_source(sources: list, moves: list):
    kind = sources[0][0]
    if any(s[0] != kind or len(s) != len(sources[0]) for s in sources):
        raise _Differs
    if kind == "slot":
        if any(s[1] != sources[0][1] for s in sources):
            raise _Differs
        return sources[0]
    if kind == "const":
        return ("const", _fit([s[1] for s in sources], moves))
    if any(s[1] is not sources[0][1] for s in sources):  # ("seq", type, sources)
        raise _Differs
    return ("seq", sources[0][1], _fit_sources([s[2] for s in sources], moves))


def _fit_sources(runs: list, moves: list) -> tuple:
    if any(len(r) != len(runs[0]) for r in runs):
        raise _Differs
    return tuple(_fit_source([r[i] for r in runs], moves) for i in range(len(runs[0])))


def _fit_output(specs: list, moves: list):
    kind = specs[0][0]
    if any(s[0] != kind for s in specs):
        raise _Differs
    if kind in ("slot", "const"):
        return _fit_source(specs, moves)
    if kind == "dict" and any(s[1] != specs[0][1] for s in specs):
        raise _Differs
    items = [s[-1] for s in specs]
    if any(len(i) != len(items[0]) for i in items):
        raise _Differs
    fitted = [_fit_output([i[k] for i in items], moves) for k in range(len(items[0]))]
    return (*specs[0][:-1], fitted)


def _fit_steps(runs: list, moves: list) -> list:
    """The first run's steps with their constants fitted over every run (each a list of Steps)."""
    if any(len(r) != len(runs[0]) for r in runs):
        raise _Differs
    steps = []
    for i, step in enumerate(runs[0]):
        for other in (r[i] for r in runs[1:]):
            if type(other.prim) is not type(step.prim) or _C.attrs_key(other.prim) != _C.attrs_key(step.prim):
                raise _Differs
            if other.outputs != step.outputs:
                raise _Differs
        steps.append(step._replace(plan=None, sources=_fit_sources([r[i].sources for r in runs], moves)))
    return steps


# -- the dry runs -------------------------------------------------------------------------------


class ShapeTracer(Tracer):
    """Records a function's calls like a ``Tracer``, running only their inference (``abstract_call``)."""

    def process_primitive(self, prim, args: tuple):
        out, _ = abstract_call(prim, args)
        self.steps.append(Step(prim, None, tuple(self.source(a) for a in args), self.assign(out), self.region))
        return out


class SymbolicProgram:
    """A trace's calls with their size-dependent constants as functions of the symbols."""

    def __init__(self, symbols: Symbols, trace: Trace, steps: list, outputs, version):
        self.symbols = symbols
        self.n_slots = trace.n_slots
        self.steps = steps
        self.outputs = outputs
        self.version = version  # the kernel registry's, as a Trace's
        self.fitted = sum(_depends(s.sources) for s in steps) + _depends((outputs,))

    def instantiate(self, tensors: list, offsets: tuple, where: str, fuse: bool, graph: bool = True):
        """Run the program on ``tensors`` (symbols moved by ``offsets``) under a ``Tracer``: returns the
        compiled ``Trace`` of this size and the call's outputs."""
        steps = [s._replace(plan=None, sources=_sources_at(s.sources, offsets)) for s in self.steps]
        tracer = Tracer(list(tensors), where, fuse=fuse, graph=graph)
        with tracer:
            value = replay_steps(steps, self.n_slots, _source_at(self.outputs, offsets), tensors, tracer)
        trace = tracer.finish(value)
        trace.version = self.version
        return trace, value

    def describe(self) -> str:
        sizes = ", ".join(f"s{k}={b}" for k, b in enumerate(self.symbols.bases))
        return f"one symbolic trace serves every size ({sizes} at the first call; {self.fitted} constants fitted)"


def _depends(sources) -> int:
    count = 0
    for s in sources:
        if s[0] == "const" and isinstance(s[1], _TEMPLATES):
            count += 1
        elif s[0] in ("seq", "tuple", "list", "dict", "wrap"):
            count += _depends(s[-1])
    return count


def _source_at(source, offsets: tuple):
    kind = source[0]
    if kind == "slot":
        return source
    if kind == "const":
        return ("const", at(source[1], offsets))
    return (*source[:-1], _sources_at(source[-1], offsets))  # "seq", and the outputs' "tuple"/"list"/"dict"


def _sources_at(sources, offsets: tuple):
    return type(sources)(_source_at(s, offsets) for s in sources)


def derive(trace: Trace, tensors: list, unknown: list, dry_run, version) -> SymbolicProgram | None:
    """The symbolic program of ``trace`` (recorded on ``tensors``), or None when the function's calls
    or constants do not follow its sizes affinely. ``unknown[i]`` holds input i's unknown dims;
    ``dry_run(placeholders, tracer)`` calls the function on ``placeholders`` under ``tracer`` and
    returns what it returns."""
    symbols = Symbols.of(tensors, unknown)
    if not symbols.bases or trace.before_replay:  # (a dry run would move its counters on)
        return None
    moves = probe_offsets(len(symbols.bases))
    runs, outputs = [trace.steps], [trace.outputs]
    for offsets in moves:
        placeholders = symbols.placeholders(tensors, offsets)
        tracer = ShapeTracer(placeholders, trace.where)
        try:
            with tracer:
                value = dry_run(placeholders)
        except Exception:  # (data read into Python, a shape check a size fails: no symbolic program)
            return None
        runs.append(tracer.steps)
        outputs.append(tracer.output_spec(value))
    try:
        steps = _fit_steps(runs, moves)
        fitted_outputs = _fit_output(outputs, moves)
    except _Differs:
        return None
    return SymbolicProgram(symbols, trace, steps, fitted_outputs, version)
