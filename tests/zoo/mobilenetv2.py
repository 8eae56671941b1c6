"""MobileNetV2 as the model zoo writes it (mobilenetV2.py): ConvBNReLU with ReLU6 and depthwise groups,
inverted residuals, a backbone and a head whose weights are set in ``_initialize_weights`` through
``init_parameters_data``, ``Parameter.data`` and ``opforge.numpy`` (``mindspore.numpy`` in the zoo)."""

import numpy as np

import opforge
import opforge.nn as nn
import opforge.numpy
from opforge import Tensor
from opforge.ops import operations as P


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:  # rounding down must not lose more than 10%
        new_v += divisor
    return new_v


class GlobalAvgPooling(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mean = P.ReduceMean(keep_dims=False)

    def construct(self, x):
        return self.mean(x, (2, 3))


class ConvBNReLU(nn.Cell):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        super().__init__()
        padding = (kernel_size - 1) // 2
        in_channels, out_channels = in_planes, out_planes
        if groups == 1:
            conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, pad_mode="pad", padding=padding)
        else:
            out_channels = in_planes
            conv = nn.Conv2d(
                in_channels, out_channels, kernel_size, stride, pad_mode="pad", padding=padding, group=in_channels
            )
        self.features = nn.SequentialCell([conv, nn.BatchNorm2d(out_planes), nn.ReLU6()])

    def construct(self, x):
        return self.features(x)


class InvertedResidual(nn.Cell):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        assert stride in [1, 2]
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers.extend(
            [
                ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                nn.Conv2d(hidden_dim, oup, kernel_size=1, stride=1, has_bias=False),
                nn.BatchNorm2d(oup),
            ]
        )
        self.conv = nn.SequentialCell(layers)
        self.add = P.Add()
        self.cast = P.Cast()

    def construct(self, x):
        identity = x
        x = self.conv(x)
        if self.use_res_connect:
            return self.add(identity, x)
        return x


class MobileNetV2Backbone(nn.Cell):
    def __init__(
        self, width_mult=1.0, inverted_residual_setting=None, round_nearest=8, input_channel=32, last_channel=1280
    ):
        super().__init__()
        self.cfgs = inverted_residual_setting or [
            # t, c, n, s
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.out_channels = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in self.cfgs:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(InvertedResidual(input_channel, output_channel, stride, expand_ratio=t))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, self.out_channels, kernel_size=1))
        self.features = nn.SequentialCell(features)
        self._initialize_weights()

    def construct(self, x):
        return self.features(x)

    def _initialize_weights(self):
        self.init_parameters_data()
        for _, m in self.cells_and_names():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.set_data(Tensor(np.random.normal(0, np.sqrt(2.0 / n), m.weight.data.shape).astype("float32")))
                if m.bias is not None:
                    m.bias.set_data(Tensor(np.zeros(m.bias.data.shape, dtype="float32")))
            elif isinstance(m, nn.BatchNorm2d):
                m.gamma.set_data(Tensor(np.ones(m.gamma.data.shape, dtype="float32")))
                m.beta.set_data(Tensor(np.zeros(m.beta.data.shape, dtype="float32")))

    @property
    def get_features(self):
        return self.features


class MobileNetV2Head(nn.Cell):
    def __init__(self, input_channel=1280, num_classes=1000, has_dropout=False, activation="None"):
        super().__init__()
        head = [GlobalAvgPooling(), nn.Dense(input_channel, num_classes, has_bias=True)]
        if has_dropout:
            head.insert(1, nn.Dropout(p=0.2))
        self.head = nn.SequentialCell(head)
        self.need_activation = activation in ("Sigmoid", "Softmax")
        if activation == "Sigmoid":
            self.activation = P.Sigmoid()
        elif activation == "Softmax":
            self.activation = P.Softmax()
        self._initialize_weights()

    def construct(self, x):
        x = self.head(x)
        if self.need_activation:
            x = self.activation(x)
        return x

    def _initialize_weights(self):
        self.init_parameters_data()
        for _, m in self.cells_and_names():
            if isinstance(m, nn.Dense):
                m.weight.set_data(Tensor(np.random.normal(0, 0.01, m.weight.data.shape).astype("float32")))
                if m.bias is not None:
                    m.bias.set_data(opforge.numpy.zeros(m.bias.data.shape, dtype="float32"))


class MobileNetV2Combine(nn.Cell):
    def __init__(self, backbone, head):
        super().__init__(auto_prefix=False)
        self.backbone = backbone
        self.head = head

    def construct(self, x):
        return self.head(self.backbone(x))


def mobilenet_v2(num_classes=10, width_mult=1.0, cfgs=None, last_channel=1280):
    backbone = MobileNetV2Backbone(width_mult=width_mult, inverted_residual_setting=cfgs, last_channel=last_channel)
    head = MobileNetV2Head(input_channel=backbone.out_channels, num_classes=num_classes)
    return MobileNetV2Combine(backbone, head)
