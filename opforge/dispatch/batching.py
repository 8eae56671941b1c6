"""vmap: the batching interpreter and the table of batching rules (JAX's ``BatchTrace``).

``vmap(fn, in_axes=0, out_axes=0)`` runs ``fn`` once on *batched tensors*: a batched tensor looks
like one element of the batch (its ``shape`` and ``dtype`` are the per-element ones) while its data
is a ``BatchedValue``, the whole batch as a real Tensor plus the position of the batch dimension in
it (``bdim``) and the ``BatchInterpreter`` it belongs to. While ``fn`` runs, that interpreter is on
the thread's stack (``opforge/dispatch/interpreter.py``), so every primitive call reaches its
``process_primitive``, which

* passes a call that reads none of its batched tensors to its parent unchanged (a tensor of an
  enclosing vmap is an ordinary value at this level: that is how nested vmaps compose);
* else looks up the operator's *batching rule*, ``rule(prim, args, dims, size) -> (out, out_dims)``,
  registered with ``@batching_rules.register(P.Add)`` next to the operator's family
  (``opforge/primitives/batching_*_ops.py``); ``args`` are the unwrapped values (the batched
  Tensors, the other arguments as they were), ``dims`` the batch dimension of each (None: not
  batched; a tuple for a tuple-of-Tensors argument), ``size`` the batch size. The rule runs with
  the interpreter's parent installed, so the primitives it calls run on the real batched arrays (and
  are recorded by an enclosing gradient's tape);
* else runs the *sequential fallback*: one call per batch element, the results stacked (correct for
  every operator, slow), with a ``VmapFallbackWarning`` naming the operator the first time.

Because batchedness lives in a tensor's data, a gradient taken inside vmap (per-example
gradients) sees ordinary tensors of the per-element shape: its tape records the calls, its seeds are
per-element ones, and the backward pass, run under the batching interpreter, is batched too.

The primitives that move batch dimensions (Transpose, Unstack, Stack, BroadcastTo...) are above this
module: the rule modules hand them in with ``set_axis_ops``.
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable

from opforge import _C
from opforge.dispatch.interpreter import EVAL, Interpreter
from opforge.dispatch.op_table import OpTable
from opforge.dispatch.signature import sig_rw
from opforge.tensor import Tensor

__all__ = [
    "BatchedValue",
    "BatchInterpreter",
    "VmapFallbackWarning",
    "batching_rules",
    "set_axis_ops",
    "vmap",
    "fallback_calls",
    "sequential",
    "is_batched",
]


class VmapFallbackWarning(UserWarning):
    """An operator without a batching rule ran once per batch element under vmap."""


# Operator -> rule(prim, args, dims, size); a primitive instance's own ``vmap_rule`` comes first.
batching_rules = OpTable("batching rule")


class _AxisOps:
    """The primitives the interpreter moves batch dimensions with (set by ``set_axis_ops``)."""

    moveaxis = unstack = stack = broadcast = None


_axis_ops = _AxisOps()


def set_axis_ops(*, moveaxis, unstack, stack, broadcast) -> None:
    """``moveaxis(x, src, dst)``, ``unstack(x, axis) -> tuple``, ``stack(tensors, axis)`` and
    ``broadcast(x, axis, size)`` (a new axis of ``size`` at ``axis``), written with primitives."""
    _axis_ops.moveaxis, _axis_ops.unstack, _axis_ops.stack, _axis_ops.broadcast = moveaxis, unstack, stack, broadcast


def _no_value(what: str):
    raise RuntimeError(
        f"Inside vmap a batched Tensor stands for every element of the batch and has no single value ({what}). "
        "Compute with primitives, or return it from the vmapped function to read the stacked result."
    )


class BatchedValue:
    """The data of a batched tensor: ``value`` (a Tensor holding the whole batch, its batch dimension at
    ``bdim``) and ``level`` (the BatchInterpreter it belongs to). ``shape`` is one element's shape."""

    __slots__ = ("value", "bdim", "level", "shape")

    def __init__(self, value: Tensor, bdim: int, level):
        self.value = value
        self.bdim = bdim
        self.level = level
        shape = value._meta[1]
        self.shape = shape[:bdim] + shape[bdim + 1 :]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.value._meta[0].itemsize

    def __array__(self, *args, **kwargs):
        _no_value("reading it as an array")

    def copy(self, *args, **kwargs):
        _no_value("copying it to the host")

    def view(self, *args, **kwargs):
        _no_value("reading it on the host")

    def __repr__(self) -> str:
        return f"BatchedValue(shape={list(self.shape)}, batch of {self.value._meta[1][self.bdim]} at axis {self.bdim})"


