r"""Dynamic learning rates as lists (MindSpore's ``nn.dynamic_lr``): one float per step, to give an
optimizer as ``learning_rate`` (step ``i`` uses item ``i``, the last one once they run out).

With :math:`e_i = \lfloor i / step\_per\_epoch \rfloor` the epoch of step ``i`` (``i < total_step``):

- ``piecewise_constant_lr(milestone, learning_rates)``: ``learning_rates[t]`` for the steps in
  ``[milestone[t-1], milestone[t])``; ``milestone[-1]`` values.
- ``exponential_decay_lr``: :math:`lr \cdot decay\_rate^{e_i / decay\_epoch}` (exponent floored when ``is_stair``).
- ``natural_exp_decay_lr``: :math:`lr \cdot e^{-decay\_rate \cdot e_i}` (as MindSpore: not divided by
  ``decay_epoch``; with ``is_stair``, :math:`e_i` rounded down to a multiple of ``decay_epoch``).
- ``inverse_decay_lr``: :math:`lr / (1 + decay\_rate \cdot e_i / decay\_epoch)` (quotient floored when ``is_stair``).
- ``cosine_decay_lr``: :math:`min\_lr + 0.5 (max\_lr - min\_lr)(1 + \cos(\pi \min(e_i, decay\_epoch) / decay\_epoch))`.
- ``polynomial_decay_lr``: :math:`(lr - end)(1 - \min(e_i, D) / D)^{power} + end` with :math:`D = decay\_epoch`;
  with ``update_decay_epoch``, :math:`(1 - e_i / D')` with :math:`D' = D \max(\lceil e_i / D \rceil, 1)`.
- ``warmup_lr``: :math:`lr \cdot \min(e_i, warmup\_epoch) / warmup\_epoch`.
"""

from __future__ import annotations

import math

from opforge.nn.learning_rate_schedule import check_bool, check_float, check_positive_int

__all__ = [
    "piecewise_constant_lr",
    "exponential_decay_lr",
    "natural_exp_decay_lr",
    "inverse_decay_lr",
    "cosine_decay_lr",
    "polynomial_decay_lr",
    "warmup_lr",
]


def piecewise_constant_lr(milestone, learning_rates) -> list:
    """``learning_rates[t]`` repeated for the steps ``[milestone[t-1], milestone[t])``."""
    where = "piecewise_constant_lr"
    for name, value in (("milestone", milestone), ("learning_rates", learning_rates)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"For '{where}', the '{name}' must be a list or tuple, but got {type(value).__name__}.")
    if len(milestone) != len(learning_rates):
        raise ValueError(
            f"For '{where}', the 'milestone' and 'learning_rates' must have the same length, but got "
            f"{len(milestone)} and {len(learning_rates)}."
        )
    lr, last = [], 0
    for i, (stop, rate) in enumerate(zip(milestone, learning_rates)):
        check_positive_int(where, f"milestone[{i}]", stop)
        if not isinstance(rate, float):
            raise TypeError(f"For '{where}', the 'learning_rates[{i}]' must be a float, but got {type(rate).__name__}.")
        if stop < last:
            raise ValueError(
                f"For '{where}', the 'milestone' must be increasing, but got milestone[{i}] = {stop} after {last}."
            )
        lr += [rate] * (stop - last)
        last = stop
    return lr


def _epochs(where: str, total_step, step_per_epoch) -> list:
    """The epoch of each step: floor(i / step_per_epoch) for i < total_step."""
    total_step = check_positive_int(where, "total_step", total_step)
    step_per_epoch = check_positive_int(where, "step_per_epoch", step_per_epoch)
    return [i // step_per_epoch for i in range(total_step)]


def _check_decay(where, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair):
    epochs = _epochs(where, total_step, step_per_epoch)
    decay_epoch = check_positive_int(where, "decay_epoch", decay_epoch)
    check_float(where, "learning_rate", learning_rate, positive=True)
    check_float(where, "decay_rate", decay_rate, positive=True)
    check_bool(where, "is_stair", is_stair)
    return epochs, decay_epoch


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False) -> list:
    """``learning_rate * decay_rate ** (epoch / decay_epoch)`` per step (exponent floored if ``is_stair``)."""
    epochs, decay_epoch = _check_decay(
        "exponential_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair
    )
    exponent = (lambda e: e // decay_epoch) if is_stair else (lambda e: e / decay_epoch)
    return [learning_rate * decay_rate ** exponent(e) for e in epochs]


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False) -> list:
    """``learning_rate * e ** (-decay_rate * epoch)`` per step (epoch a multiple of ``decay_epoch`` if ``is_stair``)."""
    epochs, decay_epoch = _check_decay(
        "natural_exp_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair
    )
    if is_stair:
        epochs = [e // decay_epoch * decay_epoch for e in epochs]
    return [learning_rate * math.e ** (-decay_rate * e) for e in epochs]


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False) -> list:
    """``learning_rate / (1 + decay_rate * epoch / decay_epoch)`` per step (quotient floored if ``is_stair``)."""
    epochs, decay_epoch = _check_decay(
        "inverse_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair
    )
    if is_stair:
        return [learning_rate / (1 + decay_rate * (e // decay_epoch)) for e in epochs]
    return [learning_rate / (1 + decay_rate * e / decay_epoch) for e in epochs]


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch) -> list:
    """Cosine from ``max_lr`` down to ``min_lr`` over ``decay_epoch`` epochs, then ``min_lr``."""
    where = "cosine_decay_lr"
    check_float(where, "min_lr", min_lr, positive=False)
    check_float(where, "max_lr", max_lr, positive=True)
    epochs = _epochs(where, total_step, step_per_epoch)
    decay_epoch = check_positive_int(where, "decay_epoch", decay_epoch)
    if min_lr >= max_lr:
        raise ValueError(
            f"For '{where}', the 'max_lr' must be greater than the 'min_lr', but got 'max_lr' {max_lr}, "
            f"'min_lr' {min_lr}."
        )
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(e, decay_epoch) / decay_epoch)) for e in epochs]


def polynomial_decay_lr(
    learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch, power, update_decay_epoch=False
) -> list:
    """``(learning_rate - end_learning_rate) * (1 - epoch / decay_epoch) ** power + end_learning_rate`` per
    step, the epoch capped at ``decay_epoch`` (or, with ``update_decay_epoch``, the decay restarting)."""
    where = "polynomial_decay_lr"
    check_float(where, "learning_rate", learning_rate, positive=True)
    check_float(where, "end_learning_rate", end_learning_rate, positive=False)
    check_float(where, "power", power, positive=True)
    epochs = _epochs(where, total_step, step_per_epoch)
    decay_epoch = check_positive_int(where, "decay_epoch", decay_epoch)
    check_bool(where, "update_decay_epoch", update_decay_epoch)
    delta = learning_rate - end_learning_rate
    lr = []
    for e in epochs:
        if update_decay_epoch:
            fraction = e / (decay_epoch * max(math.ceil(e / decay_epoch), 1))
        else:
            fraction = min(e, decay_epoch) / decay_epoch
        lr.append(delta * (1 - fraction) ** power + end_learning_rate)
    return lr


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch) -> list:
    """``learning_rate * min(epoch, warmup_epoch) / warmup_epoch`` per step."""
    where = "warmup_lr"
    check_float(where, "learning_rate", learning_rate, positive=False)
    warmup_epoch = check_positive_int(where, "warmup_epoch", warmup_epoch)
    epochs = _epochs(where, total_step, step_per_epoch)
    return [learning_rate * min(e, warmup_epoch) / warmup_epoch for e in epochs]
