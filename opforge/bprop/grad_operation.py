"""Reverse-mode gradients of Python functions built from primitives.

``GradOperation`` follows MindSpore's return conventions; ``grad`` and ``value_and_grad`` are the
functional forms. Each gradient call runs the function on its own tape, differentiates with
respect to its own argument positions (see ``_alias``) and the given weights, and releases the
tape, with every intermediate tensor, as soon as the backward pass ends. Calls nest: the backward
pass of an inner call is recorded on the outer tapes, which gives higher-order gradients.
"""

from __future__ import annotations

from typing import Callable

from opforge import _C
from opforge.bprop._utils import zeros_like
from opforge.bprop.tape import Tape, _differentiable, backward, record_on_tapes
from opforge.dispatch import sharding
from opforge.ops.functional import stop_gradient  # noqa: F401 (ops.stop_gradient, C.stop_gradient)
from opforge.parallel_context import operator_parallel
from opforge.primitives.array_ops import Cast, OnesLike, Reshape
from opforge.primitives.math_ops import Mul
from opforge.tensor import Parameter, Tensor

__all__ = ["GradOperation", "grad", "value_and_grad", "stop_gradient"]


def _filled_like(t: Tensor, value) -> Tensor:
    # The default sensitivity is a constant: nothing depends on it, so it needs no primitive.
    dtype, shape, device = t._meta
    if not hasattr(t, "_data"):  # a placeholder's (abstract evaluation): a placeholder of its meta
        return Tensor._placeholder(dtype, shape, device)
    return Tensor._from_array(device.full(shape, value, dtype.np_dtype), dtype, device)


_ONES: dict = {}  # meta -> a read-only Tensor of ones: the default sensitivity of a small output


def _ones_like(t: Tensor) -> Tensor:
    ones = _ONES.get(t._meta)
    if ones is None:
        ones = _filled_like(t, 1)
        if not hasattr(ones, "_data"):
            return ones
        if ones._data.size <= 64 and ones._meta[2].name == "CPU":  # kept only when small
            ones._data.flags.writeable = False  # shared by every gradient call: never written
            if len(_ONES) >= 256:
                _ONES.clear()
            _ONES[t._meta] = ones
    return ones


def _as_outputs(value, where: str) -> tuple:
    outs = value if isinstance(value, tuple) else (value,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"For '{where}', the function must return Tensors, but got {type(o).__name__}.")
    return outs


class _Fill(float):
    """A sensitivity given as one value to fill each output with (internal: user sens are Tensors)."""


class _FillBy:
    """A sensitivity given as a Tensor of one value (a loss scale) to fill each output with, by primitives:
    ``ones_like(output) * cast(value, output.dtype)``, as MindSpore's loss-scale cell fills it (a trace replays
    it with the value of each call)."""

    __slots__ = ("value",)

    def __init__(self, value: Tensor):
        self.value = value if value.shape == () else _RESHAPE(value, ())


_RESHAPE = Reshape()
_ONES_LIKE, _CAST, _MUL = OnesLike(), Cast(), Mul()


def _senses(outs: tuple, sens, where: str) -> tuple:
    # 1 each, but with loss_repeated_mean=False in a parallel call (only there is it asked: a gradient's hot path)
    repeats = [sharding.loss_repeats(o) for o in outs] if sharding.active() else None
    if sens is None or type(sens) is _Fill:  # TrainOneStepCell's sens: every output's filled with it
        value = 1.0 if sens is None else float(sens)
        if repeats is None or repeats == [1] * len(outs):
            if value == 1.0:
                return tuple([_ones_like(o) for o in outs])
            return tuple([_filled_like(o, value) for o in outs])
        return tuple([_filled_like(o, value * k) for o, k in zip(outs, repeats)])
    senses = _given_senses(outs, sens, where)
    if repeats is None:
        return senses
    return tuple([s if k == 1 else _MUL(s, Tensor(k, s.dtype)) for s, k in zip(senses, repeats)])


def _given_senses(outs: tuple, sens, where: str) -> tuple:
    if type(sens) is _FillBy:
        return tuple([_MUL(_ONES_LIKE(o), _CAST(sens.value, o.dtype)) for o in outs])
    senses = sens if isinstance(sens, tuple) else (sens,)
    if len(senses) != len(outs):
        raise ValueError(
            f"For '{where}', the sens must have one Tensor per output ({len(outs)}), but got {len(senses)}."
        )
    for i, (s, o) in enumerate(zip(senses, outs)):
        if not isinstance(s, Tensor):
            raise TypeError(f"For '{where}', the sens must be Tensors, but got {type(s).__name__}.")
        if s.shape != o.shape and s.dtype is o.dtype and s.size == o.size:
            # MindSpore's bprops reshape the sensitivity to each input's shape: a scalar loss scale is the sens
            # of a [1] loss (the model zoo's BERT), as one value of any shape of one element
            s = _RESHAPE(s, tuple(o.shape))
            senses = senses[:i] + (s,) + senses[i + 1 :]
        if s.shape != o.shape or s.dtype is not o.dtype:
            raise ValueError(
                f"For '{where}', the sens of output {i} must match it ({o.dtype}{list(o.shape)}), "
                f"but got {s.dtype}{list(s.shape)}."
            )
    return senses


_IDENTITY = Reshape()  # recorded (never launched) to join an argument's alias to it


def _alias(t):
    """A fresh tensor with ``t``'s data, standing for one argument position of one gradient call.

    Each gradient call differentiates with respect to its own arguments only: a tensor the function
    also closes over, or passes in two positions, is not confused with the argument (nested grads
    would otherwise mix their perturbations). On the tapes of enclosing gradient calls the alias is
    recorded as an identity of ``t``, so higher-order gradients still flow through it. Parameters
    keep their identity: they are written in place and may be reached as weights too.
    """
    if not _differentiable(t) or isinstance(t, Parameter):
        return t
    alias = Tensor._from_array(t._data, *t._meta[::2]) if hasattr(t, "_data") else Tensor._placeholder(*t._meta)
    if _C.current_interpreter() is not None:  # an enclosing gradient call
        record_on_tapes(_IDENTITY, (t, t.shape), alias)
    return alias


def _run(fn: Callable, args: tuple, positions, weights: list, sens, where: str, has_aux: bool = False, on_ready=None):
    """Run ``fn`` on a tape watching the arguments at ``positions`` and ``weights``; returns
    ``(value, {id: grad}, call_args)``, ``call_args`` being the arguments as ``fn`` saw them.

    The tape (every intermediate tensor of the call) is released as soon as the backward pass ends.
    ``on_ready(id, grad)`` hears of each watched tensor's gradient as soon as it is final (``backward``).

    Called in SEMI_AUTO_PARALLEL or AUTO_PARALLEL outside any parallel call (MindSpore's PyNative training of
    shard functions: ``value_and_grad`` of a function calling the network, un-jitted), the gradient function is
    the outermost parallel call itself (``sharding.run_outermost``): its tape records the sharded calls, so the
    gradients reach the split weights. They come out as the call's outputs do (``sharding.finish``): partial sums
    completed, a split one as this rank's block, which an optimizer's parallel call reads with its layout again;
    an input's in the input's layout (a batch-split input's: this rank's rows).
    """
    if operator_parallel() and not sharding.outer_call_active():
        taken = {}

        def call(*call_args):
            value, grads, taken["args"] = _run_taped(fn, call_args, positions, weights, sens, where, has_aux, on_ready)
            inputs = [taken["args"][p] for p in positions]  # (the arguments as fn saw them)
            # (zeros made here, laid out as their tensor); an input's gradient laid out as the input: a batch-split
            # input's is this rank's rows, as MindSpore's
            taken["grads"] = {id(t): sharding.finish_as(_grad_of(grads, t), t) for t in inputs}
            taken["grads"].update((id(w), sharding.finish(_grad_of(grads, w))) for w in weights)
            return value

        value = sharding.run_outermost(call, args, {}, where)
        return value, taken["grads"], taken["args"]
    return _run_taped(fn, args, positions, weights, sens, where, has_aux, on_ready)


def _run_taped(fn: Callable, args: tuple, positions, weights: list, sens, where: str, has_aux=False, on_ready=None):
    if positions:
        call_args = list(args)
        for p in positions:
            call_args[p] = _alias(args[p])
        call_args = tuple(call_args)
    else:
        call_args = args
    tape = Tape()
    try:
        with tape:
            for p in positions:
                tape.watch(call_args[p])
            for w in weights:
                tape.watch(w)
            keep = set(tape.tracked)  # the watched tensors: their gradients are the answer
            value = fn(*call_args)
        if has_aux and (not isinstance(value, tuple) or len(value) < 2):
            raise TypeError(
                f"For '{where}', has_aux=True needs the function to return a tuple (output, aux...), "
                f"but got {type(value).__name__}."
            )
        outs = _as_outputs(value[0] if has_aux else value, where)
        grads = backward(tape, outs, _senses(outs, sens, where), keep, _with_reducers(on_ready, tape.reducers))
        for reducer in tape.reducers:
            grads = reducer.finish(grads)
    finally:
        tape.release()
    return value, grads, call_args


def _with_reducers(on_ready, reducers: list):
    """``on_ready`` and the enlisted reducers' ``ready``, as one callback (None when there is none)."""
    hooks = ([on_ready] if on_ready is not None else []) + [r.ready for r in reducers]
    if len(hooks) <= 1:
        return hooks[0] if hooks else None

    def ready(key, grad):
        for hook in hooks:
            hook(key, grad)

    return ready


def _grad_of(grads: dict, t):
    """The gradient of ``t``: zeros (from a primitive) when the output does not depend on it."""
    if not isinstance(t, Tensor):
        return None
    g = grads.get(id(t))
    return g if g is not None else zeros_like(t)


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
        weight_list = _weights_list(weights, "GradOperation") if self.get_by_list else []

        def grad_fn(*args):
            sens = None
            if self.sens_param:
                if not args:
                    raise TypeError("For 'GradOperation', sens_param=True needs the sens as the last argument.")
                args, sens = args[:-1], args[-1]
            if not args and not self.get_by_list:
                raise TypeError("For 'GradOperation', the function needs at least one input to differentiate.")
            positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            _, grads, call_args = _run(fn, args, positions, weight_list, sens, "GradOperation")
            input_grads = tuple(_grad_of(grads, a) for a in call_args)
            weight_grads = tuple(_grad_of(grads, w) for w in weight_list)
            if self.get_by_list:
                return (input_grads, weight_grads) if self.get_all else weight_grads
            return input_grads if self.get_all else input_grads[0]

        return grad_fn


def _check_position_type(grad_position, where: str) -> None:
    def is_index(p) -> bool:
        return isinstance(p, int) and not isinstance(p, bool)

    if grad_position is None or is_index(grad_position):
        return
    if isinstance(grad_position, tuple) and all(is_index(p) for p in grad_position):
        return
    raise TypeError(
        f"For '{where}', the 'grad_position' must be an int, a tuple of ints or None, but got {grad_position!r}."
    )


def _positions(grad_position, n_args: int, where: str) -> tuple:
    if grad_position is None:
        return ()
    positions = (grad_position,) if isinstance(grad_position, int) else tuple(grad_position)
    for p in positions:
        if not -n_args <= p < n_args:
            raise ValueError(f"For '{where}', the 'grad_position' {p!r} is out of range for {n_args} inputs.")
    return positions


def _value_and_grad(
    fn, grad_position, weights, has_aux, where: str, with_sens: bool = False, on_ready=None
) -> Callable:
    """``run(*args) -> (value, grads)``; with ``with_sens``, ``run(sens, *args)`` where ``sens`` is
    None (ones), or a float or a Tensor of one value filling the output's sensitivity (the gradients scale
    with it).
    ``on_ready(id, grad)``: called during the backward pass for each gradient as soon as it is final."""
    if not callable(fn):
        raise TypeError(f"For '{where}', the 'fn' must be callable, but got {type(fn).__name__}.")
    _check_position_type(grad_position, where)
    if not isinstance(has_aux, bool):
        raise TypeError(f"For '{where}', the 'has_aux' must be bool, but got {type(has_aux).__name__}.")
    weight_list = _weights_list(weights, where)
    if grad_position is None and not weight_list:
        raise ValueError(f"For '{where}', 'grad_position' and 'weights' cannot both be None.")

    single = isinstance(grad_position, int)
    fixed = () if grad_position is None else (grad_position,) if single else grad_position
    weight_list = tuple(weight_list)

    def run_with(sens, args):
        n = len(args)
        for p in fixed:
            if not -n <= p < n:
                _positions(grad_position, n, where)  # raises naming the position
        value, grads, call_args = _run(fn, args, fixed, weight_list, sens, where, has_aux, on_ready)
        if single:
            pos_grads = _grad_of(grads, call_args[grad_position])
        else:
            pos_grads = tuple([_grad_of(grads, call_args[p]) for p in fixed])
        if weights is None:
            return value, pos_grads
        weight_grads = tuple([_grad_of(grads, w) for w in weight_list])
        return value, (weight_grads if grad_position is None else (pos_grads, weight_grads))

    if with_sens:
        return lambda sens, *args: run_with(
            None if sens is None else _FillBy(sens) if isinstance(sens, Tensor) else _Fill(sens), args
        )
    return lambda *args: run_with(None, args)


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
