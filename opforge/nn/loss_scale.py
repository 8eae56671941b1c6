"""Loss scaling for float16 training, as MindSpore's ``nn.TrainOneStepWithLossScaleCell``,
``nn.DynamicLossScaleUpdateCell`` and ``nn.FixedLossScaleUpdateCell``.

The loss is multiplied by a scale before the backward pass (so small float16 gradients do not flush to
zero), the gradients divided by it after; a step whose gradients hold an inf or a NaN (an overflow) is
skipped, and a dynamic scale halves on an overflow and doubles after ``scale_window`` clean steps.

The overflow check and the scale's update are operators, as in MindSpore's graph (the dynamic scale's
counters are Parameters), so the step traces: in GRAPH_MODE it is one trace, in a parallel mode's too. Eagerly
the overflow is read on the host and an overflowing step skips the optimizer's call; in a trace, which records
one program, the optimizer runs and a Select gives back what it wrote (``_update_unless``). A subclass with
its own construct (the model zoo's, deciding ``if not overflow:`` in Python) runs eagerly, in GRAPH_MODE too
(its network's cells are still traced).
"""

from __future__ import annotations

import numbers

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.dispatch.trace import tracing
from opforge.nn.cell import Cell
from opforge.nn.optim import Optimizer
from opforge.nn.wrap import TrainOneStepCell
from opforge.tensor import Parameter, Tensor, is_placeholder

__all__ = [
    "DynamicLossScaleUpdateCell",
    "FixedLossScaleUpdateCell",
    "TrainOneStepWithLossScaleCell",
    "ScaleSchedule",
    "check_number",
    "check_schedule",
]

_is_finite, _reduce_max = ops.IsFinite(), ops.ReduceMax()
_assign = ops.Assign()
_cast, _reshape, _zeros_like = ops.Cast(), ops.Reshape(), ops.ZerosLike()
_select, _maximum, _reciprocal, _less_equal = ops.Select(), ops.Maximum(), ops.Reciprocal(), ops.LessEqual()
_logical_and, _logical_or, _logical_not = ops.LogicalAnd(), ops.LogicalOr(), ops.LogicalNot()


