"""The callback protocol of ``Model.train`` / ``Model.eval``: ``Callback`` (its hooks), ``RunContext`` and
``CallbackParam`` (the fields a hook reads). The callbacks themselves are in ``callback.py`` and
``summary.py``, which both build on this module."""

from __future__ import annotations

__all__ = ["Callback", "RunContext", "CallbackParam"]


class CallbackParam(dict):
    """The run's fields, readable as attributes (``cb_params.cur_epoch_num``) and keys."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


_InternalCallbackParam = CallbackParam  # MindSpore's name, which hand-written training loops build themselves


class RunContext:
    def __init__(self, original_args: CallbackParam):
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self) -> CallbackParam:
        return self._original_args

    def request_stop(self) -> None:
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


class Callback:
    """Base class; every hook does nothing."""

    def on_train_begin(self, run_context):
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_train_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        self.step_end(run_context)

    def on_train_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_train_end(self, run_context):
        self.end(run_context)

    def on_eval_begin(self, run_context):
        pass

    def on_eval_epoch_begin(self, run_context):
        pass

    def on_eval_step_begin(self, run_context):
        pass

    def on_eval_step_end(self, run_context):
        pass

    def on_eval_epoch_end(self, run_context):
        pass

    def on_eval_end(self, run_context):
        pass

    # MindSpore's older names, called by the training hooks above
    def begin(self, run_context):
        pass

    def epoch_begin(self, run_context):
        pass

    def step_begin(self, run_context):
        pass

    def step_end(self, run_context):
        pass

    def epoch_end(self, run_context):
        pass

    def end(self, run_context):
        pass
