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
    Hardtanh,
    HShrink,
    LogSigmoid,
    Mish,
    PReLU,
    SeLU,
    SiLU,
    SoftShrink,
    Softsign,
    Tanhshrink,
)
from opforge.nn.cell import Cell, CellList, SequentialCell
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
    Dense,
    Dropout,
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
from opforge.nn.layers_conv import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, Conv1d, Conv2d, MaxPool1d, MaxPool2d
from opforge.nn.layers_image import PixelShuffle, Upsample
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
    CrossEntropyLoss,
    KLDivLoss,
    L1Loss,
    LossBase,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
    SoftmaxCrossEntropyWithLogits,
)
from opforge.nn.loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell
from opforge.nn.metrics import (
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
from opforge.nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm2d, LayerNorm
from opforge.nn.optim import SGD, Adagrad, Adam, AdamWeightDecay, Momentum, Optimizer, RMSProp
from opforge.nn.pipeline import PipelineCell
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
    "PixelShuffle",
    "Upsample",
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
]
