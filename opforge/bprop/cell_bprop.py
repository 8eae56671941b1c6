"""A Cell's own backward pass (MindSpore's custom ``Cell.bprop``).

A Cell that defines ``bprop(self, *inputs, out, dout)`` returning one gradient per input (a tuple) is
differentiated by it, not through the operators of its ``construct``: while a gradient is being taken, the
call runs ``construct`` with the tapes set aside (its operators are not recorded) and then records the whole
call as one operation, ``CellBackward``, whose bprop is the cell's. The straight-through estimator of a
quantised network is the usual use (``construct`` rounds, ``bprop`` passes ``dout`` through). As in MindSpore,
the Parameters the cell reads get no gradient from that call, and ``bprop`` sees the inputs, the output and the
output's gradient (a tuple of them for a tuple output).
"""

from __future__ import annotations

from opforge import _C
from opforge.bprop.tape import Tape, record_on_tapes, taping
from opforge.dispatch.interpreter import current_interpreter

__all__ = ["CellBackward", "call_with_bprop"]


class CellBackward:
    """One call of a Cell with its own ``bprop``, as the tapes record it (an operation named after the Cell)."""

    __mindspore_signature__ = ()  # the call's inputs are recorded as they came
    attrs: dict = {}

    def __init__(self, cell):
        self.cell = cell
        self.name = type(cell).__name__

    def get_bprop(self):
        cell, name = self.cell, self.name

        def bprop(*args):
            grads = cell.bprop(*args)
            n_inputs = len(args) - 2
            if n_inputs == 1 and not isinstance(grads, (tuple, list)):
                grads = (grads,)  # one input: a lone Tensor is its gradient
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
    if not taping():
        return run()
    interpreter = current_interpreter()
    _C.set_interpreter(_below_tapes(interpreter))
    try:
        out = run()
    finally:
        _C.set_interpreter(interpreter)
    record_on_tapes(CellBackward(cell), tuple(args), out)
    return out
