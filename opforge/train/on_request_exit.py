"""MindSpore's ``OnRequestExit`` callback: stop training (or evaluation) when asked, after saving a checkpoint
and a MINDIR of the network.

A request is a signal (``sig``, SIGTERM by default) or ``{"GracefulExit": 1}`` in the JSON ``config_file``.
Without ``MS_ENABLE_GRACEFUL_EXIT=1`` a signal makes the run stop at the epoch's end (``on_train_end`` saves).
With it (the training step then holds ``graceful_exit`` and ``graceful_init``: ``nn.TrainOneStepCell``,
``opforge/utils/exit_by_request.py``) a request is read at each step's beginning: in one process it sets
``graceful_exit``; with several ranks it sets this rank's ``graceful_init``, and the step turns
``graceful_exit`` on when every rank has asked. At the step's end the run then saves
``<directory>/rank_<id>/<file_name>_train.ckpt`` (with the epoch, step, batch and global step, and the loss
scale) and ``.mindir``, and stops. ``<id>`` is the process's rank under several ranks (MindSpore's is the
device id, which every opforge rank shares), else the context's ``device_id``; a checkpoint there is loaded
back when training (or evaluation) begins."""

from __future__ import annotations

import json
import os
import signal
import threading

import numpy as np

from opforge import context
from opforge import dtype as mstype
from opforge import log as logger
from opforge.communication.management import GlobalComm, get_group_size, get_rank
from opforge.ir import export
from opforge.nn.checkpoint import load_checkpoint, save_checkpoint
from opforge.parallel_context import ParallelMode, get_auto_parallel_context
from opforge.tensor import Tensor
from opforge.train.callback_base import Callback

__all__ = ["OnRequestExit"]

_KEY = "GracefulExit"


def _check(name: str, value, kind):
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise ValueError(f"For 'OnRequestExit', the '{name}' must be {kind.__name__}, but got {type(value).__name__}.")
    return value


