"""MindSpore's ``LearningRateScheduler`` callback and ``_CallbackManager`` (the list of callbacks hand-written
training loops in the model zoo drive themselves), importable from ``opforge.train.callback``."""

from __future__ import annotations

import math
from contextlib import ExitStack

import numpy as np

from opforge import log as logger
from opforge.tensor import Tensor
from opforge.train.callback_base import Callback

__all__ = ["LearningRateScheduler", "_CallbackManager"]


class LearningRateScheduler(Callback):
    """MindSpore's ``LearningRateScheduler(learning_rate_function)``: at the end of every training step,
    ``new_lr = learning_rate_function(lr, cur_step_num)`` with ``lr`` the optimizer's ``learning_rate`` read as
    NumPy prints it (``0.1``, not float32's 0.10000000149...); a value that differs (relative tolerance 1e-10)
    is written into ``optimizer.learning_rate`` (as float32) and takes effect from the next step."""

    def __init__(self, learning_rate_function):
        super().__init__()
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        optimizer = cb_params.get("optimizer")
        if optimizer is None:
            raise RuntimeError(
                "For 'LearningRateScheduler', the run has no optimizer (cb_params.optimizer is None): give the "
                "Model an optimizer."
            )
        lr = float(np.array2string(optimizer.learning_rate.asnumpy()))
        new_lr = self.learning_rate_function(lr, cb_params.cur_step_num)
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            optimizer.learning_rate.set_data(Tensor(np.array(new_lr, np.float32)))
            logger.info(f"At step {cb_params.cur_step_num}, learning_rate change to {new_lr}")


class _CallbackManager(Callback):
    """MindSpore's ``_CallbackManager(callbacks)``: runs a Callback or a list of them in order at each hook
    (``manager.begin(run_context)``, ``manager.step_end(run_context)``, ...), entering them as context managers
    with it. An old-name hook runs each callback's new-name one (``step_end`` runs ``on_train_step_end``, whose
    default runs ``step_end``), so opforge's built-in callbacks, which implement the new names, act as
    MindSpore 1.x's did when a training loop of its time drives them."""

    def __init__(self, callbacks):
        self._callbacks, self._stack = [], None
        if isinstance(callbacks, Callback):
            self._callbacks.append(callbacks)
        elif isinstance(callbacks, list):
            for cb in callbacks:
                if not isinstance(cb, Callback):
                    raise TypeError(
                        "When the 'callbacks' is a list, the elements in 'callbacks' must be Callback functions."
                    )
                self._callbacks.append(cb)
        elif callbacks is not None:
            raise TypeError("The 'callbacks' is not a Callback or a list of Callback.")

    def __enter__(self):
        if self._stack is None:
            self._stack = ExitStack().__enter__()
            entered = []
            for cb in self._callbacks:
                target = self._stack.enter_context(cb) if hasattr(cb, "__enter__") else cb
                entered.append(target if isinstance(target, Callback) else cb)
            self._callbacks = entered
        return self

    def __exit__(self, *err):
        stack, self._stack = self._stack, None
        return stack.__exit__(*err) if stack is not None else None

    def _run(self, hook: str, run_context) -> None:
        for cb in self._callbacks:
            getattr(cb, hook)(run_context)

    # MindSpore's older names, each running the callbacks' training hook
    def begin(self, run_context):
        self._run("on_train_begin", run_context)

    def epoch_begin(self, run_context):
        self._run("on_train_epoch_begin", run_context)

    def step_begin(self, run_context):
        self._run("on_train_step_begin", run_context)

    def step_end(self, run_context):
        self._run("on_train_step_end", run_context)

    def epoch_end(self, run_context):
        self._run("on_train_epoch_end", run_context)

    def end(self, run_context):
        self._run("on_train_end", run_context)

    # the hooks by their own names
    def on_train_begin(self, run_context):
        self._run("on_train_begin", run_context)

    def on_train_epoch_begin(self, run_context):
        self._run("on_train_epoch_begin", run_context)

    def on_train_step_begin(self, run_context):
        self._run("on_train_step_begin", run_context)

    def on_train_step_end(self, run_context):
        self._run("on_train_step_end", run_context)

    def on_train_epoch_end(self, run_context):
        self._run("on_train_epoch_end", run_context)

    def on_train_end(self, run_context):
        self._run("on_train_end", run_context)

    def on_eval_begin(self, run_context):
        self._run("on_eval_begin", run_context)

    def on_eval_epoch_begin(self, run_context):
        self._run("on_eval_epoch_begin", run_context)

    def on_eval_step_begin(self, run_context):
        self._run("on_eval_step_begin", run_context)

    def on_eval_step_end(self, run_context):
        self._run("on_eval_step_end", run_context)

    def on_eval_epoch_end(self, run_context):
        self._run("on_eval_epoch_end", run_context)

    def on_eval_end(self, run_context):
        self._run("on_eval_end", run_context)
