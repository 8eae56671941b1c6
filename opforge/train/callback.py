"""Callbacks of ``Model.train`` / ``Model.eval`` (MindSpore's ``mindspore.train`` callbacks).

A ``Callback`` overrides the hooks it needs, each given the ``RunContext``: ``on_train_begin``,
``on_train_epoch_begin``, ``on_train_step_begin``, ``on_train_step_end``, ``on_train_epoch_end``,
``on_train_end`` and the ``on_eval_*`` ones (MindSpore's older names ``begin``, ``epoch_begin``,
``step_begin``, ``step_end``, ``epoch_end``, ``end`` are called for training too).
``run_context.original_args()`` holds the fields MindSpore gives (``cur_epoch_num``, ``cur_step_num``,
``batch_num``, ``epoch_num``, ``net_outputs``, ``train_network``, ``optimizer``, ``loss_fn``, ...);
``run_context.request_stop()`` ends training after the current step."""

from __future__ import annotations

import os
import time

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from opforge.nn.checkpoint import check_format, save_checkpoint
from opforge.tensor import Tensor
from opforge.train.backup_and_restore import BackupAndRestore
from opforge.train.callback_base import (
    Callback,
    CallbackParam,
    RunContext,
    _InternalCallbackParam,  # noqa: F401 (MindSpore's name, importable here)
)
from opforge.train.callback_extra import LearningRateScheduler, _CallbackManager  # noqa: F401 (MindSpore 1.x)
from opforge.train.monitor import Monitored, loss_value
from opforge.train.on_request_exit import OnRequestExit
from opforge.train.reduce_lr_on_plateau import ReduceLROnPlateau
from opforge.train.summary import SummaryCollector

__all__ = [
    "Callback", "RunContext", "CallbackParam", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig",
    "History", "LambdaCallback", "EarlyStopping", "ProgressBar", "SummaryCollector",
    "LearningRateScheduler", "OnRequestExit", "ReduceLROnPlateau", "BackupAndRestore",
]  # fmt: skip


class LossMonitor(Callback):
    """Prints ``epoch: E step: S, loss is L`` when ``per_print_times`` steps have passed since its last print
    (MindSpore's rule: in GRAPH_MODE sink mode, where the step hooks run once per sink, at the first sink end
    that many steps after it, S the step in the epoch)."""

    def __init__(self, per_print_times: int = 1):
        if isinstance(per_print_times, bool) or not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"For 'LossMonitor', the 'per_print_times' must be an int >= 0, got {per_print_times!r}.")
        self._per_print_times = per_print_times
        self._last_print_step = 0

    def on_train_begin(self, run_context):
        self._last_print_step = run_context.original_args().get("cur_step_num", 0)  # (a resumed run's start)
        super().on_train_begin(run_context)

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        loss = loss_value(cb.net_outputs)
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        if not np.isfinite(loss):
            raise ValueError(
                f"epoch: {cb.cur_epoch_num} step: {step_in_epoch}. Invalid loss {loss}, terminating training."
            )
        if self._per_print_times and cb.cur_step_num - self._last_print_step >= self._per_print_times:
            self._last_print_step = cb.cur_step_num
            print(f"epoch: {cb.cur_epoch_num} step: {step_in_epoch}, loss is {loss}", flush=True)


class TimeMonitor(Callback):
    """Prints each epoch's time and the time per step: per ``batch_num`` steps (a sink's size in sink mode),
    or ``data_size`` where the run gives no ``batch_num`` (MindSpore's order)."""

    def __init__(self, data_size=None):
        self.data_size = data_size

    # MindSpore's TimeMonitor defines epoch_begin / epoch_end, so a subclass overriding them replaces them
    # (the zoo's LSTM-CRF EvalCabllBack evaluates in its epoch_end)
    def epoch_begin(self, run_context):
        self._start = time.perf_counter()

    def epoch_end(self, run_context):
        seconds = time.perf_counter() - self._start
        batch_num = run_context.original_args().get("batch_num")
        steps = batch_num if isinstance(batch_num, int) and batch_num > 0 else self.data_size
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"For 'TimeMonitor', the step count must be a positive int, but got {steps!r}.")
        print(f"epoch time: {seconds * 1000:.3f} ms, per step time: {seconds * 1000 / steps:.3f} ms", flush=True)