class OnRequestExit(Callback):
    """``OnRequestExit(save_ckpt=True, save_mindir=True, file_name="Net", directory="./", config_file=None,
    sig=signal.SIGTERM)``: the module's docstring. ValueError for arguments of other types and for SIGKILL."""

    def __init__(self, save_ckpt=True, save_mindir=True, file_name="Net", directory="./", config_file=None,
                 sig=signal.SIGTERM):  # fmt: skip
        self.save_ckpt = _check("save_ckpt", save_ckpt, bool)
        self.save_mindir = _check("save_mindir", save_mindir, bool)
        self.sig = _check("sig", sig, int)
        _check("file_name", file_name, str)
        if directory is not None:
            _check("directory", directory, str)
        if hasattr(signal, "SIGKILL") and self.sig == signal.SIGKILL:
            raise ValueError("For 'OnRequestExit', a request cannot be sent by SIGKILL (it cannot be caught).")
        self.exit = False  # a signal came
        self._previous_handler = None  # the signal's handler before the run: given back at its end
        self.lock = threading.Lock()
        self.remote_config_file = config_file
        self.use_graceful = os.environ.get("MS_ENABLE_GRACEFUL_EXIT") == "1"
        self.is_distributed = GlobalComm.INITED and get_group_size() > 1
        self.stop_train = False
        self.need_do_step_end = False
        folder = os.path.join(os.getcwd() if directory is None else directory, f"rank_{self._rank_id()}")
        if save_ckpt or save_mindir:
            os.makedirs(folder, exist_ok=True)
        self.train_name = os.path.join(folder, f"{file_name}_train")
        self.eval_name = os.path.join(folder, f"{file_name}_eval")

    def _rank_id(self) -> int:
        return get_rank() if self.is_distributed else context.get_context("device_id")

    def on_train_begin(self, run_context):
        self._listen()
        if self.save_ckpt and os.path.isfile(f"{self.train_name}.ckpt"):
            load_checkpoint(f"{self.train_name}.ckpt", net=run_context.original_args().train_network)

    def on_train_step_begin(self, run_context):
        with self.lock:
            if not self.use_graceful or not (self.exit or self._requested_in_file()):
                return
            for param in run_context.original_args().train_network.get_parameters():
                if not self.is_distributed and param.name == "graceful_exit":
                    param.set_data(Tensor(True, mstype.bool_))
                    self.need_do_step_end = True
                    return
                if self.is_distributed and param.name == "graceful_init":
                    param.set_data(Tensor(np.array([1], np.int32)))
                    self.need_do_step_end = True
                    return

    def on_train_step_end(self, run_context):
        self._stop_if_agreed(run_context)

    def on_train_epoch_end(self, run_context):
        self._stop_if_agreed(run_context)

    def on_train_end(self, run_context):
        self._stop_listening()
        if self.exit:
            cb = run_context.original_args()
            self._save(cb.train_network, self.train_name, cb.get("train_dataset_element"))

    def on_eval_begin(self, run_context):
        self._listen()
        if not self.save_ckpt:
            return
        for name in (self.eval_name, self.train_name):
            if os.path.isfile(f"{name}.ckpt"):
                load_checkpoint(f"{name}.ckpt", net=run_context.original_args().eval_network)
                return

    def on_eval_step_end(self, run_context):
        if self.exit:
            run_context.request_stop()

    def on_eval_end(self, run_context):
        self._stop_listening()
        if self.exit:
            cb = run_context.original_args()
            self._save(cb.eval_network, self.eval_name, cb.get("eval_dataset_element"))

    def _listen(self) -> None:
        """Catch the signal while the run goes on (the main thread only: Python's signals are the main thread's)."""
        if threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(self.sig, self._handle_signal)

    def _stop_listening(self) -> None:
        """The signal's handler as before the run (MindSpore keeps its own installed: a later SIGTERM would only
        set a flag, and forked workers inheriting it would outlive their pool's terminate)."""
        if self._previous_handler is not None and threading.current_thread() is threading.main_thread():
            signal.signal(self.sig, self._previous_handler)
            self._previous_handler = None

    def _handle_signal(self, signum, frame):
        logger.debug(f"OnRequestExit: signal {signum}")
        self.exit = True

    def _requested_in_file(self) -> bool:
        path = self.remote_config_file
        if path is None or not os.path.exists(path):
            return False
        try:
            with open(path) as f:
                config = json.load(f)
        except json.JSONDecodeError as e:
            logger.warning(f"OnRequestExit: cannot parse the JSON file '{path}': {e}")
            return False
        return config.get(_KEY) == 1

    def _stop_if_agreed(self, run_context) -> None:
        """Once the step turned ``graceful_exit`` on: save (once) and stop."""
        with self.lock:
            if self.stop_train or not self.need_do_step_end:
                return
            cb = run_context.original_args()
            net = cb.train_network
            flag = next((p for p in net.get_parameters() if p.name == "graceful_exit"), None)
            if flag is None or not bool(flag.asnumpy()):
                return
            logger.warning("Graceful exit is triggered, stop training.")
            if self.save_ckpt:
                save_checkpoint(net, self.train_name, integrated_save=self._integrated(), append_dict=self._state(cb))
            if self.save_mindir and cb.get("train_dataset_element") is not None:
                export(net, *cb.train_dataset_element, file_name=self.train_name, file_format="MINDIR")
            run_context.request_stop()
            self.stop_train = True

    def _integrated(self) -> bool:
        return not self.is_distributed or get_auto_parallel_context("parallel_mode") == ParallelMode.AUTO_PARALLEL

    @staticmethod
    def _state(cb) -> dict:
        state = {"epoch_num": cb.cur_epoch_num, "step_num": cb.cur_step_num, "batch_num": cb.batch_num}
        if cb.get("loss_scale_mananger") is not None:  # (MindSpore's spelling)
            state["loss_scale"] = cb.loss_scale_mananger.get_loss_scale()
        optimizer = cb.optimizer if cb.get("optimizer") is not None else cb.network.optimizer
        state["global_step"] = int(optimizer.global_step.asnumpy())
        return state

    def _save(self, net, name: str, inputs) -> None:
        if self.save_ckpt:
            save_checkpoint(net, ckpt_file_name=name)
        if self.save_mindir and inputs is not None:
            export(net, *inputs, file_name=name, file_format="MINDIR")
