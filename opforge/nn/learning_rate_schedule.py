r"""Learning-rate schedule Cells (MindSpore's ``nn.learning_rate_schedule``).

Each schedule is a Cell: ``schedule(global_step)`` takes the step (an int32 0-d Tensor) and returns
that step's learning rate as a float32 0-d Tensor, computed with primitives (Cast, RealDiv, Floor,
Pow, Exp, Cos, Minimum, Maximum, Ceil), so it runs eagerly, traced by ``jit`` and in graph mode.
Give one to an optimizer as ``learning_rate``: each step the optimizer evaluates it at its
``global_step`` Parameter (0 on the first step) and then counts the step.
"""

from __future__ import annotations

import math
import numbers

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell

__all__ = [
    "LearningRateSchedule",
    "ExponentialDecayLR",
    "NaturalExpDecayLR",
    "InverseDecayLR",
    "CosineDecayLR",
    "PolynomialDecayLR",
    "WarmUpLR",
]


def check_float(where: str, name: str, value, positive: bool) -> float:
    """``value`` is a Python float, > 0 (``positive``) or >= 0; MindSpore rejects ints here too."""
    if not isinstance(value, float):
        raise TypeError(f"For '{where}', the '{name}' must be a float, but got {type(value).__name__}.")
    if value < 0.0 or (positive and value == 0.0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"For '{where}', the '{name}' must be {bound}, but got {value}.")
    return value


