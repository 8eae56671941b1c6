"""VGG16 as the model zoo writes it for CIFAR-10 (official/cv/VGG/vgg16: src/vgg.py, src/utils/var_init.py,
src/utils/util.py, src/warmup_step_lr.py, src/crossentropy.py): a config-driven stack of 3x3 convolutions with
XavierUniform weights from ``initializer(name, shape, dtype)``, BatchNorm, max pooling and a Dense/Dropout
classifier; user-written ``Initializer`` subclasses (Kaiming) that fill a NumPy array in ``_initialize``,
re-initialisation through ``cells_and_names`` and ``Parameter.set_data``, parameter groups without weight decay
on biases and BN gammas/betas, a per-step learning-rate array and a one-hot, label-smoothed ``LossBase`` loss."""

import math
from collections import Counter
from functools import reduce

import numpy as np
from opforge.nn.loss.loss import LossBase

import opforge.common.dtype as mstype
import opforge.nn as nn
from opforge import Tensor
from opforge.common import initializer as init
from opforge.common.initializer import initializer
from opforge.ops import functional as F
from opforge.ops import operations as P

# ---- src/utils/var_init.py -------------------------------------------------------------------------------------


def _calculate_gain(nonlinearity, param=None):
    """The gain a He initialisation scales by, per activation (1 for linear layers, sqrt(2) for ReLU, ...)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _assignment(arr, num):
    if arr.shape == ():
        arr = arr.reshape(1)
        arr[:] = num
        return arr.reshape(())
    arr[:] = num
    return arr


def _calculate_in_and_out(arr):
    """(fan_in, fan_out) of a weight array or Parameter: dims 1 and 0 times the receptive field."""
    if len(arr.shape) < 2:
        raise ValueError("If initialize data with xavier uniform, the dimension of data must greater than 1.")
    n_in, n_out = arr.shape[1], arr.shape[0]
    if len(arr.shape) > 2:
        field = reduce(lambda x, y: x * y, arr.shape[2:])
        n_in, n_out = n_in * field, n_out * field
    return n_in, n_out


def _select_fan(array, mode):
    fan_in, fan_out = _calculate_in_and_out(array)
    return fan_in if mode.lower() == "fan_in" else fan_out


class KaimingInit(init.Initializer):
    def __init__(self, a=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__()
        self.mode = mode
        self.gain = _calculate_gain(nonlinearity, a)

    def _initialize(self, arr):
        pass


class KaimingUniform(KaimingInit):
    def _initialize(self, arr):
        bound = math.sqrt(3.0) * self.gain / math.sqrt(_select_fan(arr, self.mode))
        _assignment(arr, np.random.uniform(-bound, bound, arr.shape))


class KaimingNormal(KaimingInit):
    def _initialize(self, arr):
        std = self.gain / math.sqrt(_select_fan(arr, self.mode))
        _assignment(arr, np.random.normal(0, std, arr.shape))


def default_recurisive_init(custom_cell):
    for _, cell in custom_cell.cells_and_names():
        if isinstance(cell, (nn.Conv2d, nn.Dense)):
            cell.weight.set_data(init.initializer(KaimingUniform(a=math.sqrt(5)), cell.weight.shape, cell.weight.dtype))
            if cell.bias is not None:
                fan_in, _ = _calculate_in_and_out(cell.weight)
                bound = 1 / math.sqrt(fan_in)
                cell.bias.set_data(init.initializer(init.Uniform(bound), cell.bias.shape, cell.bias.dtype))


# ---- src/vgg.py -------------------------------------------------------------------------------------------------


def _make_layer(base, args, batch_norm):
    layers = []
    in_channels = 3
    padding = 0 if args.pad_mode == "same" else 1
    for v in base:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            continue
        weight = "ones"
        if args.initialize_mode == "XavierUniform":
            weight = initializer("XavierUniform", shape=(v, in_channels, 3, 3), dtype=mstype.float32)
        conv2d = nn.Conv2d(
            in_channels=in_channels,
            out_channels=v,
            kernel_size=3,
            padding=padding,
            pad_mode=args.pad_mode,
            has_bias=args.has_bias,
            weight_init=weight,
        )
        layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU()] if batch_norm else [conv2d, nn.ReLU()]
        in_channels = v
    return nn.SequentialCell(layers)


class Vgg(nn.Cell):
    def __init__(
        self, base, num_classes=1000, batch_norm=False, batch_size=1, args=None, phase="train", include_top=True
    ):
        super().__init__()
        _ = batch_size
        self.image_h = args.image_size[0]
        self.image_w = args.image_size[1]
        self.layers = _make_layer(base, args, batch_norm=batch_norm)
        self.include_top = include_top
        self.flatten = nn.Flatten()
        dropout_ratio = 0.5
        if not args.has_dropout or phase == "test":
            dropout_ratio = 1.0
        hidden = args.hidden
        self.classifier = nn.SequentialCell(
            [
                nn.Dense(base[-2] * (self.image_h // 32) * (self.image_w // 32), hidden),
                nn.ReLU(),
                nn.Dropout(p=1 - dropout_ratio),
                nn.Dense(hidden, hidden),
                nn.ReLU(),
                nn.Dropout(p=1 - dropout_ratio),
                nn.Dense(hidden, num_classes),
            ]
        )
        if args.initialize_mode == "KaimingNormal":
            default_recurisive_init(self)
            self.custom_init_weight()

    def construct(self, x):
        x = self.layers(x)
        if self.include_top:
            x = self.flatten(x)
            x = self.classifier(x)
        return x

    def custom_init_weight(self):
        for _, cell in self.cells_and_names():
            if isinstance(cell, nn.Conv2d):
                cell.weight.set_data(
                    init.initializer(
                        KaimingNormal(a=math.sqrt(5), mode="fan_out", nonlinearity="relu"),
                        cell.weight.shape,
                        cell.weight.dtype,
                    )
                )
                if cell.bias is not None:
                    cell.bias.set_data(init.initializer("zeros", cell.bias.shape, cell.bias.dtype))
            elif isinstance(cell, nn.Dense):
                cell.weight.set_data(init.initializer(init.Normal(0.01), cell.weight.shape, cell.weight.dtype))
                if cell.bias is not None:
                    cell.bias.set_data(init.initializer("zeros", cell.bias.shape, cell.bias.dtype))


def vgg16_cfg(width):
    """The '16' configuration of the zoo, every width divided by 64 / ``width``."""
    w = [width, width * 2, width * 4, width * 8, width * 8]
    return [w[0], w[0], "M", w[1], w[1], "M", w[2], w[2], w[2], "M", w[3], w[3], w[3], "M", w[4], w[4], w[4], "M"]


def vgg16(num_classes=1000, args=None, phase="train", width=64, **kwargs):
    return Vgg(vgg16_cfg(width), num_classes=num_classes, args=args, batch_norm=args.batch_norm, phase=phase, **kwargs)


# ---- src/utils/util.py, src/warmup_step_lr.py, src/crossentropy.py ------------------------------------------------


def get_param_groups(network):
    """Biases and BN gammas/betas without weight decay; every other trainable parameter with it."""
    decay_params, no_decay_params = [], []
    for x in network.trainable_params():
        if x.name.endswith((".bias", ".gamma", ".beta")):
            no_decay_params.append(x)
        else:
            decay_params.append(x)
    return [{"params": no_decay_params, "weight_decay": 0.0}, {"params": decay_params}]


def linear_warmup_lr(current_step, warmup_steps, base_lr, init_lr):
    return float(init_lr) + (float(base_lr) - float(init_lr)) / float(warmup_steps) * current_step


def lr_steps(global_step, lr_init, lr_max, warmup_epochs, total_epochs, steps_per_epoch):
    """Linear warm-up from lr_init to lr_max, then a quadratic decay to 0, one value per step."""
    total_steps = steps_per_epoch * total_epochs
    warmup_steps = steps_per_epoch * warmup_epochs
    inc = (float(lr_max) - float(lr_init)) / float(warmup_steps) if warmup_steps else 0
    lr_each_step = []
    for i in range(total_steps):
        if i < warmup_steps:
            value = float(lr_init) + inc * float(i)
        else:
            base = 1.0 - (float(i) - float(warmup_steps)) / (float(total_steps) - float(warmup_steps))
            value = max(float(lr_max) * base * base, 0.0)
        lr_each_step.append(value)
    return np.array(lr_each_step).astype(np.float32)[global_step:]


def warmup_step_lr(lr, lr_epochs, steps_per_epoch, warmup_epochs, max_epoch, gamma=0.1):
    total_steps = int(max_epoch * steps_per_epoch)
    warmup_steps = int(warmup_epochs * steps_per_epoch)
    milestones = Counter(m * steps_per_epoch for m in lr_epochs)
    lr_each_step = []
    current = lr
    for i in range(total_steps):
        if i < warmup_steps:
            current = linear_warmup_lr(i + 1, warmup_steps, lr, 0)
        else:
            current = current * gamma ** milestones[i]
        lr_each_step.append(current)
    return np.array(lr_each_step).astype(np.float32)


class CrossEntropy(LossBase):
    def __init__(self, smooth_factor=0.0, num_classes=1001):
        super().__init__()
        self.onehot = P.OneHot()
        self.on_value = Tensor(1.0 - smooth_factor, mstype.float32)
        self.off_value = Tensor(1.0 * smooth_factor / (num_classes - 1), mstype.float32)
        self.ce = nn.SoftmaxCrossEntropyWithLogits()
        self.mean = P.ReduceMean(False)

    def construct(self, logit, label):
        one_hot_label = self.onehot(label, F.shape(logit)[1], self.on_value, self.off_value)
        loss = self.ce(logit, one_hot_label)
        return self.mean(loss, 0)
