"""A Cell's own backward pass (MindSpore's custom ``Cell.bprop``).

A Cell that defines ``bprop(self, *inputs, out, dout)`` returning one gradient per input (a tuple) is differentiated
by it, not through the operators of its ``construct``: while a gradient is being taken, the call runs ``construct``
with the tapes set aside (its operators are not recorded) and then records the whole call as one operation
(``tape.PythonBackward``, named after the Cell) whose bprop is the cell's. The straight-through estimator of a
quantised network is the usual use (``construct`` rounds, ``bprop`` passes ``dout`` through). As in MindSpore, the
Parameters the cell reads get no gradient from that call, and ``bprop`` sees the inputs, the output and the output's
gradient (a tuple of them for a tuple output)."""

from __future__ import annotations

from opforge import _C
from opforge.bprop.tape import PythonBackward, Tape, record_on_tapes, taping
from opforge.dispatch.interpreter import current_interpreter

__all__ = ["call_as_one_operation", "call_with_bprop"]


def _cell_bprop(cell):
    """``cell.bprop`` as the tapes call it, its answer checked to be a tuple (a lone Tensor for one input)."""
    name = type(cell).__name__

    def bprop(*args):
        grads = cell.bprop(*args)
        if len(args) == 3 and not isinstance(grads, (tuple, list)):
            grads = (grads,)  # one input (then out and dout): a lone Tensor is its gradient
        if not isinstance(grads, (tuple, list)):
            raise TypeError(
                f"For '{name}', the Cell's bprop must return a tuple of gradients (one per input), "
                f"but got {type(grads).__name__}."
            )
        return tuple(grads)

    return bprop


def _below_tapes(interpreter):
    """The innermost interpreter under ``interpreter`` that is not a tape (None: eager)."""
    for interp in interpreter.enclosing():
        if not isinstance(interp, Tape):
            return interp
    return None


def call_with_bprop(cell, run, args: tuple):
    """``run()`` (the cell's construct on ``args``), differentiated by ``cell.bprop`` on every active tape."""
    return call_as_one_operation(type(cell).__name__, _cell_bprop(cell), run, args)


def call_as_one_operation(name: str, bprop, run, args: tuple):
    """``run()`` with the tapes set aside (its operators unrecorded), then recorded on every active tape as one
    operation ``name`` on ``args``, differentiated by ``bprop(*args, out, dout)``; eagerly just ``run()``."""
    if not taping():
        return run()
    interpreter = current_interpreter()
    _C.set_interpreter(_below_tapes(interpreter))
    try:
        out = run()
    finally:
        _C.set_interpreter(interpreter)
    record_on_tapes(PythonBackward(name, bprop), tuple(args), out)
    return out