def _wrap(value: Tensor, bdim: int, level) -> Tensor:
    return Tensor._from_array(BatchedValue(value, bdim, level), value._meta[0], value._meta[2])


def is_batched(t) -> bool:
    """Whether ``t`` is a batched tensor of an active vmap."""
    return isinstance(t, Tensor) and t._data.__class__ is BatchedValue


def _own(a, level):
    """``(value, bdim)`` of a tensor batched at ``level``, else ``(a, None)``."""
    if isinstance(a, Tensor):
        data = a._data
        if data.__class__ is BatchedValue and data.level is level:
            return data.value, data.bdim
    return a, None


_SEQUENCES = (tuple, list)
_warned: set = set()
_fallback_calls: dict = {}  # operator name -> calls that ran the sequential fallback


class BatchInterpreter(Interpreter):
    """Batches every primitive call that reads one of its batched tensors (see the module doc)."""

    def __init__(self, size: int):
        self.parent = None
        self.size = size

    def process_primitive(self, prim, args: tuple):
        vals, dims, batched = [], [], False
        for a in args:
            if a.__class__ in _SEQUENCES:
                pairs = [_own(t, self) for t in a]
                ds = tuple(d for _, d in pairs)
                if any(d is not None for d in ds):
                    batched = True
                    vals.append(type(a)(v for v, _ in pairs))
                    dims.append(ds)
                    continue
                vals.append(a)
                dims.append(None)
                continue
            v, d = _own(a, self)
            batched = batched or d is not None
            vals.append(v)
            dims.append(d)
        parent = self.parent
        if not batched:
            return parent.process_primitive(prim, args)
        nsig = len(prim.__mindspore_signature__)
        if len(vals) < nsig:  # defaults: constants, never batched
            vals = list(prim._bound_inputs(tuple(vals)))
            dims += [None] * (len(vals) - len(dims))
        rule = getattr(prim, "vmap_rule", None) or batching_rules.get(type(prim))
        previous = _C.set_interpreter(None if parent is EVAL else parent)  # the rule's calls go below
        try:
            if rule is not None:
                out, out_dims = rule(prim, tuple(vals), tuple(dims), self.size)
            else:
                out, out_dims = _fallback(prim, tuple(vals), tuple(dims), self.size)
        finally:
            _C.set_interpreter(previous)
        if out.__class__ is tuple:
            if not isinstance(out_dims, tuple):
                out_dims = (out_dims,) * len(out)
            return tuple(o if d is None else _wrap(o, d, self) for o, d in zip(out, out_dims))
        return out if out_dims is None else _wrap(out, out_dims, self)


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside opforge, seen from the caller (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("opforge."):
        frame, level = frame.f_back, level + 1
    return level


def _fallback(prim, vals: tuple, dims: tuple, size: int, reason: str | None = None):
    """One call per batch element, the outputs stacked along a new axis 0."""
    name = prim.name
    for s in prim.__mindspore_signature__:
        if s.rw == sig_rw.RW_WRITE:
            raise NotImplementedError(
                f"For '{name}', vmap cannot batch an in-place operator (it writes '{s.name}'); "
                "call it outside vmap, or write the batched update with operators that return new tensors."
            )
    _fallback_calls[name] = _fallback_calls.get(name, 0) + 1
    if name not in _warned:
        _warned.add(name)
        why = reason or "has no batching rule"
        warnings.warn(
            f"vmap: '{name}' {why}; it runs once per batch element and the results are stacked "
            "(correct, but slow). opforge.vmap_report() lists the operators with and without rules.",
            VmapFallbackWarning,
            stacklevel=_user_stacklevel(),
        )
    if size == 0:
        raise ValueError(
            f"For '{name}', vmap over a batch of size 0 needs a batching rule, and '{name}' has none "
            "(the sequential fallback has no element to call it on)."
        )
    unstack = _axis_ops.unstack
    columns = []
    for v, d in zip(vals, dims):
        if d is None:
            columns.append(None)
        elif isinstance(d, tuple):
            parts = [[t] * size if e is None else unstack(t, e) for t, e in zip(v, d)]
            columns.append([type(v)(p[i] for p in parts) for i in range(size)])
        else:
            columns.append(unstack(v, d))
    outs = [
        prim(*[v if col is None else col[i] for v, col in zip(vals, columns)])  # below this interpreter
        for i in range(size)
    ]
    stack = _axis_ops.stack
    if outs[0].__class__ is tuple:
        return tuple(stack([o[k] for o in outs], 0) for k in range(len(outs[0]))), 0
    return stack(outs, 0), 0


def sequential(prim, args: tuple, dims: tuple, size: int, reason: str):
    """For rules: the sequential fallback for the cases a rule does not batch (``reason`` says which,
    in the warning: "batches only 'x'" reads "'Conv2D' batches only 'x'")."""
    return _fallback(prim, args, dims, size, reason)


# ---------------------------------------------------------------------------------------------
# vmap


def _check_axes_spec(spec, where: str) -> None:
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_axes_spec(s, where)
        return
    raise RuntimeError(
        f"For 'vmap', the elements of '{where}' must be None or int (in tuples or lists matching the "
        f"arguments), but got {spec!r} of type {type(spec).__name__}."
    )


def _flatten(tree, spec, where: str, path: str, out: list, broadcast: bool) -> None:
    """Pair each leaf of ``tree`` (tuples and lists nest) with its axis from ``spec``."""
    if isinstance(spec, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(tree) != len(spec):
            got = f"a {type(tree).__name__} of {len(tree)}" if isinstance(tree, (tuple, list)) else type(tree).__name__
            raise ValueError(
                f"For 'vmap', the '{where}' entry {list(spec) if isinstance(spec, list) else spec} at {path} must "
                f"match the structure of the value there ({got}), with one entry per element."
            )
        for i, (t, s) in enumerate(zip(tree, spec)):
            _flatten(t, s, where, f"{path}[{i}]", out, False)
        return
    if isinstance(tree, (tuple, list)):
        for i, t in enumerate(tree):
            _flatten(t, spec, where, f"{path}[{i}]", out, broadcast)
        return
    out.append((path, tree, spec, broadcast))


def _rebuild(tree, leaves):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild(t, leaves) for t in tree)
    return next(leaves)


def _normalize(axis: int, ndim: int, where: str, path: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"For 'vmap', the '{where}' of {path} must be in [{-ndim}, {ndim}) for a value of rank "
            f"{ndim if where == 'in_axes' else ndim - 1}, but got {axis}."
        )
    return axis % ndim


def vmap(fn: Callable, in_axes=0, out_axes=0) -> Callable:
    """Vectorize ``fn`` over an axis of its arguments, as MindSpore's ``ops.vmap``.

    ``in_axes``: an int (every argument is mapped over that axis), or a tuple/list with one entry per
    positional argument: an int, None (not mapped: every element sees the same value) or, for a
    tuple/list argument, a nested tuple/list. Negative axes count from the end. At least one entry
    must be an int, and every mapped axis must have the same size. ``out_axes``: where the mapped
    axis goes in each output, the same way (None: the output must not depend on the mapped axis;
    an unmapped output with an int axis is broadcast along it). Keyword arguments are not mapped.
    Operators without a batching rule run once per element (``VmapFallbackWarning``).
    """
    if not callable(fn):
        raise TypeError(f"For 'vmap', the 'fn' must be callable, but got {type(fn).__name__}.")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if isinstance(in_axes, (tuple, list)) and not _any_int(in_axes):
        raise RuntimeError("For 'vmap', at least one element of 'in_axes' must be an int, but all are None.")

    def vmapped(*args, **kwargs):
        spec = in_axes
        if isinstance(spec, (tuple, list)) and len(spec) != len(args):
            raise ValueError(
                f"For 'vmap', 'in_axes' must have one entry per positional argument ({len(args)}), "
                f"but got {len(spec)}: {spec!r}."
            )
        leaves: list = []
        if isinstance(spec, (tuple, list)):
            for i, (a, s) in enumerate(zip(args, spec)):
                _flatten(a, s, "in_axes", f"argument {i}", leaves, False)
        else:
            for i, a in enumerate(args):
                _flatten(a, spec, "in_axes", f"argument {i}", leaves, True)
        mapped = []  # (path, tensor, axis)
        for path, leaf, axis, broadcast in leaves:
            if axis is None:
                continue
            if not isinstance(leaf, Tensor):
                if broadcast:
                    continue  # an int in_axes maps every Tensor; other values are passed as they are
                raise ValueError(
                    f"For 'vmap', {path} is mapped over axis {axis} but is a {type(leaf).__name__}, not a Tensor; "
                    "give it None in 'in_axes'."
                )
            mapped.append((path, leaf, _normalize(axis, leaf.ndim, "in_axes", path)))
        if not mapped:
            raise RuntimeError("For 'vmap', at least one argument must be a Tensor mapped over an axis (in_axes).")
        sizes = {f"{path} (axis {axis})": t.shape[axis] for path, t, axis in mapped}
        size = next(iter(sizes.values()))
        if any(s != size for s in sizes.values()):
            shown = ", ".join(f"{where} has size {s}" for where, s in sizes.items())
            raise ValueError(f"For 'vmap', the mapped axes must all have the same size, but got {shown}.")
        interp = BatchInterpreter(size)
        axes = iter(mapped)
        nxt = next(axes, None)
        new_leaves = []
        for path, leaf, _axis, _ in leaves:
            if nxt is not None and nxt[0] == path and nxt[1] is leaf:
                new_leaves.append(_wrap(leaf, nxt[2], interp))
                nxt = next(axes, None)
            else:
                new_leaves.append(leaf)
        it = iter(new_leaves)
        call_args = tuple(_rebuild(a, it) for a in args)
        with interp:
            result = fn(*call_args, **kwargs)
        return _unbatch_outputs(result, out_axes, interp)

    vmapped.__name__ = f"vmap({getattr(fn, '__name__', type(fn).__name__)})"
    vmapped.__doc__ = getattr(fn, "__doc__", None)
    return vmapped


def _any_int(spec) -> bool:
    if isinstance(spec, (tuple, list)):
        return any(_any_int(s) for s in spec)
    return spec is not None


def _unbatch_outputs(result, out_axes, interp):
    if isinstance(out_axes, (tuple, list)) and not isinstance(result, (tuple, list)):
        if len(out_axes) != 1:
            raise ValueError(
                f"For 'vmap', 'out_axes' {out_axes!r} must have one entry per output, but the function returned "
                f"one {type(result).__name__}."
            )
        out_axes = out_axes[0]
    leaves: list = []
    _flatten(result, out_axes, "out_axes", "output", leaves, True)
    out = []
    for path, leaf, axis, _ in leaves:
        value, bdim = _own(leaf, interp)
        if bdim is None:
            if axis is None or not isinstance(leaf, Tensor):
                if isinstance(leaf, Tensor) or axis is None:
                    out.append(leaf)
                    continue
                raise TypeError(
                    f"For 'vmap', the function must return Tensors where 'out_axes' maps an axis, but {path} is a "
                    f"{type(leaf).__name__}."
                )
            axis = _normalize(axis, leaf.ndim + 1, "out_axes", path)
            out.append(_axis_ops.broadcast(leaf, axis, interp.size))
            continue
        if axis is None:
            raise ValueError(
                f"For 'vmap', {path} depends on the mapped axis, so its 'out_axes' entry must be an int, not None."
            )
        axis = _normalize(axis, value.ndim, "out_axes", path)
        out.append(_axis_ops.moveaxis(value, bdim, axis))
    return _rebuild(result, iter(out))


def fallback_calls() -> dict:
    """``{operator name: calls}`` that ran the sequential fallback in this process."""
    return dict(_fallback_calls)
