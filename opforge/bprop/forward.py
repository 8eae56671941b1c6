"""Forward-mode autodiff (``jvp``, ``jacfwd``, ``linearize``, ``hvp``) derived from the registered bprops,
and the functional reverse-mode forms that go with it (``vjp``, ``jacrev``).

No operator has a second (tangent) rule: the Jacobian-vector product is obtained by transposing the
vector-Jacobian product. For ``y = f(x)`` the reverse pass ``g(u) = J(x)^T u`` is linear in the
cotangent ``u``, and the bprops that compute it are written with primitives, so the reverse pass
itself can be recorded on a second tape that tracks ``u``. Differentiating ``<g(u), v>`` with respect
to ``u`` on that tape gives ``J(x) v``:

1. run ``f`` on a tape ``T1`` watching the inputs that have a tangent (the forward pass);
2. seed each output with a cotangent ``u`` (any value: ``g`` is linear in it), watched by a tape ``T2``,
   and run the reverse pass of ``T1`` with ``T2`` installed: every bprop call that reads ``u`` (or a
   value computed from it) is recorded on ``T2``;
3. each ``J v`` is then one reverse pass of ``T2`` with the tangents ``v`` as the sensitivities of
   ``g``. ``T2`` is kept, so a Jacobian (``jacfwd``: one tangent per input element) runs the forward
   pass and the first reverse pass once.

A bprop is differentiable with respect to ``dout`` when every primitive it applies to ``dout`` has a
bprop itself. Where one has none (``LayerNormGrad``, for example), ``T2`` records it in place of the
primitive with a rule that raises a TypeError naming both the operator whose forward mode is missing
and the grad primitive that blocks it, and only if a tangent actually flows through it.

``vjp`` keeps the forward pass's tape for its ``vjp_fn``, which may be called many times; ``jacrev``
runs one reverse pass per output element. Everything is built from primitives, so these functions
nest: ``jvp`` of ``grad`` is a Hessian-vector product (``hvp``), ``jacfwd(jacrev(f))`` a Hessian.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from opforge.bprop.grad_operation import (
    _alias,
    _as_outputs,
    _check_position_type,
    _filled_like,
    _grad_of,
    _weights_list,
    value_and_grad,
)
from opforge.bprop.registry import bprop_getters
from opforge.bprop.tape import Tape, _differentiable, backward, differentiated_operator
from opforge.ops import functional as F
from opforge.primitives.array_ops import Reshape, Stack
from opforge.tensor import Tensor

__all__ = ["jvp", "vjp", "linearize", "jacfwd", "jacrev", "hvp", "Jvp", "Vjp"]


# ---------------------------------------------------------------------------------------------
# Argument checks


def _describe(t) -> str:
    if isinstance(t, Tensor):
        return f"{t.dtype}{list(t.shape)}"
    return type(t).__name__


def _check_fn(fn, where: str) -> None:
    if not callable(fn):
        raise TypeError(f"For '{where}', the 'fn' must be a function or a Cell, but got {type(fn).__name__}.")


def _check_has_aux(has_aux, where: str) -> None:
    if not isinstance(has_aux, bool):
        raise TypeError(f"For '{where}', the 'has_aux' must be bool, but got {type(has_aux).__name__}.")


def _tensor_tuple(value, name: str, where: str) -> tuple:
    """A Tensor or a tuple/list of Tensors as a tuple, checked; the argument named in the errors."""
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, (tuple, list)):
        for i, t in enumerate(value):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"For '{where}', the '{name}' must be a Tensor or a tuple or list of Tensors, "
                    f"but {name}[{i}] is {type(t).__name__}."
                )
        return tuple(value)
    raise TypeError(
        f"For '{where}', the '{name}' must be a Tensor or a tuple or list of Tensors, but got {type(value).__name__}."
    )


def _check_like(vectors: tuple, like: tuple, name: str, like_name: str, where: str) -> None:
    """One vector per element of ``like``, each of its shape, dtype and device."""
    if len(vectors) != len(like):
        raise ValueError(
            f"For '{where}', the '{name}' must have one Tensor per {like_name} ({len(like)}), but got {len(vectors)}."
        )
    for i, (v, t) in enumerate(zip(vectors, like)):
        if v.shape != t.shape or v.dtype is not t.dtype:
            raise ValueError(
                f"For '{where}', {name}[{i}] must have the shape and dtype of {like_name} {i} ({_describe(t)}), "
                f"but got {_describe(v)}."
            )
        if v.device != t.device:
            raise ValueError(
                f"For '{where}', {name}[{i}] must be on the device of {like_name} {i} ({t.device}), "
                f"but is on {v.device}."
            )


def _split_aux(value, has_aux: bool, where: str):
    """``(output, aux)``: with ``has_aux`` the first output and the rest (one value or a tuple)."""
    if not has_aux:
        return value, None
    if not isinstance(value, tuple) or len(value) < 2:
        raise ValueError(
            f"For '{where}', has_aux=True needs 'fn' to return more than one output (output, aux...), "
            f"but it returned {_describe(value)}."
        )
    return value[0], (value[1] if len(value) == 2 else value[1:])


def _jac_positions(grad_position, n_args: int, where: str) -> tuple:
    _check_position_type(grad_position, where)
    if grad_position is None:
        raise TypeError(f"For '{where}', the 'grad_position' must be an int or a tuple of ints, but got None.")
    positions = (grad_position,) if isinstance(grad_position, int) else tuple(grad_position)
    if not positions:
        raise ValueError(f"For '{where}', the 'grad_position' must name at least one input, but got ().")
    if len(set(positions)) != len(positions):
        raise ValueError(f"For '{where}', the 'grad_position' {grad_position!r} has duplicate positions.")
    for p in positions:
        if not 0 <= p < n_args:
            raise ValueError(
                f"For '{where}', each 'grad_position' must be in [0, {n_args}) for {n_args} inputs, but got {p}."
            )
    return positions


# ---------------------------------------------------------------------------------------------
# The transposition tape


class _NoTangentRule:
    """Stands on the tangent tape for a grad primitive with no bprop, applied to ``dout`` by the bprop of
    ``forward``: its rule raises only when a tangent reaches it."""

    def __init__(self, prim, forward, where: str):
        self._prim = prim
        self.name = prim.name
        self.forward = getattr(forward, "name", None)
        self.where = where

    def get_bprop(self) -> Callable:
        grad_name, forward, where = self.name, self.forward, self.where

        def bprop(*args):
            owner = f"'{forward}'" if forward else f"the operator whose bprop uses '{grad_name}'"
            raise TypeError(
                f"For '{where}', forward-mode differentiation of {owner} is not available: its bprop applies "
                f"'{grad_name}' to dout, and '{grad_name}' has no bprop, so the bprop cannot be transposed. "
                f"Forward mode transposes the registered bprops, which must be differentiable with respect to "
                f"dout; register a bprop for '{grad_name}' to enable it."
            )

        return bprop


def _has_bprop(prim) -> bool:
    if "get_bprop" in prim.__dict__ or getattr(type(prim), "get_bprop", None) is not None:
        return True
    return prim.name in bprop_getters or type(prim) in bprop_getters


class _TangentTape(Tape):
    """A tape of the reverse pass, tracking the cotangents: differentiated, it transposes the bprops."""

    def __init__(self, where: str):
        super().__init__()
        self.where = where

    def record(self, prim, args: tuple, out) -> None:
        n = len(self.records)
        super().record(prim, args, out)
        if len(self.records) > n and not _has_bprop(prim):
            _, a, o, versions = self.records[-1]
            self.records[-1] = (_NoTangentRule(prim, differentiated_operator(), self.where), a, o, versions)


class _Linearization:
    """``fn`` linearized at ``args`` with respect to the inputs at ``positions``.

    The forward pass and the reverse pass seeded with the cotangents run once, here; each call
    ``lin({position: tangent})`` is one reverse pass of the tangent tape and returns the tangent of
    every output of ``pick(value)`` (zeros for outputs that do not depend on the inputs, or that are
    not floating point).
    """

    def __init__(self, fn: Callable, args: tuple, positions: tuple, pick: Callable, where: str):
        call_args = list(args)
        for p in positions:
            call_args[p] = _alias(args[p])
        t1 = Tape()
        try:
            with t1:
                for p in positions:
                    t1.watch(call_args[p])
                keep = set(t1.tracked)
                value = fn(*call_args)
            outs = _as_outputs(pick(value), where)
            us = tuple(_filled_like(o, 1) if _differentiable(o) else None for o in outs)
            t2 = _TangentTape(where)
            for u in us:
                if u is not None:
                    t2.watch(u)
            seeded = [(o, u) for o, u in zip(outs, us) if u is not None]
            with t2:
                grads = backward(t1, tuple(o for o, _ in seeded), tuple(u for _, u in seeded), keep)
        finally:
            t1.release()
        self.value = value
        self.outs = outs
        self._us = us
        self._keep = {id(u) for u in us if u is not None}
        self._tape = t2
        # g(u) per position: the reverse pass's gradient of that input, linear in u
        self._gs = {p: grads.get(id(call_args[p])) for p in positions}

    def __call__(self, tangents: dict) -> tuple:
        tracked = self._tape.tracked
        gs, vs = [], []
        for p, v in tangents.items():
            g = self._gs.get(p)
            if g is not None and id(g) in tracked:  # else the outputs do not depend on input p
                gs.append(g)
                vs.append(v)
        grads = backward(self._tape, tuple(gs), tuple(vs), self._keep) if gs else {}
        out = []
        for o, u in zip(self.outs, self._us):
            t = grads.get(id(u)) if u is not None else None
            out.append(F.zeros_like(o) if t is None else t)
        return tuple(out)


def _first_output(has_aux: bool, where: str) -> Callable:
    return lambda value: _split_aux(value, has_aux, where)[0]


def _returned(net_out, tangents: tuple):
    return tangents if isinstance(net_out, tuple) else tangents[0]


# ---------------------------------------------------------------------------------------------
# jvp, linearize, vjp


def jvp(fn: Callable, inputs, v, has_aux: bool = False):
    """The Jacobian-vector product of ``fn`` at ``inputs`` along ``v`` (MindSpore's ``ops.jvp``).

    ``inputs`` and ``v`` are a Tensor or a tuple/list of Tensors, ``v`` one per input with its shape and
    dtype. Returns ``(net_output, jvp)``, ``jvp`` shaped like ``net_output`` (a Tensor or a tuple); with
    ``has_aux`` the function returns ``(output, aux...)``, only ``output`` is differentiated and the
    result is ``(output, jvp, aux)``. Derived from the registered bprops by transposing the vjp.
    """
    _check_fn(fn, "jvp")
    _check_has_aux(has_aux, "jvp")
    xs = _tensor_tuple(inputs, "inputs", "jvp")
    vs = _tensor_tuple(v, "v", "jvp")
    _check_like(vs, xs, "v", "input", "jvp")
    positions = tuple(i for i, x in enumerate(xs) if _differentiable(x))
    lin = _Linearization(fn, xs, positions, _first_output(has_aux, "jvp"), "jvp")
    tangents = lin({p: vs[p] for p in positions})
    net_out, aux = _split_aux(lin.value, has_aux, "jvp")
    result = _returned(net_out, tangents)
    return (net_out, result, aux) if has_aux else (net_out, result)


def linearize(fn: Callable, inputs):
    """``(net_output, jvp_fn)``: ``fn`` evaluated once at ``inputs``; ``jvp_fn(v)`` is the Jacobian-vector
    product along ``v`` (MindSpore's ``ops.linearize``), one reverse pass of the transposed bprops each."""
    _check_fn(fn, "linearize")
    xs = _tensor_tuple(inputs, "inputs", "linearize")
    positions = tuple(i for i, x in enumerate(xs) if _differentiable(x))
    lin = _Linearization(fn, xs, positions, lambda value: value, "linearize")

    def jvp_fn(v):
        vs = _tensor_tuple(v, "v", "linearize")
        _check_like(vs, xs, "v", "input", "linearize")
        return _returned(lin.value, lin({p: vs[p] for p in positions}))

    return lin.value, jvp_fn


def _vectors(v: tuple, where: str) -> tuple:
    """``vjp_fn(v1, v2)`` or ``vjp_fn((v1, v2))``."""
    if len(v) == 1 and isinstance(v[0], (tuple, list)):
        v = tuple(v[0])
    return _tensor_tuple(v, "v", where)


def vjp(fn: Callable, *inputs, weights=None, has_aux: bool = False):
    """The vector-Jacobian product of ``fn`` at ``inputs`` (MindSpore's ``ops.vjp``).

    Returns ``(net_output, vjp_fn)`` (``(net_output, vjp_fn, aux)`` with ``has_aux``). ``vjp_fn(v)``
    takes one Tensor per output of ``net_output`` (its shape and dtype) and returns a tuple with the
    gradient of every input; with ``weights`` (Parameters) it returns ``(input_grads, weight_grads)``.
    The forward pass runs once; ``vjp_fn`` may be called many times and keeps the forward's tape (every
    intermediate tensor) while it lives.
    """
    _check_fn(fn, "vjp")
    _check_has_aux(has_aux, "vjp")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'vjp', the 'inputs' must be Tensors, but inputs[{i}] is {type(x).__name__}.")
    weight_list = _weights_list(weights, "vjp")
    call_args = tuple(_alias(x) for x in inputs)
    tape = Tape()
    with tape:
        for a in call_args:
            tape.watch(a)
        for w in weight_list:
            tape.watch(w)
        keep = set(tape.tracked)
        value = fn(*call_args)
    net_out, aux = _split_aux(value, has_aux, "vjp")
    outs = _as_outputs(net_out, "vjp")

    def vjp_fn(*v):
        vs = _vectors(v, "vjp")
        _check_like(vs, outs, "v", "output", "vjp")
        grads = backward(tape, outs, vs, keep)
        input_grads = tuple(_grad_of(grads, a) for a in call_args)
        if weights is None:
            return input_grads
        return input_grads, tuple(_grad_of(grads, w) for w in weight_list)

    return (net_out, vjp_fn, aux) if has_aux else (net_out, vjp_fn)


# ---------------------------------------------------------------------------------------------
# Jacobians


_reshape = Reshape()


def _one_hot(t: Tensor, k: int) -> Tensor:
    e = np.zeros(t.shape, t.dtype.np_dtype)
    e.reshape(-1)[k] = 1
    return Tensor(e, dtype=t.dtype, device=t.device)


def _stacked(parts: list, axis: int, shape: tuple, like: Tensor) -> Tensor:
    """``parts`` stacked along ``axis`` and reshaped to ``shape`` (with primitives: differentiable)."""
    if not parts:
        return Tensor(np.zeros(shape, like.dtype.np_dtype), dtype=like.dtype, device=like.device)
    stacked = Stack(axis)(tuple(parts)) if len(parts) > 1 else parts[0]  # one part: the reshape is enough
    return _reshape(stacked, shape)


def _jac_format(jac: list, n_outputs: int, n_positions: int):
    """MindSpore's layout: one Tensor; a flat tuple when there is one output or one input; else a
    tuple over outputs of tuples over inputs."""
    flat = [j for row in jac for j in row]
    if len(flat) == 1:
        return flat[0]
    if n_outputs == 1 or n_positions == 1:
        return tuple(flat)
    return tuple(tuple(row) for row in jac)


def _check_jac_inputs(args: tuple, positions: tuple, where: str) -> None:
    for p in positions:
        if not _differentiable(args[p]):
            raise TypeError(
                f"For '{where}', the input at grad_position {p} must be a floating-point Tensor, "
                f"but got {_describe(args[p])}."
            )


def jacfwd(fn: Callable, grad_position=0, has_aux: bool = False) -> Callable:
    """The Jacobian function of ``fn`` by forward mode (MindSpore's ``ops.jacfwd``): one transposed
    reverse pass per input element, after one forward pass. The Jacobian of an output of shape ``So``
    with respect to an input of shape ``Si`` has shape ``So + Si``; several outputs and inputs give
    a tuple (over outputs of tuples over inputs when both are several). With ``has_aux`` the function
    returns ``(jacobian, aux)``."""
    _check_fn(fn, "jacfwd")
    _check_has_aux(has_aux, "jacfwd")
    _check_position_type(grad_position, "jacfwd")

    def jac_fn(*args):
        positions = _jac_positions(grad_position, len(args), "jacfwd")
        _check_jac_inputs(args, positions, "jacfwd")
        lin = _Linearization(fn, args, positions, _first_output(has_aux, "jacfwd"), "jacfwd")
        outs = lin.outs
        columns = [[[] for _ in positions] for _ in outs]
        for j, p in enumerate(positions):
            for k in range(args[p].size):
                for i, t in enumerate(lin({p: _one_hot(args[p], k)})):
                    columns[i][j].append(t)
        jac = [
            [
                _stacked(columns[i][j], len(o.shape), o.shape + args[p].shape, args[p])
                if _differentiable(o)
                else _stacked([], 0, o.shape + args[p].shape, args[p])  # an integer output: zeros
                for j, p in enumerate(positions)
            ]
            for i, o in enumerate(outs)
        ]
        result = _jac_format(jac, len(outs), len(positions))
        return (result, _split_aux(lin.value, True, "jacfwd")[1]) if has_aux else result

    return jac_fn


def jacrev(fn: Callable, grad_position=0, has_aux: bool = False) -> Callable:
    """The Jacobian function of ``fn`` by reverse mode (MindSpore's ``ops.jacrev``): one reverse pass
    per output element, after one forward pass. Same layout as ``jacfwd``."""
    _check_fn(fn, "jacrev")
    _check_has_aux(has_aux, "jacrev")
    _check_position_type(grad_position, "jacrev")

    def jac_fn(*args):
        positions = _jac_positions(grad_position, len(args), "jacrev")
        _check_jac_inputs(args, positions, "jacrev")
        call_args = list(args)
        for p in positions:
            call_args[p] = _alias(args[p])
        tape = Tape()
        try:
            with tape:
                for p in positions:
                    tape.watch(call_args[p])
                keep = set(tape.tracked)
                value = fn(*call_args)
            net_out, aux = _split_aux(value, has_aux, "jacrev")
            outs = _as_outputs(net_out, "jacrev")
            jac = []
            for o in outs:
                rows = [[] for _ in positions]
                if _differentiable(o):
                    for k in range(o.size):
                        grads = backward(tape, (o,), (_one_hot(o, k),), keep)
                        for j, p in enumerate(positions):
                            rows[j].append(_grad_of(grads, call_args[p]))
                else:  # an integer output: a zero Jacobian
                    rows = [[] for _ in positions]
                like = [args[p] for p in positions]
                jac.append([_stacked(rows[j], 0, o.shape + like[j].shape, like[j]) for j in range(len(positions))])
        finally:
            tape.release()
        result = _jac_format(jac, len(outs), len(positions))
        return (result, aux) if has_aux else result

    return jac_fn


# ---------------------------------------------------------------------------------------------
# Hessian-vector products


def hvp(fn: Callable, inputs, v):
    """The Hessian-vector product of a scalar function (forward over reverse: the jvp of its gradient).

    ``fn`` returns a Tensor with one element (a loss); ``inputs`` and ``v`` are a Tensor or a tuple/list
    of Tensors, ``v`` one per input with its shape and dtype. Returns ``(net_output, hvp)``, ``hvp``
    shaped like ``inputs`` (a Tensor or a tuple): ``sum_j d2f / dx_i dx_j v_j`` for each input ``i``.
    MindSpore has no ``hvp``; it is ``jvp(grad(fn, grad_position=all), inputs, v)`` in one pass.
    """
    _check_fn(fn, "hvp")
    xs = _tensor_tuple(inputs, "inputs", "hvp")
    vs = _tensor_tuple(v, "v", "hvp")
    _check_like(vs, xs, "v", "input", "hvp")
    for i, x in enumerate(xs):
        if not _differentiable(x):
            raise TypeError(f"For 'hvp', the inputs must be floating-point Tensors, but inputs[{i}] is {_describe(x)}.")
    positions = tuple(range(len(xs)))
    value_and_grads = value_and_grad(fn, positions)

    def grads_and_value(*args):
        value, grads = value_and_grads(*args)
        if not isinstance(value, Tensor) or value.size != 1:
            raise ValueError(
                f"For 'hvp', 'fn' must return a Tensor with one element (a scalar loss), but it returned "
                f"{_describe(value)}."
            )
        return grads + (value,)

    lin = _Linearization(grads_and_value, xs, positions, lambda value: value[:-1], "hvp")
    tangents = lin({p: vs[p] for p in positions})
    return lin.value[-1], (tangents if isinstance(inputs, (tuple, list)) else tangents[0])


# ---------------------------------------------------------------------------------------------
# MindSpore 1.x's cells


class Jvp:
    """``Jvp(fn)(*inputs, v)``: ``(net_output, jvp)`` (MindSpore 1.x's ``nn.Jvp``); ``v`` is the last
    argument, a Tensor or a tuple of Tensors, one per input."""

    def __init__(self, fn: Callable):
        _check_fn(fn, "Jvp")
        self.fn = fn

    def __call__(self, *args):
        if len(args) < 2:
            raise TypeError(f"For 'Jvp', the call needs the inputs and then 'v', but got {len(args)} argument(s).")
        return jvp(self.fn, args[:-1], args[-1])


class Vjp:
    """``Vjp(fn)(*inputs, v)``: ``(net_output, vjp)`` (MindSpore 1.x's ``nn.Vjp``); ``v`` is the last
    argument, one Tensor per output, and ``vjp`` has one gradient per input."""

    def __init__(self, fn: Callable):
        _check_fn(fn, "Vjp")
        self.fn = fn

    def __call__(self, *args):
        if len(args) < 2:
            raise TypeError(f"For 'Vjp', the call needs the inputs and then 'v', but got {len(args)} argument(s).")
        net_out, vjp_fn = vjp(self.fn, *args[:-1])
        return net_out, vjp_fn(args[-1])
