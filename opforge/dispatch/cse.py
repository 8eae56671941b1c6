"""Common subexpressions, a pass of the trace compiler: a recorded call that repeats an earlier one
(the same primitive class and attrs on the same arguments, with no write between them, recorded in the same
region: a recomputation has its own) is dropped, and whatever read its outputs reads the earlier call's.
Only calls of opforge's own primitives that write nothing (no ``RW_WRITE`` argument) and talk to no one
(``side_effect``: the collectives) are merged: a user's primitive may have effects opforge cannot see.
"""

from __future__ import annotations

from opforge import _C
from opforge.dispatch.signature import sig_rw
from opforge.tensor import Tensor

__all__ = ["eliminate", "output_slots", "readers", "remap_outputs"]


def _pure(prim) -> bool:
    cls = type(prim)
    if not cls.__module__.startswith("opforge.primitives") or getattr(cls, "side_effect", False):
        return False
    return all(s.rw != sig_rw.RW_WRITE for s in cls._signature())


def _remap(source, mapping):
    kind = source[0]
    if kind == "slot":
        return ("slot", mapping.get(source[1], source[1]))
    if kind == "seq":
        return ("seq", source[1], tuple(_remap(s, mapping) for s in source[2]))
    return source


def _key_of(source):
    """A hashable identity of an argument: a slot, a Tensor by identity, a value by type and value."""
    kind = source[0]
    if kind == "slot":
        return source
    if kind == "seq":
        return ("seq", source[1], tuple(_key_of(s) for s in source[2]))
    value = source[1]
    if isinstance(value, Tensor):
        return ("tensor", id(value))
    try:
        hash(value)
    except TypeError:
        return None
    return ("value", type(value), value)


def output_slots(spec) -> set:
    """The slots a trace's output spec returns."""
    kind = spec[0]
    if kind == "slot":
        return {spec[1]}
    if kind in ("tuple", "list", "dict", "wrap"):
        return set().union(*(output_slots(s) for s in spec[-1]))
    return set()


def readers(steps, outputs_spec) -> dict:
    """slot -> the indices of the steps that read it (len(steps) for the function's outputs)."""
    reads: dict = {}

    def visit(source, at):
        if source[0] == "slot":
            reads.setdefault(source[1], set()).add(at)
        elif source[0] == "seq":
            for s in source[2]:
                visit(s, at)

    for i, step in enumerate(steps):
        for source in step.sources:
            visit(source, i)
    for slot in output_slots(outputs_spec):
        reads.setdefault(slot, set()).add(len(steps))
    return reads


def remap_outputs(spec, mapping):
    """The function's output spec with merged slots replaced."""
    kind = spec[0]
    if kind == "slot":
        return ("slot", mapping.get(spec[1], spec[1]))
    if kind in ("tuple", "list"):
        return (kind, [remap_outputs(s, mapping) for s in spec[1]])
    if kind in ("dict", "wrap"):
        return (kind, spec[1], [remap_outputs(s, mapping) for s in spec[2]])
    return spec


def eliminate(steps: list) -> tuple:
    """``(steps, mapping)``: the steps without repeated pure calls, and the merged slots (dropped slot ->
    the slot that holds the same value)."""
    seen, mapping, kept = {}, {}, []
    for step in steps:
        sources = tuple(_remap(s, mapping) for s in step.sources)
        step = step._replace(sources=sources)
        keys = tuple(_key_of(s) for s in sources)
        if step.prim is None or not _pure(step.prim):
            kept.append(step)
            seen.clear()  # it may have written what an earlier call read (a Parameter's update)
            continue
        if None in keys:
            kept.append(step)
            continue
        key = (step.region, _C.attrs_key(step.prim), keys)
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = step
            kept.append(step)
            continue
        if step.outputs.__class__ is int:
            mapping[step.outputs] = earlier.outputs
        elif step.outputs is not None:
            for mine, theirs in zip(step.outputs, earlier.outputs):
                if mine is not None and theirs is not None:
                    mapping[mine] = theirs
                elif mine is not None:  # the earlier call's output was not kept: keep this call
                    kept.append(step)
                    break
    return kept, mapping