class CheckpointConfig:
    """When ``ModelCheckpoint`` saves: every ``save_checkpoint_steps`` steps (or ``save_checkpoint_seconds``),
    keeping the last ``keep_checkpoint_max`` files, in ``format`` ("ckpt" or "safetensors"; with safetensors,
    as in MindSpore, ``enc_key``, ``enc_mode``, ``crc_check`` and ``exception_save`` keep their defaults).
    ``enc_key`` (encryption) is not supported: a ValueError, as ``save_checkpoint``'s."""

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save=False, crc_check=False,
                 remove_redundancy=False, format="ckpt", **kwargs):  # fmt: skip
        if save_checkpoint_steps is not None and (
            not isinstance(save_checkpoint_steps, int) or save_checkpoint_steps < 0
        ):
            raise ValueError(
                f"For 'CheckpointConfig', the 'save_checkpoint_steps' must be an int >= 0: {save_checkpoint_steps!r}."
            )
        self.save_checkpoint_steps = save_checkpoint_steps
        self.save_checkpoint_seconds = save_checkpoint_seconds
        self.keep_checkpoint_max = keep_checkpoint_max
        self.saved_network = saved_network
        self.append_dict = self._append_dict(append_info)
        if enc_key is not None:  # (a silent plain-text file where an encrypted one was asked for: refused)
            raise ValueError("For 'CheckpointConfig', encrypted checkpoints ('enc_key') are not supported.")
        self.enc_key = enc_key
        check_format("CheckpointConfig", format)
        if format == "safetensors" and (enc_key is not None or enc_mode != "AES-GCM" or crc_check or exception_save):
            raise ValueError(
                "For 'CheckpointConfig', with format='safetensors' the 'enc_key', 'enc_mode', 'crc_check' and "
                "'exception_save' must keep their defaults."
            )
        self.format = format
        # passed to save_checkpoint: sharded parameters gathered whole (or this rank's blocks); the CRC trailer
        self.integrated_save, self.crc_check = bool(integrated_save), bool(crc_check)

    @staticmethod
    def _append_dict(append_info) -> dict:
        """MindSpore's ``append_info``: a list of the names "epoch_num" / "step_num" (saved as the current epoch
        and step) and at most one dict of {name: int, float, bool or Tensor} saved with every checkpoint."""
        if append_info is None:
            return {}
        if not isinstance(append_info, list):
            raise TypeError(
                f"For 'CheckpointConfig', the 'append_info' must be a list, but got {type(append_info).__name__}."
            )
        out = {}
        for item in append_info:
            if item in ("epoch_num", "step_num"):
                out[item] = 0
            elif isinstance(item, dict):
                out.update(item)
            else:
                raise ValueError(
                    "For 'CheckpointConfig', each 'append_info' element must be 'epoch_num', 'step_num' or a dict, "
                    f"but got {item!r}."
                )
        return out


def _unused_prefix(directory: str, prefix: str) -> str:
    """MindSpore's rule for a rerun into a folder holding checkpoints of ``prefix`` already (``prefix-1_8.ckpt``,
    ``prefix_1-1_8.ckpt``, ...): this run's files are named ``prefix_N``, N one more than the largest there (1
    after the unnumbered ones), so that a resumed run does not overwrite the files it resumed from."""
    if not os.path.isdir(directory):
        return prefix
    n = 0
    for name in os.listdir(directory):
        if os.path.splitext(name)[1] not in (".ckpt", ".safetensors") or name.endswith("_breakpoint.ckpt"):
            continue
        rest = name[len(prefix) :] if name.startswith(prefix) else ""
        if rest.startswith("-"):
            n = max(n, 1)
        elif rest.startswith("_") and "-" in rest and rest[1 : rest.index("-")].isdigit():
            n = max(n, int(rest[1 : rest.index("-")]) + 1)
    return f"{prefix}_{n}" if n else prefix


class ModelCheckpoint(Callback):
    """Saves the network's parameters as ``{directory}/{prefix}-{epoch}_{step}.ckpt`` (MindSpore's names;
    ``.safetensors`` when the config's ``format`` says so; ``prefix_N`` when the folder holds its files already),
    as ``config`` says, and at the end of training. MindSpore's step rule: it saves at a step hook when
    ``save_checkpoint_steps`` steps have passed since its last save (in GRAPH_MODE sink mode, at the first
    sink end that many steps after it)."""

    def __init__(self, prefix="CKP", directory=None, config=None):
        self.directory = directory or os.getcwd()
        self.prefix = _unused_prefix(self.directory, prefix)
        self.config = config or CheckpointConfig()
        self.saved: list = []
        self._last_time = time.monotonic()
        self._last_step = 0  # cur_step_num at the last save (or the run's start)

    def on_train_begin(self, run_context):
        self._last_step = run_context.original_args().get("cur_step_num", 0)  # (a resumed run's start)
        super().on_train_begin(run_context)

    # MindSpore's hook names, which the training hooks call and which hand-written training loops (DCGAN's)
    # call themselves: ``ckpt_cb.step_end(run_context)``.
    def step_end(self, run_context):
        cb = run_context.original_args()
        steps, seconds = self.config.save_checkpoint_steps, self.config.save_checkpoint_seconds
        if steps:
            due = cb.cur_step_num >= self._last_step + steps
        else:
            due = seconds and time.monotonic() - self._last_time >= seconds
        if due and cb.cur_step_num != self._last_step:
            self._save(cb)

    def end(self, run_context):
        cb = run_context.original_args()
        if cb.cur_step_num != self._last_step:  # (else this step's file is written)
            self._save(cb)

    @staticmethod
    def _step_in_epoch(cb) -> int:
        return (cb.cur_step_num - 1) % cb.batch_num + 1

    def _save(self, cb):
        os.makedirs(self.directory, exist_ok=True)
        name = f"{self.prefix}-{cb.cur_epoch_num}_{self._step_in_epoch(cb)}.{self.config.format}"
        path = os.path.join(self.directory, name)
        append = dict(self.config.append_dict)
        if "epoch_num" in append:  # the progress the file records, as MindSpore writes it
            append["epoch_num"] = cb.cur_epoch_num
        if "step_num" in append:
            append["step_num"] = cb.cur_step_num
        network = self.config.saved_network if self.config.saved_network is not None else cb.train_network
        self.saved.append(save_checkpoint(network, path, integrated_save=self.config.integrated_save,
                                          append_dict=append or None, crc_check=self.config.crc_check,
                                          format=self.config.format))  # fmt: skip
        self._last_time, self._last_step = time.monotonic(), cb.cur_step_num
        while self.config.keep_checkpoint_max and len(self.saved) > self.config.keep_checkpoint_max:
            old = self.saved.pop(0)
            if os.path.exists(old):
                os.remove(old)

    @property
    def latest_ckpt_file_name(self):
        return self.saved[-1] if self.saved else None


