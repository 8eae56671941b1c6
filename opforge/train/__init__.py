"""``opforge.train``: MindSpore's ``mindspore.train``: ``Model`` (train, eval, predict, fit), the callbacks
and the metrics. See docs/train.md."""

from opforge.train import callback, metrics
from opforge.train.callback import (
    Callback,
    CheckpointConfig,
    EarlyStopping,
    History,
    LambdaCallback,
    LossMonitor,
    ModelCheckpoint,
    ProgressBar,
    RunContext,
    TimeMonitor,
)
from opforge.train.metrics import (
    MAE,
    MSE,
    Accuracy,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)
from opforge.train.model import Model

__all__ = [
    "Model", "Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig",
    "ProgressBar", "History", "LambdaCallback", "EarlyStopping", "Metric", "Accuracy", "Loss", "MAE", "MSE",
    "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
    "Precision", "Recall", "callback", "metrics",
]  # fmt: skip
