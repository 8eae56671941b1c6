"""The quantity a callback watches at each epoch's end (``EarlyStopping``, ``ReduceLROnPlateau``), as MindSpore's
callbacks read it: "loss" (the epoch's last training loss), "eval_loss" (the validation loss of ``Model.fit``) or
the name of one of ``fit``'s metrics; averaged over the ranks in a parallel mode, so that every rank decides
alike; better when smaller for MindSpore's list of such names (``mode="auto"``), else when larger."""

from __future__ import annotations

import numpy as np

from opforge.communication.management import GlobalComm, get_group_size
from opforge.parallel_context import ParallelMode, get_auto_parallel_context
from opforge.primitives.comm_ops import AllReduce
from opforge.tensor import Tensor

SMALLER_BETTER = (
    "hausdorff_distance", "mae", "mse", "loss", "perplexity", "mean_surface_distance", "root_mean_square_distance",
    "eval_loss",
)  # fmt: skip


def loss_value(outputs) -> float:
    """The training loss in a step's outputs (the first one when there are several)."""
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0]
    if isinstance(outputs, Tensor):
        return float(np.mean(outputs.asnumpy()))
    return float(outputs)


class Monitored:
    def __init__(self, where: str, monitor: str, mode: str, min_delta):
        if not isinstance(monitor, str):
            raise TypeError(f"For '{where}', the 'monitor' must be a str, but got {type(monitor).__name__}.")
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"For '{where}', the 'mode' must be 'auto', 'min' or 'max', but got {mode!r}.")
        self.monitor, self.min_delta = monitor, abs(min_delta)
        self.smaller_better = mode == "min" or (mode == "auto" and monitor in SMALLER_BETTER)

    def worst(self) -> float:
        return np.inf if self.smaller_better else -np.inf

    def improved(self, value: float, best) -> bool:
        """Whether ``value`` beats ``best`` by more than ``min_delta`` (any value beats a ``best`` of None)."""
        if best is None:
            return True
        return value < best - self.min_delta if self.smaller_better else value > best + self.min_delta

    def value(self, cb):
        """The monitored value of this epoch (None when there is none: no validation ran), averaged over the ranks
        in a parallel mode."""
        metrics = cb.get("metrics") or {}
        if self.monitor == "loss":
            value = loss_value(cb.net_outputs)
        elif self.monitor in metrics:
            value = metrics[self.monitor]
        elif self.monitor == "eval_loss":
            value = next((v for name, v in metrics.items() if name in ("loss", "eval_loss")), None)
        else:
            value = None
        if value is None:
            return None
        if np.ndim(value) != 0:
            raise ValueError(f"The monitored '{self.monitor}' must be a scalar, but got shape {np.shape(value)}.")
        return _rank_mean(float(value))


def _rank_mean(value: float) -> float:
    if get_auto_parallel_context("parallel_mode") == ParallelMode.STAND_ALONE or not GlobalComm.INITED:
        return value
    size = get_group_size()
    if size == 1:
        return value
    return float(AllReduce()(Tensor(np.array(value, np.float32))).asnumpy()) / size
