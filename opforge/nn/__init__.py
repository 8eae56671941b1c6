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

from opforge.bprop.forward import Jvp, Vjp  # MindSpore 1.x's nn.Jvp / nn.Vjp
from opforge.nn import init
from opforge.nn.activation import (
    CELU,
    ELU,
    GLU,
    FastGelu,
    Hardtanh,
    HShrink,
    LogSigmoid,
    Mish,
    PReLU,
    SeLU,
    SiLU,
    Softmax2d,
    Softmin,
    SoftShrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from opforge.nn.cell import Cell, CellDict, CellList, SequentialCell
from opforge.nn.checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
from opforge.nn.dynamic_lr import (
    cosine_decay_lr,
    exponential_decay_lr,
    inverse_decay_lr,
    natural_exp_decay_lr,
    piecewise_constant_lr,
    polynomial_decay_lr,
    warmup_lr,
)
from opforge.nn.grad_reducer import DistributedGradReducer
from opforge.nn.init import get_seed, initializer, set_seed
from opforge.nn.layers import (
    GELU,
    ClipByNorm,
    Dense,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    Elu,
    Embedding,
    Flatten,
    HSigmoid,
    HSwish,
    Identity,
    LeakyReLU,
    LogSoftmax,
    Pad,
    ReLU,
    ReLU6,
    Sigmoid,
    Softmax,
    Softplus,
    Tanh,
    get_activation,
)
from opforge.nn.layers_conv import (
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    Conv1d,
    Conv2d,
    Conv2dTranspose,
    Conv3d,
    MaxPool1d,
    MaxPool2d,
    Unfold,
)
from opforge.nn.layers_image import CentralCrop, PixelShuffle, PixelUnshuffle, ResizeBilinear, Upsample
from opforge.nn.learning_rate_schedule import (
    CosineDecayLR,
    ExponentialDecayLR,
    InverseDecayLR,
    LearningRateSchedule,
    NaturalExpDecayLR,
    PolynomialDecayLR,
    WarmUpLR,
)
from opforge.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    DiceLoss,
    FocalLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    LossBase,
    MAELoss,
    MarginRankingLoss,
    MSELoss,
    MultiClassDiceLoss,
    MultilabelMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    RMSELoss,
    SmoothL1Loss,
    SoftMarginLoss,
    SoftmaxCrossEntropyWithLogits,
    TripletMarginLoss,
)
from opforge.nn.loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell
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
)
from opforge.nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm2d, LayerNorm
from opforge.nn.optim import SGD, Adagrad, Adam, AdamWeightDecay, Lamb, Momentum, Optimizer, RMSProp
from opforge.nn.optim_extra import ASGD, FTRL, LARS, Adadelta, AdaMax, ProximalAdagrad, Rprop
from opforge.nn.padding import (
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad2d,
)
from opforge.nn.pipeline import PipelineCell
from opforge.nn.pooling import AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool3d, MaxPool3d
from opforge.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from opforge.nn.transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from opforge.nn.wrap import TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = [
    "Lamb",
    "ClipByNorm",
    "Conv2dTranspose",
    "DynamicLossScaleUpdateCell",
    "FixedLossScaleUpdateCell",
    "TrainOneStepWithLossScaleCell",
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "Metric",
    "Accuracy",
    "Loss",
    "MAE",
    "MSE",
    "Precision",
    "Recall",
    "TopKCategoricalAccuracy",
    "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",  # (MindSpore 1.x's nn.metrics; also opforge.train's)
    "Jvp",
    "Vjp",
    "init",
    "set_seed",
    "get_seed",
    "initializer",
    "Cell",
    "SequentialCell",
    "Identity",
    "Pad",
    "Embedding",
    "PipelineCell",
    "LSTM",
    "LSTMCell",
    "GRU",
    "GRUCell",
    "RNN",
    "RNNCell",
    "CellList",
    "Dense",
    "Conv2d",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "Conv1d",
    "MaxPool1d",
    "AvgPool1d",
    "Conv3d",
    "Unfold",
    "PixelShuffle",
    "CentralCrop",
    "Upsample",
    "ResizeBilinear",
    "Flatten",
    "Dropout",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "InstanceNorm2d",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Elu",
    "Softmax",
    "LogSoftmax",
    "get_activation",
    "GELU",
    "HSigmoid",
    "ReLU6",
    "HSwish",
    "LeakyReLU",
    "Softplus",
    "SeLU",
    "CELU",
    "Softsign",
    "HShrink",
    "SoftShrink",
    "Mish",
    "SiLU",
    "LogSigmoid",
    "Hardtanh",
    "Tanhshrink",
    "PReLU",
    "LossBase",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "BCEWithLogitsLoss",
    "NLLLoss",
    "SoftmaxCrossEntropyWithLogits",
    "CrossEntropyLoss",
    "BCELoss",
    "KLDivLoss",
    "FocalLoss",
    "CosineEmbeddingLoss",
    "HuberLoss",
    "MarginRankingLoss",
    "TripletMarginLoss",
    "HingeEmbeddingLoss",
    "SoftMarginLoss",
    "MultiMarginLoss",
    "MultilabelMarginLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "RMSELoss",
    "MAELoss",
    "DiceLoss",
    "MultiClassDiceLoss",
    "Optimizer",
    "SGD",
    "Momentum",
    "Adam",
    "RMSProp",
    "Adagrad",
    "AdamWeightDecay",
    # learning-rate schedules (Cells) and dynamic learning rates (lists)
    "LearningRateSchedule",
    "ExponentialDecayLR",
    "NaturalExpDecayLR",
    "InverseDecayLR",
    "CosineDecayLR",
    "PolynomialDecayLR",
    "WarmUpLR",
    "piecewise_constant_lr",
    "exponential_decay_lr",
    "natural_exp_decay_lr",
    "inverse_decay_lr",
    "cosine_decay_lr",
    "polynomial_decay_lr",
    "warmup_lr",
    "WithLossCell",
    "WithEvalCell",
    "TrainOneStepCell",
    "DistributedGradReducer",
    "save_checkpoint",
    "load_checkpoint",
    "load_param_into_net",
    # MindSpore 2.x cells added with tests/test_nn_extra.py
    "ELU", "Softmin", "Softmax2d", "GLU", "Threshold", "FastGelu", "Dropout1d", "Dropout2d", "Dropout3d",
    "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "PixelUnshuffle",
    "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxPool3d", "AvgPool3d", "BatchNorm3d",
    "CellDict", "F1", "Fbeta", "Dice", "ConfusionMatrix", "AdaMax", "Adadelta", "Rprop", "ASGD",
    "ProximalAdagrad", "FTRL", "LARS",
]  # fmt: skip


def _register_mindspore_module_paths():
    """MindSpore's deeper module paths that model-zoo scripts import from (``from mindspore.nn.optim.momentum
    import Momentum``, ``from mindspore.nn.loss.loss import LossBase``, ``from mindspore.nn.wrap.cell_wrapper
    import WithLossCell``, ...): ``opforge.nn.optim``, ``opforge.nn.loss`` and ``opforge.nn.wrap`` are modules,
    not packages, so each such path is registered in ``sys.modules`` as the opforge module that holds its names
    (the import system returns a registered name before it looks for a package)."""
    import sys

    from opforge.nn import grad_reducer, loss, loss_scale, optim, wrap

    paths = {
        "loss.loss": loss,
        "optim.optimizer": optim,
        "optim.momentum": optim,
        "optim.sgd": optim,
        "optim.adam": optim,
        "optim.rmsprop": optim,
        "optim.ada_grad": optim,
        "optim.lamb": optim,
        "wrap.cell_wrapper": wrap,
        "wrap.loss_scale": loss_scale,
        "wrap.grad_reducer": grad_reducer,
    }
    for path, module in paths.items():
        sys.modules.setdefault(f"{__name__}.{path}", module)


_register_mindspore_module_paths()
