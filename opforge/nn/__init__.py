"""``opforge.nn``: cells, layers, losses, optimizers, training wrappers and checkpoints (MindSpore's
``mindspore.nn``), all computing with primitives so they run on the registry's kernels and
differentiate through their bprops.

    net = nn.SequentialCell(nn.Dense(64, 128, activation="relu"), nn.Dense(128, 10))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Adam(net.trainable_params()))
    for x, y in batches:
        step(x, y)

``nn.set_seed(seed)`` seeds the weight initializers and Dropout masks.
"""

import sys
import types

from opforge.bprop.forward import Jvp, Vjp  # MindSpore 1.x's nn.Jvp / nn.Vjp
from opforge.nn import (
    activation,
    cell,
    checkpoint,
    dynamic_lr,
    embedding_lookup,
    grad_reducer,
    graph_cell,
    image_quality,
    init,
    layers,
    layers_combined,
    layers_conv,
    layers_fold,
    layers_image,
    layers_legacy,
    learning_rate_schedule,
    loss,
    loss_ctc,
    loss_scale,
    metric_base,
    micro_batch,
    normalization,
    normalization_sync,
    optim,
    optim_extra,
    optim_lazy_adam,
    optim_thor,
    padding,
    pooling,
    rnn,
    thor_layer,
    transformer,
    wrap,
)
from opforge.nn.activation import *  # noqa: F403
from opforge.nn.cell import *  # noqa: F403
from opforge.nn.checkpoint import *  # noqa: F403
from opforge.nn.dynamic_lr import *  # noqa: F403
from opforge.nn.embedding_lookup import *  # noqa: F403
from opforge.nn.grad_reducer import *  # noqa: F403
from opforge.nn.graph_cell import *  # noqa: F403
from opforge.nn.image_quality import *  # noqa: F403
from opforge.nn.init import get_seed, initializer, set_seed
from opforge.nn.layers import *  # noqa: F403
from opforge.nn.layers_combined import *  # noqa: F403
from opforge.nn.layers_conv import *  # noqa: F403
from opforge.nn.layers_conv_transpose import *  # noqa: F403
from opforge.nn.layers_fold import *  # noqa: F403
from opforge.nn.layers_image import *  # noqa: F403
from opforge.nn.layers_legacy import *  # noqa: F403
from opforge.nn.learning_rate_schedule import *  # noqa: F403
from opforge.nn.loss import *  # noqa: F403
from opforge.nn.loss_ctc import *  # noqa: F403
from opforge.nn.loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell
from opforge.nn.metric_base import rearrange_inputs
from opforge.nn.metrics import (
    F1,
    MAE,
    MSE,
    Accuracy,
    ConfusionMatrix,
    Dice,
    Fbeta,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)  # fmt: skip
from opforge.nn.metrics_roc import ROC, auc
from opforge.nn.metrics_segmentation import ConfusionMatrixMetric, HausdorffDistance
from opforge.nn.micro_batch import *  # noqa: F403
from opforge.nn.normalization import *  # noqa: F403
from opforge.nn.normalization_sync import *  # noqa: F403
from opforge.nn.optim import *  # noqa: F403
from opforge.nn.optim_extra import *  # noqa: F403
from opforge.nn.optim_lazy_adam import *  # noqa: F403
from opforge.nn.optim_thor import *  # noqa: F403
from opforge.nn.padding import *  # noqa: F403
from opforge.nn.pipeline import PipelineCell, PipelineGradReducer
from opforge.nn.pooling import *  # noqa: F403
from opforge.nn.rnn import *  # noqa: F403
from opforge.nn.thor_layer import *  # noqa: F403
from opforge.nn.transformer import *  # noqa: F403
from opforge.nn.utils import no_init_parameters
from opforge.nn.wrap import *  # noqa: F403

_STAR_MODULES = (
    activation,
    cell,
    checkpoint,
    dynamic_lr,
    embedding_lookup,
    grad_reducer,
    graph_cell,
    image_quality,
    layers,
    layers_combined,
    layers_conv,
    layers_fold,
    layers_image,
    layers_legacy,
    learning_rate_schedule,
    loss,
    loss_ctc,
    micro_batch,
    normalization,
    normalization_sync,
    optim,
    optim_extra,
    optim_lazy_adam,
    optim_thor,
    padding,
    pooling,
    rnn,
    thor_layer,
    transformer,
    wrap,
)

