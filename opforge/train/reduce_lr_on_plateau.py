"""MindSpore's ``ReduceLROnPlateau`` callback: the learning rate times ``factor`` once ``monitor`` has not improved
for ``patience`` epochs."""

from __future__ import annotations

import numbers

import numpy as np

from opforge.tensor import Parameter, Tensor
from opforge.train.callback_base import Callback
from opforge.train.monitor import Monitored

__all__ = ["ReduceLROnPlateau"]


def _check(name: str, value, ok: bool, expected: str):
    if not ok:
        raise ValueError(f"For 'ReduceLROnPlateau', the '{name}' must be {expected}, but got {value!r}.")
    return value


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class ReduceLROnPlateau(Callback):
    """``ReduceLROnPlateau(monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto",
    min_delta=1e-4, cooldown=0, min_lr=0)``: at each epoch's end, ``monitor`` (as ``EarlyStopping`` reads it,
    averaged over the ranks: ``opforge/train/monitor.py``) improving by more than ``min_delta`` resets the wait;
    ``patience`` epochs without improvement set the optimizer's learning rate to
    ``max(lr * factor, min_lr)`` (when above ``min_lr``), after which ``cooldown`` epochs do not count. Only a
    learning rate that is one value (the Parameter ``optimizer.learning_rate``) can be changed: a dynamic or
    grouped one is a ValueError, as MindSpore's."""

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0):  # fmt: skip
        real = isinstance(factor, numbers.Real) and not isinstance(factor, bool)
        self.factor = _check("factor", factor, real and 0.0 < factor < 1.0, "a float in (0, 1)")
        self.patience = _check("patience", patience, _int(patience), "an int >= 0")
        self.cooldown = _check("cooldown", cooldown, _int(cooldown), "an int >= 0")
        self.verbose = _check("verbose", verbose, isinstance(verbose, bool), "a bool")
        ok = isinstance(min_lr, numbers.Real) and not isinstance(min_lr, bool)
        self.min_lr = _check("min_lr", min_lr, ok, "a float")
        ok = isinstance(min_delta, numbers.Real) and not isinstance(min_delta, bool)
        self.watched = Monitored("ReduceLROnPlateau", monitor, mode, _check("min_delta", min_delta, ok, "a float"))
        self.monitor = monitor
        self.on_train_begin(None)

    def on_train_begin(self, run_context):
        self.cooldown_counter, self.wait, self.best = 0, 0, self.watched.worst()

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        optimizer = cb.optimizer
        rate = optimizer.learning_rate
        if not isinstance(rate, Parameter) or optimizer.dynamic_lr or getattr(optimizer, "is_group_lr", False):
            raise ValueError("ReduceLROnPlateau does not support dynamic learning rate and group learning rate now.")
        value = self.watched.value(cb)
        if value is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.watched.improved(value, self.best):
            self.best, self.wait = value, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                self._reduce(rate, cb.cur_epoch_num)
                self.cooldown_counter, self.wait = self.cooldown, 0

    def _reduce(self, rate: Parameter, epoch: int) -> None:
        current = float(rate.asnumpy())
        if current > self.min_lr:
            new = max(current * self.factor, self.min_lr)
            rate.set_data(Tensor(np.array(new, rate.dtype.np_dtype)))
            if self.verbose:
                print(f"Epoch {epoch:05d}: ReduceLROnPlateau reducing learning rate to {new}.", flush=True)
