"""Reverse-mode gradients of Python functions built from primitives.

``GradOperation`` follows MindSpore's return conventions; ``grad`` and ``value_and_grad`` are the
functional forms.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from opforge.bprop.tape import Tape, backward
from opforge.tensor import Parameter, Tensor

__all__ = ["GradOperation", "grad", "value_and_grad", "stop_gradient"]


def stop_gradient(x: Tensor) -> Tensor:
    """``x``'s value as a new tensor no gradient flows through."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'stop_gradient', the input must be a Tensor, but got {type(x).__name__}.")
    return Tensor._from_array(x._data, x.dtype)


def _ones_like(t: Tensor) -> Tensor:
    return Tensor._from_array(np.ones(t.shape, t.dtype.np_dtype), t.dtype)


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._from_array(np.zeros(t.shape, t.dtype.np_dtype), t.dtype)


def _as_outputs(value, where: str) -> tuple:
    outs = value if isinstance(value, tuple) else (value,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"For '{where}', the function must return Tensors, but got {type(o).__name__}.")
    return outs


def _run(fn: Callable, args: tuple, watched: list, sens, where: str, has_aux: bool = False):
    """Run ``fn`` on a tape watching ``watched``; returns (value, {id: grad}, watched)."""
    with Tape() as tape:
        for t in watched:
            tape.watch(t)
        value = fn(*args)
    differentiated = value[0] if has_aux else value
    if has_aux and not isinstance(value, tuple):
        raise TypeError(f"For '{where}', has_aux=True needs the function to return a tuple (output, aux...).")
    outs = _as_outputs(differentiated, where)
    if sens is None:
        senses = tuple(_ones_like(o) for o in outs)
    else:
        senses = _as_outputs(sens, where + " sens")
        if len(senses) != len(outs) or any(s.shape != o.shape for s, o in zip(senses, outs)):
            raise ValueError(f"For '{where}', the sens must match the outputs' shapes.")
    grads = backward(tape, outs, senses)
    return value, grads


def _grad_of(grads: dict, t):
    if not isinstance(t, Tensor):
        return None
    g = grads.get(id(t))
    return g if g is not None else _zeros_like(t)


def _weights_list(weights, where: str) -> list:
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    weights = list(weights)
    for w in weights:
        if not isinstance(w, Tensor):
            raise TypeError(f"For '{where}', the weights must be Parameters, but got {type(w).__name__}.")
    return weights


class GradOperation:
    """Builds a function's gradient function (MindSpore's ``ops.GradOperation``).

    ``GradOperation()(fn)(x, y)`` gives the gradient with respect to the first input;
    ``get_all=True`` a tuple for every input; ``get_by_list=True`` (call as ``(fn, weights)``) a
    tuple for the weights; both give ``(input grads, weight grads)``. With ``sens_param=True`` the
    last argument is the output's sensitivity (``dout``) instead of ones.
    """

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'GradOperation', the '{name}' must be bool, but got {type(value).__name__}.")
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def __call__(self, fn: Callable, weights=None) -> Callable:
        if self.get_by_list and weights is None:
            raise ValueError("For 'GradOperation', get_by_list=True needs the weights: grad_op(fn, weights).")
        weight_list = _weights_list(weights, "GradOperation")

        def grad_fn(*args):
            sens = None
            if self.sens_param:
                if not args:
                    raise TypeError("For 'GradOperation', sens_param=True needs the sens as the last argument.")
                args, sens = args[:-1], args[-1]
            if not args and not self.get_by_list:
                raise TypeError("For 'GradOperation', the function needs at least one input to differentiate.")
            watched = [a for a in args if isinstance(a, Tensor)] + weight_list
            _, grads = _run(fn, args, watched, sens, "GradOperation")
            input_grads = tuple(_grad_of(grads, a) for a in args)
            weight_grads = tuple(_grad_of(grads, w) for w in weight_list)
            if self.get_by_list:
                return (input_grads, weight_grads) if self.get_all else weight_grads
            return input_grads if self.get_all else input_grads[0]

        return grad_fn


def _positions(grad_position, n_args: int) -> tuple:
    if grad_position is None:
        return ()
    positions = (grad_position,) if isinstance(grad_position, int) else tuple(grad_position)
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, int) or not -n_args <= p < n_args:
            raise ValueError(f"For 'grad', the 'grad_position' {p!r} is out of range for {n_args} inputs.")
    return positions


def _value_and_grad(fn, grad_position, weights, has_aux, where: str) -> Callable:
    weight_list = _weights_list(weights, where)
    if grad_position is None and not weight_list:
        raise ValueError(f"For '{where}', 'grad_position' and 'weights' cannot both be None.")

    def run(*args):
        positions = _positions(grad_position, len(args))
        watched = [args[p] for p in positions] + weight_list
        value, grads = _run(fn, args, watched, None, where, has_aux)
        pos_grads = tuple(_grad_of(grads, args[p]) for p in positions)
        if isinstance(grad_position, int):
            pos_grads = pos_grads[0]
        weight_grads = tuple(_grad_of(grads, w) for w in weight_list)
        if weights is None:
            result = pos_grads
        elif grad_position is None:
            result = weight_grads
        else:
            result = (pos_grads, weight_grads)
        return value, result

    return run


def grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False) -> Callable:
    """The gradient function of ``fn`` with respect to the inputs at ``grad_position`` (an int, a
    tuple, or None) and ``weights``. With ``has_aux`` the function returns ``(output, aux...)`` and
    the gradient function returns ``(grads, aux)``."""
    run = _value_and_grad(fn, grad_position, weights, has_aux, "grad")

    def grad_fn(*args):
        value, grads = run(*args)
        return (grads, value[1:] if len(value) > 2 else value[1]) if has_aux else grads

    return grad_fn


def value_and_grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False) -> Callable:
    """Like ``grad``, but the function returns ``(value, grads)``."""
    return _value_and_grad(fn, grad_position, weights, has_aux, "value_and_grad")