def check_number(where: str, name: str, value, low: float, strict: bool = True) -> float:
    """``value`` as a float, if it is a number above ``low`` (at least ``low`` unless ``strict``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (value > low if strict else value >= low):
        bound = f"greater than {low:g}" if strict else f"at least {low:g}"
        raise ValueError(f"For '{where}', the '{name}' must be a number {bound}, but got {value!r}.")
    return float(value)


def check_schedule(where: str, factor, window) -> tuple:
    """``(factor, window)`` of a dynamic loss scale, checked: a number above 1 and a positive int."""
    factor = check_number(where, "scale_factor", factor, 1.0)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"For '{where}', the 'scale_window' must be a positive int, but got {window!r}.")
    return factor, window


class ScaleSchedule:
    """The rule of a dynamic loss scale: divided by ``factor`` on an overflow (not below 1), multiplied by
    it after ``window`` steps in a row without one (MindSpore's counting: ``cur_iter`` from 1)."""

    def __init__(self, where: str, factor, window):
        self.factor, self.window = check_schedule(where, factor, window)
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


def _flag(value) -> bool:
    return bool(value.asnumpy()) if isinstance(value, Tensor) else bool(value)


def _as_flag(overflow) -> Tensor:
    """``overflow`` (a bool Tensor of one value, or a bool) as a bool Tensor of shape ()."""
    if not isinstance(overflow, Tensor):
        return Tensor(bool(overflow))
    if overflow.dtype != mstype.bool_:
        overflow = _cast(overflow, mstype.bool_)
    return overflow if overflow.shape == () else _reshape(overflow, ())


def _in_dtype(t: Tensor, dtype) -> Tensor:
    return t if t.dtype == dtype else _cast(t, dtype)


class _CalledDirectly(Cell):
    """A cell whose construct runs as called, never as a trace of its own: at the top level op by op (its
    writes go to the Parameters it is given), inside a trace recorded into the caller's."""

    def _call_construct(self, args, kwargs):
        return self.construct(*args, **kwargs)


class DynamicLossScaleUpdateCell(_CalledDirectly):
    """``cell(loss_scale, overflow)``: on an overflow the scale (a Parameter, updated in place) is divided
    by ``scale_factor`` (not below 1); after ``scale_window`` steps without one it is multiplied by it.
    Returns ``overflow``. As MindSpore's, by operators: the step count ``cur_iter`` (from 1) and the step of
    the last overflow or growth ``last_overflow_iter`` are int32 Parameters ("current_iterator_step",
    "last_overflow_iterator_step"), and a scale moves by ``loss_scale * reciprocal(scale_factor)``."""

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        where = "DynamicLossScaleUpdateCell"
        self.loss_scale_value = check_number(where, "loss_scale_value", loss_scale_value, 0.0)
        self.scale_factor, self.scale_window = check_schedule(where, scale_factor, scale_window)
        self.cur_iter = Parameter(Tensor(np.int32(1)), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(
            Tensor(np.int32(0)), name="last_overflow_iterator_step", requires_grad=False
        )
        self._factor = Tensor(np.float32(self.scale_factor))
        self._window = Tensor(np.int32(self.scale_window))
        self._one = Tensor(np.float32(1.0))

    def get_loss_scale(self) -> float:
        """The initial loss scale (MindSpore's: the scale itself lives in the training cell's ``scale_sense``)."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        flag = _as_flag(overflow)
        scale = loss_scale if loss_scale.shape == () else _reshape(loss_scale, ())
        factor, one = _in_dtype(self._factor, scale.dtype), _in_dtype(self._one, scale.dtype)
        on_overflow = _select(flag, _maximum(scale * _reciprocal(factor), one), scale)
        should_inc = _less_equal(self._window, self.cur_iter - self.last_overflow_iter)
        moved = _logical_or(flag, should_inc)
        _assign(self.last_overflow_iter, _select(moved, self.cur_iter, self.last_overflow_iter))
        grown = _select(_logical_and(should_inc, _logical_not(flag)), on_overflow * factor, on_overflow)
        _assign(loss_scale, grown if loss_scale.shape == () else _reshape(grown, loss_scale.shape))
        _assign(self.cur_iter, self.cur_iter + 1)
        return overflow


class FixedLossScaleUpdateCell(_CalledDirectly):
    """A scale that never changes: ``cell(loss_scale, overflow)`` returns ``overflow``."""

    def __init__(self, loss_scale_value):
        super().__init__()
        self.loss_scale_value = check_number("FixedLossScaleUpdateCell", "loss_scale_value", loss_scale_value, 0.0)

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        return overflow


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """One training step with a scaled loss: the gradients of ``loss * scale``, divided by the scale,
    update the weights unless one of them is not finite. ``scale_sense`` is an update cell (its scale
    then follows the overflows) or a Tensor of one value (a fixed scale; ``set_sense_scale`` changes it).
    Returns ``(loss, overflow, scale)``: the loss, a bool Tensor, the scale the step used.

    The step is made of operators (the module's docstring): in GRAPH_MODE it is traced, a parallel mode's
    step too; a subclass with its own construct runs eagerly."""

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
        self._base = Tensor(np.float32(1.0))

    def set_sense_scale(self, sens) -> None:
        """A new fixed scale (a Tensor of one value)."""
        if not isinstance(sens, Tensor) or sens.size != 1:
            raise TypeError(f"For 'set_sense_scale', the 'sens' must be a Tensor of one value, but got {sens!r}.")
        _assign(self.scale_sense, Tensor(sens.asnumpy().reshape(()).astype(np.float32)))

    def _decides_in_python(self) -> bool:
        """Whether a subclass wrote its own construct (the model zoo's, ``if not overflow:
        self.optimizer(grads)``): it may decide on values in Python, so it runs eagerly, in GRAPH_MODE and in a
        parallel mode too."""
        return type(self).construct is not TrainOneStepWithLossScaleCell.construct

    def _call_construct(self, args, kwargs):
        if self._decides_in_python():
            return self.construct(*args, **kwargs)
        return super()._call_construct(args, kwargs)

    @property
    def _sharded_graph(self):
        # (a parallel mode's GRAPH_MODE traces the whole sharded step from its second call: not a subclass's)
        return self._sharded if self._decides_in_python() else super()._sharded_graph

    def construct(self, *inputs):
        status, scaling_sens = self.start_overflow_check(None, self.scale_sense)
        scale = _cast(scaling_sens, mstype.float32)  # this step's scale (a copy: the update cell writes scale_sense)
        loss, grads = self._value_and_grad(scale, *inputs)  # the sensitivity: ones_like(loss) * scale
        if self.reducer_flag:
            grads = self._reduce(grads)
        inverse = _reciprocal(scale)
        grads = tuple(g * _in_dtype(inverse, g.dtype) for g in grads)
        cond = self.get_overflow_status(status, grads)
        overflow = self.process_loss_scale(cond)
        if tracing() or is_placeholder(overflow):  # (a trace; AUTO_PARALLEL's search, recording from shapes)
            self._update_unless(overflow, grads)
        elif not _flag(overflow):
            self._cells["optimizer"](grads)
        return loss, cond, scale

    def _update_unless(self, overflow: Tensor, grads: tuple) -> None:
        """The optimizer's update, undone if ``overflow`` holds, by operators: a trace records one program (where
        MindSpore's graph branches), so each Parameter the optimizer may write (the weights, its states, its step
        count and learning rates) is copied before it runs and chosen back after by a Select."""
        optimizer = self._cells["optimizer"]
        written = {id(p): p for p in (*self.weights, *optimizer.get_parameters()) if not is_placeholder(p)}
        kept = [(p, _cast(p, p.dtype)) for p in written.values()]  # (a Cast to its own dtype copies)
        optimizer(grads)
        for p, before in kept:
            mask = _logical_or(_cast(_zeros_like(p), mstype.bool_), overflow)  # the flag over p's shape and layout
            _assign(p, _select(mask, before, p))

    # MindSpore's helpers, for subclasses that write their own construct (as BERT's training cell does):
    # ``self.grad`` (TrainOneStepCell's: weights, with the scale as the sensitivity), then these three.
    def start_overflow_check(self, pre_cond, compute_input):
        """(status, compute_input): the status ``get_overflow_status`` reads (here the gradients are
        checked themselves, so it holds nothing)."""
        return None, compute_input

    def get_overflow_status(self, status, compute_output) -> Tensor:
        """Whether any float Tensor of ``compute_output`` (the gradients) holds an inf or a NaN: a bool Tensor of
        shape (), by operators, as MindSpore's GPU check: a flag per Tensor (1.0 if it holds one), their sum at
        least 1. (Each flag is a maximum: of a split gradient, each rank's block's, completed across the ranks.)"""
        outputs = compute_output if isinstance(compute_output, (tuple, list)) else (compute_output,)
        flag_sum = None
        for g in outputs:
            if isinstance(g, Tensor) and g.dtype in mstype.float_type and g.size:
                flag = _reduce_max(_cast(_logical_not(_is_finite(g)), mstype.float32), ())
                flag_sum = flag if flag_sum is None else flag_sum + flag
        if flag_sum is None:
            return Tensor(False)
        return _less_equal(self._base, flag_sum)

    def process_loss_scale(self, overflow):
        """``overflow`` (returned) after the update cell, if any, moved the scale by it."""
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow
