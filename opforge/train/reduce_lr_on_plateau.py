"""MindSpore's ``ReduceLROnPlateau`` callback: the learning rate times ``factor`` once ``monitor`` has not improved
for ``patience`` epochs."""

from __future__ import annotations

import numbers

import numpy as np

from opforge.primitives.validator import Rel, Validator
from opforge.tensor import Parameter, Tensor
from opforge.train.callback_base import Callback
from opforge.train.monitor import Monitored

__all__ = ["ReduceLROnPlateau"]


_NAME = "ReduceLROnPlateau"


def _number(name: str, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"For '{_NAME}', the '{name}' must be a float, but got {value!r}.")
    return value


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
        self.factor = Validator.check_float_range(factor, 0.0, 1.0, Rel.INC_NEITHER, "factor", _NAME)
        self.patience = Validator.check_non_negative_int(patience, "patience", _NAME)
        self.cooldown = Validator.check_non_negative_int(cooldown, "cooldown", _NAME)
        self.verbose = Validator.check_bool(verbose, "verbose", _NAME)
        self.min_lr = _number("min_lr", min_lr)
        self.watched = Monitored(_NAME, monitor, mode, _number("min_delta", min_delta))
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
