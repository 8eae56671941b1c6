"""Loss scaling for float16 training, as MindSpore's ``nn.TrainOneStepWithLossScaleCell``,
``nn.DynamicLossScaleUpdateCell`` and ``nn.FixedLossScaleUpdateCell``.

The loss is multiplied by a scale before the backward pass (so small float16 gradients do not flush to
zero), the gradients divided by it after; a step whose gradients hold an inf or a NaN (an overflow) is
skipped, and a dynamic scale halves on an overflow and doubles after ``scale_window`` clean steps.
Whether to update is a decision on the gradients' values, made in Python: the step runs eagerly, in
GRAPH_MODE too (its network's cells are still traced, replayed under the step's tape).
"""

from __future__ import annotations

import numbers

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell
from opforge.nn.optim import Optimizer
from opforge.nn.wrap import TrainOneStepCell
from opforge.tensor import Parameter, Tensor

__all__ = [
    "DynamicLossScaleUpdateCell",
    "FixedLossScaleUpdateCell",
    "TrainOneStepWithLossScaleCell",
    "ScaleSchedule",
    "check_number",
]

_all_finite = ops.ReduceAll()
_is_finite = ops.IsFinite()
_assign = ops.Assign()


def check_number(where: str, name: str, value, low: float, strict: bool = True) -> float:
    """``value`` as a float, if it is a number above ``low`` (at least ``low`` unless ``strict``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (value > low if strict else value >= low):
        bound = f"greater than {low:g}" if strict else f"at least {low:g}"
        raise ValueError(f"For '{where}', the '{name}' must be a number {bound}, but got {value!r}.")
    return float(value)


class ScaleSchedule:
    """The rule of a dynamic loss scale: divided by ``factor`` on an overflow (not below 1), multiplied by
    it after ``window`` steps in a row without one (MindSpore's counting: ``cur_iter`` from 1)."""

    def __init__(self, where: str, factor, window):
        self.factor = check_number(where, "scale_factor", factor, 1.0)
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"For '{where}', the 'scale_window' must be a positive int, but got {window!r}.")
        self.window = window
        self.cur_iter, self.last_overflow_iter = 1, 0

    def next(self, scale: float, overflow: bool) -> float:
        """The scale after a step with it that did (or did not) overflow."""
        grow = self.cur_iter - self.last_overflow_iter >= self.window
        if overflow:
            scale = max(scale / self.factor, 1.0)
        elif grow:
            scale *= self.factor
        if overflow or grow:
            self.last_overflow_iter = self.cur_iter
        self.cur_iter += 1
        return scale


def _finite(grad) -> bool:
    return grad.dtype not in mstype.float_type or bool(_all_finite(_is_finite(grad), ()).asnumpy())


def _flag(value) -> bool:
    return bool(value.asnumpy()) if isinstance(value, Tensor) else bool(value)


class _PythonDecides(Cell):
    """A cell whose construct decides on values in Python: it runs eagerly, in GRAPH_MODE too."""

    def _call_construct(self, args, kwargs):
        return self.construct(*args, **kwargs)


class DynamicLossScaleUpdateCell(_PythonDecides):
    """``cell(loss_scale, overflow)``: on an overflow the scale (a Parameter, updated in place) is divided
    by ``scale_factor`` (not below 1); after ``scale_window`` steps without one it is multiplied by it.
    Returns ``overflow``."""

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        where = "DynamicLossScaleUpdateCell"
        self.loss_scale_value = check_number(where, "loss_scale_value", loss_scale_value, 0.0)
        self.schedule = ScaleSchedule(where, scale_factor, scale_window)
        self.scale_factor, self.scale_window = self.schedule.factor, self.schedule.window

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        overflow = _flag(overflow)
        scale = self.schedule.next(float(loss_scale.asnumpy()), overflow)
        _assign(loss_scale, Tensor(np.array(scale, loss_scale.dtype.np_dtype)))
        self.loss_scale_value = scale
        return Tensor(overflow)


class FixedLossScaleUpdateCell(_PythonDecides):
    """A scale that never changes: ``cell(loss_scale, overflow)`` returns ``overflow``."""

    def __init__(self, loss_scale_value):
        super().__init__()
        self.loss_scale_value = check_number("FixedLossScaleUpdateCell", "loss_scale_value", loss_scale_value, 0.0)

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        return Tensor(_flag(overflow))


class TrainOneStepWithLossScaleCell(_PythonDecides, TrainOneStepCell):
    """One training step with a scaled loss: the gradients of ``loss * scale``, divided by the scale,
    update the weights unless one of them is not finite. ``scale_sense`` is an update cell (its scale
    then follows the overflows) or a Tensor of one value (a fixed scale; ``set_sense_scale`` changes it).
    Returns ``(loss, overflow, scale)``: the loss, a bool Tensor, the scale the step used."""

    def __init__(self, network: Cell, optimizer: Optimizer, scale_sense):
        super().__init__(network, optimizer)
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager, scale = scale_sense, scale_sense.get_loss_scale()
        elif isinstance(scale_sense, Tensor) and scale_sense.size == 1:
            self.loss_scaling_manager, scale = None, float(scale_sense.asnumpy().reshape(()))
        else:
            raise TypeError(
                "For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be an update Cell or a Tensor of one "
                f"value, but got {scale_sense!r}."
            )
        self.scale_sense = Parameter(Tensor(np.array(scale, np.float32)), name="scale_sense", requires_grad=False)
        self.hyper_map = ops.HyperMap()  # MindSpore's attribute, which subclasses' constructs map with

    def set_sense_scale(self, sens) -> None:
        """A new fixed scale (a Tensor of one value)."""
        if not isinstance(sens, Tensor) or sens.size != 1:
            raise TypeError(f"For 'set_sense_scale', the 'sens' must be a Tensor of one value, but got {sens!r}.")
        _assign(self.scale_sense, Tensor(sens.asnumpy().reshape(()).astype(np.float32)))

    def construct(self, *inputs):
        scale = float(self.scale_sense.asnumpy())
        status, _ = self.start_overflow_check(None, self.scale_sense)
        loss, grads = self._value_and_grad(scale, *inputs)
        if self.reducer_flag:
            grads = self._reduce(grads)
        grads = tuple(ops.Mul()(g, Tensor(np.array(1.0 / scale, g.dtype.np_dtype))) for g in grads)
        overflow = self.process_loss_scale(self.get_overflow_status(status, grads))
        if not overflow:
            self._cells["optimizer"](grads)
        return loss, Tensor(overflow), Tensor(np.array(scale, np.float32))

    # MindSpore's helpers, for subclasses that write their own construct (as BERT's training cell does):
    # ``self.grad`` (TrainOneStepCell's: weights, with the scale as the sensitivity), then these three.
    def start_overflow_check(self, pre_cond, compute_input):
        """(status, compute_input): the status ``get_overflow_status`` reads (here the gradients are
        checked themselves, so it holds nothing)."""
        return None, compute_input

    def get_overflow_status(self, status, compute_output) -> Tensor:
        """Whether any float Tensor of ``compute_output`` (the gradients) holds an inf or a NaN (a bool
        Tensor)."""
        outputs = compute_output if isinstance(compute_output, (tuple, list)) else (compute_output,)
        return Tensor(not all(_finite(g) for g in outputs if isinstance(g, Tensor)))

    def process_loss_scale(self, overflow) -> bool:
        """``overflow`` after the update cell, if any, moved the scale by it."""
        if self.loss_scaling_manager is not None:
            return _flag(self.loss_scaling_manager(self.scale_sense, overflow))
        return _flag(overflow)
