"""Elementwise fusion, a pass of the trace compiler: runs of recorded elementwise calls become one
call of a kernel generated from their functors (``opforge/kernels/fusion.py``; the CPU's in
``opforge/kernels/cpu/fused.py``).

A run is a sequence of consecutive steps, each an operator whose built-in kernel applies one
functor element by element (ReLU, Exp, Add, Mul, ..., the activations' gradients; or a user's
operator declared with ``opforge.kernels.fusion.register_functor``), all with outputs
of one dtype, shape and device, with at least ``MIN_ELEMENTS`` elements or at least ``MIN_SMALL_RUN``
steps (a short run on few elements costs more to compile than it saves; a long one replaces many
launches by one). Their inputs have that shape, or broadcast to
it from its trailing dims (a bias row, a per-channel scale: one such row length per run), or are
single values (a 1-element Tensor, a weak Python scalar). The
fused step reads the run's inputs once and writes only the values read after it (by a later step
or as the function's outputs); the values between never reach memory. A value is computed by the same
functor in the same dtype as the unfused kernel computes it; on the CPU a product feeding a sum may be
contracted into one fused multiply-add across the two operators (as inside a functor), so such chains
agree with the unfused ones to within the rounding of one operation, not bit for bit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from opforge.dispatch.cse import readers
from opforge.kernels.fusion import (
    FUSED_CTYPES,
    Expression,
    FusedGroup,
    Reduction,
    elementwise_functor,
    fuser_for,
    fuses_reductions,
)
from opforge.tensor import Tensor

__all__ = ["MIN_ELEMENTS", "MIN_SMALL_RUN", "fuse", "FusedStep"]

MIN_ELEMENTS = 4096
MIN_SMALL_RUN = 8


class FusedStep(NamedTuple):
    """A step of the compiled program: ``plan(args)`` runs the fused kernel on the Tensors of
    ``sources``; ``outputs`` are the slots it writes; ``group`` says what was fused."""

    prim: object  # None: not a primitive call (a tape replays the original steps)
    plan: object
    sources: tuple
    outputs: object
    group: FusedGroup


class _Fusable(NamedTuple):
    functor: tuple  # (the C++ constructing it, the C++ defining a user's functor or "")
    key: tuple  # (dtype, shape, device): one per run
    row: int | None  # the length of the rows its broadcast inputs repeat, if any


def period(shape, full) -> int | None:
    """How many elements of ``shape`` repeat along ``full`` when it broadcasts from its trailing dims
    (all of them for ``full`` itself, 1 for a single value), or None when it does not broadcast so."""
    shape, full = tuple(shape), tuple(full)
    if shape == full:
        return math.prod(full)
    while shape and shape[0] == 1:
        shape = shape[1:]
    if len(shape) <= len(full) and full[len(full) - len(shape) :] == shape:
        return math.prod(shape)
    return None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fusable(step, meta_of) -> _Fusable | None:
    """What makes ``step`` part of a run, or None."""
    if step.prim is None or step.outputs.__class__ is not int:
        return None
    dtype, shape, device = meta_of(step.outputs)
    if dtype not in FUSED_CTYPES or fuser_for(device.name) is None:
        return None
    found = elementwise_functor(step.prim.name, dtype, step.prim.attrs)
    if found is None or found[1] != len(step.sources):
        return None
    n, rows = math.prod(shape), set()
    for source in step.sources:
        if source[0] == "const" and _number(source[1]):
            continue
        if source[0] not in ("slot", "const") or (source[0] == "const" and not isinstance(source[1], Tensor)):
            return None
        t_dtype, t_shape, t_device = meta_of(source[1]) if source[0] == "slot" else source[1]._meta
        repeat = period(t_shape, shape)
        if t_dtype != dtype or t_device is not device or repeat is None:
            return None
        if repeat not in (1, n):
            rows.add(repeat)
    if len(rows) > 1:
        return None
    return _Fusable((found[0], found[2]), (dtype, shape, device), rows.pop() if rows else None)


def _runs(steps, meta_of) -> list:
    """``[(start, stop, [functor per step], key, reduction)]``: the maximal runs of two or more fusable
    steps, and of one or more followed by a reduction of one of their values that the backend fuses
    (``reduction``: ``(Reduction, the slot it reads)``, the reduction being ``steps[stop - 1]``)."""
    runs, start, functors, key, row = [], None, [], None, None
    for i, step in enumerate([*steps, None]):
        f = _fusable(step, meta_of) if step is not None else None
        rows_agree = f is not None and (row is None or f.row is None or row == f.row)
        if f is not None and start is not None and f.key == key and rows_agree:
            functors.append(f.functor)
            row = row or f.row
            continue
        if start is not None:
            reduction = _reduction(step, key, {s.outputs for s in steps[start:i]}, meta_of) if step else None
            big = math.prod(key[1]) >= MIN_ELEMENTS
            if reduction is not None and big:
                runs.append((start, i + 1, functors, key, reduction))
            elif i - start >= (2 if big else MIN_SMALL_RUN):
                runs.append((start, i, functors, key, None))
        start, functors, key, row = (i, [f.functor], f.key, f.row) if f is not None else (None, [], None, None)
    return runs


# The reductions a run may end in, by operator: their reducer in opforge/functors/reduce.h.
_REDUCERS = {
    "ReduceSum": "SumReducer",
    "ReduceMean": "MeanReducer",
    "ReduceMax": "MaxReducer",
    "ReduceMin": "MinReducer",
}


def _reduction(step, key, produced: set, meta_of):
    """``(Reduction, slot)`` when ``step`` reduces a value of the run (``produced``: its slots) over
    trailing dims (all of them, or the last few) and the backend fuses reductions; else None."""
    reducer = _REDUCERS.get(getattr(step.prim, "name", None))
    dtype, shape, device = key
    if reducer is None or step.outputs.__class__ is not int or not fuses_reductions(device.name):
        return None
    source, axis = step.sources[0], step.sources[1] if len(step.sources) > 1 else ("const", ())
    if source[0] != "slot" or source[1] not in produced or axis[0] != "const":
        return None
    reduced = _trailing_axes(axis[1], len(shape))
    out_dtype, out_shape, _ = meta_of(step.outputs)
    if reduced is None or out_dtype != dtype:
        return None
    return Reduction(reducer, -1, math.prod(shape[len(shape) - reduced :]), tuple(out_shape)), source[1]


def _trailing_axes(axis, ndim: int) -> int | None:
    """How many trailing dims ``axis`` (MindSpore's: an int, a tuple or list of them, () for all)
    reduces, or None when it is not the last few."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis) if isinstance(axis, (tuple, list)) else None
    if axes is None or not all(isinstance(a, int) and -ndim <= a < ndim for a in axes):
        return None
    found = sorted({a % ndim for a in axes}) if axes else list(range(ndim))
    return len(found) if found == list(range(ndim - len(found), ndim)) and found else None


def _group(steps, start, stop, functors, key, reduction, reads, meta_of):
    """The FusedGroup of steps[start:stop], its input sources and its output slots (the reduction's
    last, when the run ends in one)."""
    dtype, shape, device = key
    inputs, input_index, scalars, expressions, value_of, periods = [], {}, [], [], {}, []
    preludes = tuple(dict.fromkeys(p for _, p in functors if p))  # users' functors, each once
    for step, (functor, _) in zip(steps[start:stop], functors):
        operands = []
        for source in step.sources:
            if source[0] == "slot" and source[1] in value_of:
                operands.append(("value", value_of[source[1]]))
            elif source[0] == "const" and not isinstance(source[1], Tensor):
                operands.append(("scalar", len(scalars)))
                scalars.append(float(source[1]))
            else:
                ident = ("slot", source[1]) if source[0] == "slot" else ("const", id(source[1]))
                if ident not in input_index:
                    input_index[ident] = len(inputs)
                    inputs.append(source)
                    meta = meta_of(source[1]) if source[0] == "slot" else source[1]._meta
                    periods.append(period(meta[1], shape))
                operands.append(("in", input_index[ident]))
        value_of[step.outputs] = len(expressions)
        expressions.append(Expression(functor, tuple(operands)))
    live = [slot for slot in value_of if any(at >= stop or at < start for at in reads.get(slot, ()))]
    written = tuple(live)
    if reduction is not None:
        reduction = reduction[0]._replace(value=value_of[reduction[1]])
        written += (steps[stop - 1].outputs,)
    group = FusedGroup(
        dtype,
        tuple(shape),
        device,
        len(inputs),
        tuple(scalars),
        tuple(expressions),
        tuple(value_of[s] for s in live),
        tuple(s.prim.name for s in steps[start:stop]),
        tuple(periods),
        preludes,
        reduction,
    )
    return group, tuple(inputs), written


def fuse(steps: list, meta_of, outputs_spec) -> list:
    """``steps`` with every run of fusable elementwise steps replaced by one ``FusedStep``.
    ``meta_of(slot)``: the (dtype, shape, device) of a slot's Tensor."""
    runs = _runs(steps, meta_of)
    if not runs:
        return list(steps)
    reads = readers(steps, outputs_spec)
    fused, at = [], 0
    for start, stop, functors, key, reduction in runs:
        fused.extend(steps[at:start])
        group, inputs, written = _group(steps, start, stop, functors, key, reduction, reads, meta_of)
        if written:  # (a run none of whose values is read after it does nothing)
            fused.append(FusedStep(None, fuser_for(key[2].name)(group), inputs, written, group))
        at = stop
    fused.extend(steps[at:])
    return fused
