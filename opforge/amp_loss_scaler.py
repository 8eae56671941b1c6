"""MindSpore's functional loss scaling (``mindspore.amp``): ``LossScaler``, ``StaticLossScaler``,
``DynamicLossScaler`` and ``all_finite``, for a training step written by hand::

    loss_scaler = amp.DynamicLossScaler(scale_value=2**16, scale_factor=2, scale_window=50)
    loss, grads = grad_fn(x, y)                      # grad_fn differentiates loss_scaler.scale(loss)
    grads = loss_scaler.unscale(grads)
    finite = amp.all_finite(grads)
    loss_scaler.adjust(finite)
    if finite: optimizer(grads)

The scale is a float32 Parameter (``scale_value``); ``scale``/``unscale`` multiply a Tensor, or each Tensor
of a tuple or list, by it or its reciprocal (in each Tensor's dtype). Every step is made of operators, so it
differentiates and traces (``opforge.jit``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.tensor import Parameter, Tensor

__all__ = ["LossScaler", "StaticLossScaler", "DynamicLossScaler", "all_finite"]

_is_finite = ops.IsFinite()
_all = ops.ReduceAll()
_reciprocal = ops.Reciprocal()
_cast = ops.Cast()


def _map(fn, inputs, where: str):
    """``fn`` over a Tensor, or over the Tensors of a (nested) tuple or list (MindSpore's HyperMap)."""
    if isinstance(inputs, Tensor):
        return fn(inputs)
    if isinstance(inputs, (tuple, list)):
        return type(inputs)(_map(fn, t, where) for t in inputs)
    raise TypeError(
        f"For '{where}', the 'inputs' must be a Tensor or a tuple of Tensors, but got {type(inputs).__name__}."
    )


def _leaves(inputs, where: str) -> list:
    out = []
    _map(out.append, inputs, where)
    return out


def all_finite(inputs) -> Tensor:
    r"""Whether every element of ``inputs`` (a Tensor, or a tuple or list of Tensors, e.g. gradients) is
    finite: a scalar bool Tensor, :math:`\bigwedge_{t, i} \mathrm{isfinite}(t_i)`. Any dtype (integers are
    finite)."""
    if inputs is None:
        raise ValueError("For 'all_finite', the 'inputs' must be a Tensor or a tuple of Tensors, but got None.")
    tensors = _leaves(inputs, "all_finite")
    if not tensors:
        raise ValueError("For 'all_finite', the 'inputs' must hold at least one Tensor, but got an empty sequence.")
    flags = [_all(_is_finite(t), ()) for t in tensors]
    return flags[0] if len(flags) == 1 else _all(ops.stack(flags), ())


def _check_scale(where: str, scale_value) -> float:
    if isinstance(scale_value, bool) or not isinstance(scale_value, (int, float)):
        raise TypeError(
            f"For '{where}', the 'scale_value' must be a float or an int, but got {type(scale_value).__name__}."
        )
    if scale_value < 1.0:
        raise ValueError(f"For '{where}', the 'scale_value' must be at least 1, but got {scale_value}.")
    return float(scale_value)


def _check_positive_int(where: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{where}', the '{name}' must be an int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{where}', the '{name}' must be a positive int, but got {value}.")
    return value


class LossScaler(ABC):
    """The loss scale of a hand-written mixed-precision step: ``scale`` the loss (or gradients) by it,
    ``unscale`` the gradients, ``adjust`` it after a step (given whether the gradients were finite)."""

    @abstractmethod
    def scale(self, inputs):
        """``inputs`` times the scale."""

    @abstractmethod
    def unscale(self, inputs):
        """``inputs`` divided by the scale."""

    @abstractmethod
    def adjust(self, grads_finite):
        """Update the scale after a step; ``grads_finite`` a scalar bool Tensor."""


class _ScaledBy(LossScaler):
    def __init__(self, scale_value):
        where = type(self).__name__
        self.scale_value = Parameter(Tensor(np.float32(_check_scale(where, scale_value))), name="scale_value")

    def scale(self, inputs):
        r""":math:`x \cdot scale` for each Tensor of ``inputs`` (the scale cast to its dtype)."""
        return _map(lambda t: t * _cast(self.scale_value, t.dtype), inputs, f"{type(self).__name__}.scale")

    def unscale(self, inputs):
        r""":math:`x \cdot (1 / scale)` for each Tensor of ``inputs`` (the reciprocal cast to its dtype)."""
        inverse = _reciprocal(self.scale_value)
        return _map(lambda t: t * _cast(inverse, t.dtype), inputs, f"{type(self).__name__}.unscale")


class StaticLossScaler(_ScaledBy):
    """MindSpore's ``amp.StaticLossScaler(scale_value)``: a fixed scale (at least 1)."""

    def adjust(self, grads_finite):
        """A fixed scale does not change: returns False."""
        return False


class DynamicLossScaler(_ScaledBy):
    r"""MindSpore's ``amp.DynamicLossScaler(scale_value, scale_factor, scale_window)``: the largest scale that
    keeps the gradients finite. ``adjust(grads_finite)``: after a step with finite gradients the counter
    advances, and the ``scale_window``-th such step in a row multiplies the scale by ``scale_factor`` (unless
    that overflows float32); after an overflow :math:`scale \leftarrow \max(1, scale / scale\_factor)` and the
    counter restarts. ``counter`` is an int32 Parameter."""

    def __init__(self, scale_value, scale_factor, scale_window):
        super().__init__(scale_value)
        self.scale_window = _check_positive_int("DynamicLossScaler", "scale_window", scale_window)
        self.scale_factor = _check_positive_int("DynamicLossScaler", "scale_factor", scale_factor)
        self.counter = Parameter(Tensor(np.int32(0)), name="counter")

    def adjust(self, grads_finite):
        """Update ``scale_value`` and ``counter`` in place from ``grads_finite``; returns True."""
        if not isinstance(grads_finite, Tensor) or grads_finite.dtype != mstype.bool_:
            raise TypeError(
                f"For 'DynamicLossScaler.adjust', the 'grads_finite' must be a bool Tensor, but got {grads_finite!r}."
            )
        scale = self.scale_value
        grown = scale * self.scale_factor
        at_window = self.counter == (self.scale_window - 1)
        up = ops.select(at_window, ops.select(ops.isfinite(grown), grown, scale), scale)
        down = ops.maximum(ops.ones((), scale.dtype), scale / self.scale_factor)
        ops.assign(self.scale_value, ops.select(grads_finite, up, down))
        ops.assign(self.counter, ((self.counter + 1) % self.scale_window) * grads_finite)
        return True
