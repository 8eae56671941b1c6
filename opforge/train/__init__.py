"""``opforge.train``: MindSpore's ``mindspore.train``: ``Model`` (train, eval, predict, fit), ``data_sink``,
the callbacks, the metrics, the loss-scale managers and checkpoints (and the module paths ``train.serialization`` and
``train.loss_scale_manager`` model-zoo scripts import them from). See docs/train.md."""

from opforge.train import callback, loss_scale_manager, metrics, serialization, train_thor
from opforge.train import module_paths as _module_paths  # noqa: F401 (train.callback._callback, ...)
from opforge.train.callback import (
    BackupAndRestore,
    Callback,
    CheckpointConfig,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    LossMonitor,
    ModelCheckpoint,
    OnRequestExit,
    ProgressBar,
    ReduceLROnPlateau,
    RunContext,
    TimeMonitor,
)
from opforge.train.dataset_helper import DatasetHelper, connect_network_with_dataset
from opforge.train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from opforge.train.metrics import (
    MAE,
    MSE,
    Accuracy,
    ConfusionMatrixMetric,
    HausdorffDistance,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)
from opforge.train.model import Model
from opforge.train.serialization import (
    build_searched_strategy,
    export,
    load,
    load_checkpoint,
    load_distributed_checkpoint,
    load_param_into_net,
    merge_sliced_parameter,
    save_checkpoint,
)
from opforge.train.sink import data_sink
from opforge.train.summary import SummaryCollector, SummaryRecord
from opforge.train.train_thor import ConvertModelUtils, ConvertNetUtils

__all__ = [
    "Model", "Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig",
    "ProgressBar", "History", "LambdaCallback", "EarlyStopping", "Metric", "Accuracy", "Loss", "MAE", "MSE",
    "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
    "Precision", "Recall", "ConfusionMatrixMetric", "HausdorffDistance", "callback", "metrics", "serialization",
    "loss_scale_manager",
    "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager",
    "save_checkpoint", "load_checkpoint", "load_param_into_net", "export", "load", "data_sink", "SummaryCollector",
    "SummaryRecord", "build_searched_strategy", "merge_sliced_parameter", "load_distributed_checkpoint",
    "train_thor", "ConvertModelUtils", "ConvertNetUtils", "LearningRateScheduler", "DatasetHelper",
    "connect_network_with_dataset", "OnRequestExit", "ReduceLROnPlateau", "BackupAndRestore",
]  # fmt: skip