# Every module's public names (its __all__), and those of the modules whose helpers stay unexported.
__all__ = [
    "Jvp", "Vjp", "init", "get_seed", "initializer", "set_seed", "DynamicLossScaleUpdateCell",
    "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell", "F1", "MAE", "MSE", "Accuracy", "ConfusionMatrix",
    "Dice", "Fbeta", "Loss", "Metric", "Precision", "Recall", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
    "TopKCategoricalAccuracy", "PipelineCell", "ConfusionMatrixMetric", "HausdorffDistance", "ROC", "auc",
    "rearrange_inputs", "no_init_parameters", "PipelineGradReducer",
    *(name for module in _STAR_MODULES for name in module.__all__),
]  # fmt: skip


def _register_mindspore_module_paths():
    """MindSpore's deeper module paths that model-zoo scripts import from (``from mindspore.nn.optim.momentum
    import Momentum``, ``from mindspore.nn.loss.loss import LossBase``, ``from mindspore.nn.wrap.cell_wrapper
    import WithLossCell``, ...): ``opforge.nn.optim``, ``opforge.nn.loss`` and ``opforge.nn.wrap`` are modules,
    not packages, so each such path is registered in ``sys.modules`` as the opforge module that holds its names
    (the import system returns a registered name before it looks for a package)."""
    paths = {
        "loss.loss": loss,
        "metrics.metric": metric_base,  # Metric, rearrange_inputs
        "optim.optimizer": optim,
        "optim.momentum": optim,
        "optim.sgd": optim,
        "optim.adam": optim,
        "optim.rmsprop": optim,
        "optim.ada_grad": optim,
        "optim.lamb": optim,
        "optim.lazyadam": optim_lazy_adam,
        "optim.ftrl": optim_extra,
        "optim.proximal_ada_grad": optim_extra,
        "optim.adamax": optim_extra,
        "optim.adadelta": optim_extra,
        "optim.asgd": optim_extra,
        "optim.rprop": optim_extra,
        "optim.lars": optim_extra,
        "optim.thor": optim_thor,
        "wrap.cell_wrapper": wrap,
        "wrap.loss_scale": loss_scale,
        "wrap.grad_reducer": grad_reducer,
    }
    for path, module in paths.items():
        sys.modules.setdefault(f"{__name__}.{path}", module)
    # MindSpore's nn.layer package holds its layers and containers (``from mindspore.nn import layer as L``;
    # ``L.CellList``, ``nn.layer.Dense``): a module of nn's public names.
    layer = types.ModuleType(f"{__name__}.layer", "MindSpore's nn.layer: opforge.nn's cells.")
    layer.__dict__.update({name: globals()[name] for name in __all__ if name in globals()})
    sys.modules.setdefault(layer.__name__, layer)
    globals()["layer"] = sys.modules[layer.__name__]
    # ``from mindspore.nn.layer.activation import get_activation`` (the zoo's NCF, ...): the same names.
    sys.modules.setdefault(f"{layer.__name__}.activation", globals()["layer"])
    globals()["layer"].activation = globals()["layer"]
    # MindSpore's nn.optim package exports every optimizer (``from mindspore.nn.optim import Adam, FTRL``).
    for module in (optim_extra, optim_lazy_adam, optim_thor):
        for name in module.__all__:
            setattr(optim, name, getattr(module, name))
    # MindSpore's nn.wrap exports the loss-scale cells (``from mindspore.nn.wrap import FixedLossScaleUpdateCell``).
    for name in ("DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"):
        setattr(wrap, name, getattr(loss_scale, name))
    wrap.MicroBatchInterleaved = micro_batch.MicroBatchInterleaved  # (mindspore.nn.wrap.cell_wrapper has it)
    wrap.GradAccumulationCell = micro_batch.GradAccumulationCell  # (and its older gradient accumulation cell)


_register_mindspore_module_paths()