def check_positive_int(where: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{where}', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"For '{where}', the '{name}' must be a positive int (>= 1), but got {value}.")
    return int(value)


def check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


class LearningRateSchedule(Cell):
    """Base of the schedules: ``construct(global_step)`` returns the step's learning rate (0-d)."""

    def __init__(self):
        super().__init__()
        self.cast = ops.Cast()
        self.div = ops.RealDiv()
        self.mul = ops.Mul()
        self.add = ops.Add()

    def step_float(self, global_step):
        """The step as float32 (MindSpore casts it before dividing)."""
        return self.cast(global_step, mstype.float32)

    def construct(self, global_step):
        raise NotImplementedError


class _DecayLR(LearningRateSchedule):
    """The schedules of ``learning_rate``, ``decay_rate``, ``decay_steps`` and ``is_stair``."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        where = type(self).__name__
        self.decay_steps = check_positive_int(where, "decay_steps", decay_steps)
        self.learning_rate = check_float(where, "learning_rate", learning_rate, positive=True)
        self.decay_rate = check_float(where, "decay_rate", decay_rate, positive=True)
        self.is_stair = check_bool(where, "is_stair", is_stair)
        self.floor = ops.Floor()

    def progress(self, global_step):
        """p = step / decay_steps, floored when ``is_stair``."""
        p = self.div(self.step_float(global_step), float(self.decay_steps))
        return self.floor(p) if self.is_stair else p

    def extend_repr(self) -> str:
        return (
            f"learning_rate={self.learning_rate}, decay_rate={self.decay_rate}, decay_steps={self.decay_steps}, "
            f"is_stair={self.is_stair}"
        )


class ExponentialDecayLR(_DecayLR):
    r"""Exponential decay: :math:`lr = learning\_rate \cdot decay\_rate^{p}` with
    :math:`p = step / decay\_steps` (floored when ``is_stair``).

    ``ExponentialDecayLR(learning_rate, decay_rate, decay_steps, is_stair=False)``: ``learning_rate`` and
    ``decay_rate`` are floats > 0, ``decay_steps`` an int >= 1. Input: ``global_step`` (int32 0-d
    Tensor); output: float32 0-d Tensor.
    """

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__(learning_rate, decay_rate, decay_steps, is_stair)
        self.pow = ops.Pow()

    def construct(self, global_step):
        return self.mul(self.pow(self.decay_rate, self.progress(global_step)), self.learning_rate)


class NaturalExpDecayLR(_DecayLR):
    r"""Natural exponential decay: :math:`lr = learning\_rate \cdot e^{-decay\_rate \cdot p}`.

    As MindSpore computes it, :math:`p` is the step itself (not divided by ``decay_steps``); with
    ``is_stair`` it is :math:`floor(step / decay\_steps) \cdot decay\_steps`. Arguments, input and output
    as :class:`ExponentialDecayLR`.
    """

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__(learning_rate, decay_rate, decay_steps, is_stair)
        self.exp = ops.Exp()

    def construct(self, global_step):
        p = self.step_float(global_step)
        if self.is_stair:
            p = self.mul(self.floor(self.div(p, float(self.decay_steps))), float(self.decay_steps))
        return self.mul(self.exp(self.mul(p, -self.decay_rate)), self.learning_rate)


class InverseDecayLR(_DecayLR):
    r"""Inverse-time decay: :math:`lr = learning\_rate / (1 + decay\_rate \cdot p)` with
    :math:`p = step / decay\_steps` (floored when ``is_stair``). Arguments, input and output as
    :class:`ExponentialDecayLR`.
    """

    def construct(self, global_step):
        denominator = self.add(self.mul(self.progress(global_step), self.decay_rate), 1.0)
        return self.div(self.learning_rate, denominator)


class CosineDecayLR(LearningRateSchedule):
    r"""Cosine decay from ``max_lr`` to ``min_lr`` over ``decay_steps`` steps, then ``min_lr``:

    .. math::
        lr = min\_lr + 0.5 (max\_lr - min\_lr)(1 + \cos(\pi \cdot \min(step, decay\_steps) / decay\_steps))

    ``CosineDecayLR(min_lr, max_lr, decay_steps)``: floats with ``0 <= min_lr < max_lr``, an int
    ``decay_steps >= 1``. Input ``global_step`` (int32 0-d); output float32 0-d.
    """

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        where = "CosineDecayLR"
        self.min_lr = check_float(where, "min_lr", min_lr, positive=False)
        self.max_lr = check_float(where, "max_lr", max_lr, positive=True)
        self.decay_steps = check_positive_int(where, "decay_steps", decay_steps)
        if min_lr >= max_lr:
            raise ValueError(
                f"For 'CosineDecayLR', the 'max_lr' must be greater than the 'min_lr', but got 'max_lr' {max_lr}, "
                f"'min_lr' {min_lr}."
            )
        self.delta = 0.5 * (max_lr - min_lr)
        self.minimum = ops.Minimum()
        self.cos = ops.Cos()

    def construct(self, global_step):
        p = self.cast(self.minimum(global_step, self.decay_steps), mstype.float32)
        angle = self.mul(p, math.pi / self.decay_steps)
        return self.add(self.mul(self.add(self.cos(angle), 1.0), self.delta), self.min_lr)

    def extend_repr(self) -> str:
        return f"min_lr={self.min_lr}, max_lr={self.max_lr}, decay_steps={self.decay_steps}"


class PolynomialDecayLR(LearningRateSchedule):
    r"""Polynomial decay from ``learning_rate`` to ``end_learning_rate``:

    .. math::
        lr = (learning\_rate - end\_learning\_rate)(1 - t / T)^{power} + end\_learning\_rate

    with :math:`t = \min(step, decay\_steps)` and :math:`T = decay\_steps`; with ``update_decay_steps``,
    :math:`t = step` and :math:`T = decay\_steps \cdot \max(\lceil step / decay\_steps \rceil, 1)` (the
    decay restarts every ``decay_steps``).

    ``PolynomialDecayLR(learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False)``:
    ``learning_rate`` and ``power`` floats > 0, ``end_learning_rate`` a float >= 0, ``decay_steps`` an
    int >= 1. Input ``global_step`` (int32 0-d); output float32 0-d.
    """

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        where = "PolynomialDecayLR"
        self.start_learning_rate = check_float(where, "learning_rate", learning_rate, positive=True)
        self.end_learning_rate = check_float(where, "end_learning_rate", end_learning_rate, positive=False)
        self.decay_steps = check_positive_int(where, "decay_steps", decay_steps)
        self.update_decay_steps = check_bool(where, "update_decay_steps", update_decay_steps)
        self.power = check_float(where, "power", power, positive=True)
        self.diff_learning_rate = learning_rate - end_learning_rate
        self.pow = ops.Pow()
        self.ceil = ops.Ceil()
        self.minimum = ops.Minimum()
        self.maximum = ops.Maximum()
        self.sub = ops.Sub()

    def construct(self, global_step):
        step = self.step_float(global_step)
        decay_steps = float(self.decay_steps)
        if self.update_decay_steps:
            periods = self.maximum(self.ceil(self.div(step, decay_steps)), 1.0)
            p = self.div(step, self.mul(periods, decay_steps))
        else:
            p = self.div(self.minimum(step, decay_steps), decay_steps)
        decayed = self.pow(self.sub(1.0, p), self.power)
        return self.add(self.mul(decayed, self.diff_learning_rate), self.end_learning_rate)

    def extend_repr(self) -> str:
        return (
            f"learning_rate={self.start_learning_rate}, end_learning_rate={self.end_learning_rate}, "
            f"decay_steps={self.decay_steps}, power={self.power}, update_decay_steps={self.update_decay_steps}"
        )


class WarmUpLR(LearningRateSchedule):
    r"""Linear warm-up: :math:`lr = learning\_rate \cdot \min(step, warmup\_steps) / warmup\_steps`.

    ``WarmUpLR(learning_rate, warmup_steps)``: a float >= 0 and an int >= 1. Input ``global_step``
    (int32 0-d); output float32 0-d.
    """

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        self.learning_rate = check_float("WarmUpLR", "learning_rate", learning_rate, positive=False)
        self.warmup_steps = check_positive_int("WarmUpLR", "warmup_steps", warmup_steps)
        self.minimum = ops.Minimum()

    def construct(self, global_step):
        percent = self.div(
            self.cast(self.minimum(global_step, self.warmup_steps), mstype.float32), float(self.warmup_steps)
        )
        return self.mul(percent, self.learning_rate)

    def extend_repr(self) -> str:
        return f"learning_rate={self.learning_rate}, warmup_steps={self.warmup_steps}"
