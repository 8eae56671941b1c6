"""Gradient hooks on intermediate values: MindSpore's ``ops.HookBackward`` and ``ops.InsertGradientOf``.

Both return their inputs unchanged; while a gradient is being taken, the call is recorded as one operation whose
bprop hands the gradient arriving at its outputs to a Python function: ``HookBackward(hook_fn)``'s ``hook_fn(grads)``
sees the tuple of gradients and may return a tuple replacing them (None keeps them); ``InsertGradientOf(f)``'s
``f(dout)`` returns the gradient to pass on. The function runs inside the backward pass, so it may compute with
operators (clipping a gradient) and is differentiated again under an outer gradient.
"""

from __future__ import annotations

from opforge.bprop.tape import PythonBackward, record_on_tapes, taping
from opforge.tensor import Tensor

__all__ = ["HookBackward", "InsertGradientOf"]


def _alias(t: Tensor) -> Tensor:
    """A new Tensor over ``t``'s data: the hook's output, a value the tapes tell apart from its input."""
    return Tensor._from_array(t._data, *t._meta[::2])


def _hooked(name: str, inputs: tuple, on_grads):
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{name}', every input must be a Tensor, but input {i} is {type(x).__name__}.")
    if not taping():
        return inputs  # no gradient being taken: nothing to hook
    outs = tuple(_alias(x) for x in inputs)

    def bprop(*args):  # inputs, out, dout: the gradients of the outputs go to on_grads
        dout = args[-1]
        return on_grads(dout if isinstance(dout, tuple) else (dout,))

    record_on_tapes(PythonBackward(name, bprop), inputs, outs if len(outs) > 1 else outs[0])
    return outs


class HookBackward:
    """``HookBackward(hook_fn, cell_id="")(*inputs)``: the inputs (one Tensor for one input), unchanged; in the
    backward pass ``hook_fn(grads)`` gets the tuple of their gradients and may return a tuple to use instead."""

    def __init__(self, hook_fn, cell_id=""):
        if not callable(hook_fn):
            raise TypeError(f"For 'HookBackward', the 'hook_fn' must be callable, but got {type(hook_fn).__name__}.")
        if not isinstance(cell_id, str):
            raise TypeError(f"For 'HookBackward', the 'cell_id' must be a str, but got {type(cell_id).__name__}.")
        self.hook_fn, self.cell_id = hook_fn, cell_id

    def _on_grads(self, grads: tuple) -> tuple:
        new = self.hook_fn(grads)
        if new is None:
            return grads
        new = (new,) if isinstance(new, Tensor) else new
        if not isinstance(new, (tuple, list)) or len(new) != len(grads):
            raise TypeError(
                f"For 'HookBackward', the 'hook_fn' must return None or a tuple of {len(grads)} gradient(s), but "
                f"returned {type(new).__name__}."
            )
        return tuple(new)

    def __call__(self, *inputs):
        if not inputs:
            raise ValueError("For 'HookBackward', at least one input is needed.")
        outs = _hooked("HookBackward", inputs, self._on_grads)
        return outs[0] if len(outs) == 1 else outs


class InsertGradientOf:
    """``InsertGradientOf(f)(x)``: ``x``, unchanged; in the backward pass the gradient reaching it is ``f(dout)``."""

    def __init__(self, f):
        if not callable(f):
            raise TypeError(f"For 'InsertGradientOf', the 'f' must be callable, but got {type(f).__name__}.")
        self.f = f

    def __call__(self, x):
        (out,) = _hooked("InsertGradientOf", (x,), lambda grads: (self.f(grads[0]),))
        return out