class History(Callback):
    """``epoch`` (the epochs run) and ``history`` (``{"net_output": [per-epoch loss], metric: [...]}``)."""

    def __init__(self):
        self.epoch, self.history = [], {}

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        self.epoch.append(cb.cur_epoch_num)
        self.history.setdefault("net_output", []).append(loss_value(cb.net_outputs))
        for name, value in (cb.get("metrics") or {}).items():
            self.history.setdefault(name, []).append(value)


class LambdaCallback(Callback):
    """A callback of functions: ``LambdaCallback(on_train_step_end=lambda run_context: ...)``."""

    _HOOKS = ("on_train_begin", "on_train_epoch_begin", "on_train_step_begin", "on_train_step_end",
              "on_train_epoch_end", "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_step_begin",
              "on_eval_step_end", "on_eval_epoch_end", "on_eval_end")  # fmt: skip

    def __init__(self, **hooks):
        unknown = set(hooks) - set(self._HOOKS)
        if unknown:
            raise ValueError(f"For 'LambdaCallback', unknown hooks {sorted(unknown)}; hooks: {list(self._HOOKS)}.")
        for name, fn in hooks.items():
            setattr(self, name, fn)


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved by more than ``min_delta`` for ``patience`` epochs
    (MindSpore's and Keras' rule: each epoch without improvement counts; at ``patience`` it stops, so
    ``patience=0`` stops at the first). ``monitor``: "loss" (the epoch's last training loss), "eval_loss"
    (the validation loss of ``Model.fit``: its ``Loss`` metric) or the name of one of ``fit``'s metrics, averaged
    over the ranks in a parallel mode (``opforge/train/monitor.py``). ``mode`` "auto" minimises MindSpore's
    smaller-is-better names (losses, distances, errors) and maximises the rest. With ``restore_best_weights`` the
    network gets the parameters of its best epoch back when it stops."""

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False, mode="auto", baseline=None,
                 restore_best_weights=False):  # fmt: skip
        self.watched = Monitored("EarlyStopping", monitor, mode, min_delta)
        self.monitor, self.min_delta, self.patience, self.verbose = monitor, abs(min_delta), patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.best, self.wait, self.stopped_epoch, self._best_weights = baseline, 0, 0, None

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        value = self.watched.value(cb)
        if value is None:  # nothing to monitor this epoch (no validation ran)
            return
        if self.watched.improved(value, self.best):
            self.best, self.wait = value, 0
            if self.restore_best_weights:
                self._best_weights = [p.asnumpy().copy() for p in cb.network.trainable_params()]
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = cb.cur_epoch_num
            run_context.request_stop()
            if self._best_weights is not None:
                for p, w in zip(cb.network.trainable_params(), self._best_weights):
                    p.set_data(Tensor(w))
            if self.verbose:
                print(f"Epoch {self.stopped_epoch}: early stopping ({self.monitor} best {self.best}).", flush=True)


class ProgressBar(Callback):
    """A progress bar per epoch with the last loss (opforge's; MindSpore has none). ``Model.train`` and
    ``fit`` add one when standard output is a terminal and no ``LossMonitor`` prints the losses (``fit``
    prints each validation's metrics after the epoch's bar)."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console()
        self._progress = None

    def on_train_epoch_begin(self, run_context):
        cb = run_context.original_args()
        self._progress = Progress(
            TextColumn(f"epoch {cb.cur_epoch_num}/{cb.epoch_num}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("{task.fields[loss]}"), console=self.console,
        )  # fmt: skip
        self._task = self._progress.add_task("train", total=cb.batch_num, loss="")
        self._first_step = cb.cur_step_num
        self._progress.start()

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()  # (in GRAPH_MODE sink mode one hook ends a sink of steps)
        loss = loss_value(cb.net_outputs)
        self._progress.update(self._task, completed=cb.cur_step_num - self._first_step, loss=f"loss {loss:.4f}")

    def on_train_epoch_end(self, run_context):
        self._progress.stop()
