"""ResNet as the model zoo writes it (resnet.py): helper constructors per layer kind, a basic block for
ResNet-18/34 (``res_base``: explicit ``nn.Pad`` then a 'pad'-free convolution) and a bottleneck for ResNet-50."""

import math

import numpy as np

import opforge.nn as nn
import opforge.ops as ops
from opforge import Tensor


def _weight_variable(shape, factor=0.01):
    return Tensor(np.random.randn(*shape).astype(np.float32) * factor)


def _conv3x3(in_channel, out_channel, stride=1, res_base=False):
    if res_base:
        return nn.Conv2d(in_channel, out_channel, kernel_size=3, stride=stride, padding=1, pad_mode="pad")
    return nn.Conv2d(in_channel, out_channel, kernel_size=3, stride=stride, padding=0, pad_mode="same")


def _conv1x1(in_channel, out_channel, stride=1, res_base=False):
    pad_mode = "pad" if res_base else "same"
    return nn.Conv2d(in_channel, out_channel, kernel_size=1, stride=stride, padding=0, pad_mode=pad_mode)


def _conv7x7(in_channel, out_channel, stride=1, res_base=False):
    if res_base:
        return nn.Conv2d(in_channel, out_channel, kernel_size=7, stride=stride, padding=3, pad_mode="pad")
    return nn.Conv2d(in_channel, out_channel, kernel_size=7, stride=stride, padding=0, pad_mode="same")


def _bn(channel, res_base=False):
    if res_base:
        return nn.BatchNorm2d(channel, eps=1e-5, momentum=0.1, gamma_init=1, beta_init=0)
    return nn.BatchNorm2d(channel, eps=1e-4, momentum=0.9, gamma_init=1, beta_init=0)


def _bn_last(channel):
    return nn.BatchNorm2d(channel, eps=1e-4, momentum=0.9, gamma_init=0, beta_init=0)


def _fc(in_channel, out_channel):
    stdv = 1.0 / math.sqrt(in_channel)
    weight = Tensor(np.random.uniform(-stdv, stdv, (out_channel, in_channel)).astype(np.float32))
    return nn.Dense(in_channel, out_channel, has_bias=True, weight_init=weight, bias_init=0)


class ResidualBlockBase(nn.Cell):
    """The basic block of ResNet-18/34: two 3x3 convolutions."""

    def __init__(self, in_channel, out_channel, stride=1, res_base=True):
        super().__init__()
        self.res_base = res_base
        self.conv1 = _conv3x3(in_channel, out_channel, stride=stride, res_base=self.res_base)
        self.bn1d = _bn(out_channel)
        self.conv2 = _conv3x3(out_channel, out_channel, stride=1, res_base=self.res_base)
        self.bn2d = _bn(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell(
                [_conv1x1(in_channel, out_channel, stride, res_base=self.res_base), _bn(out_channel, res_base)]
            )

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1d(self.conv1(x)))
        out = self.bn2d(self.conv2(out))
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class ResidualBlock(nn.Cell):
    """The bottleneck block of ResNet-50: 1x1, 3x3, 1x1 with expansion 4."""

    expansion = 4

    def __init__(self, in_channel, out_channel, stride=1):
        super().__init__()
        channel = out_channel // self.expansion
        self.conv1 = _conv1x1(in_channel, channel, stride=1)
        self.bn1 = _bn(channel)
        self.conv2 = _conv3x3(channel, channel, stride=stride)
        self.bn2 = _bn(channel)
        self.conv3 = _conv1x1(channel, out_channel, stride=1)
        self.bn3 = _bn_last(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([_conv1x1(in_channel, out_channel, stride), _bn(out_channel)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class ResNet(nn.Cell):
    def __init__(self, block, layer_nums, in_channels, out_channels, strides, num_classes, res_base=False):
        super().__init__()
        if not len(layer_nums) == len(in_channels) == len(out_channels) == 4:
            raise ValueError("the length of layer_num, in_channels, out_channels list must be 4!")
        self.res_base = res_base
        self.conv1 = _conv7x7(3, in_channels[0], stride=2, res_base=self.res_base)
        self.bn1 = _bn(in_channels[0], self.res_base)
        self.relu = ops.ReLU()
        if self.res_base:
            self.pad = nn.Pad(paddings=((0, 0), (0, 0), (1, 1), (1, 1)))
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        else:
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.layer1 = self._make_layer(block, layer_nums[0], in_channels[0], out_channels[0], strides[0])
        self.layer2 = self._make_layer(block, layer_nums[1], in_channels[1], out_channels[1], strides[1])
        self.layer3 = self._make_layer(block, layer_nums[2], in_channels[2], out_channels[2], strides[2])
        self.layer4 = self._make_layer(block, layer_nums[3], in_channels[3], out_channels[3], strides[3])
        self.mean = ops.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.end_point = _fc(out_channels[3], num_classes)

    def _make_layer(self, block, layer_num, in_channel, out_channel, stride):
        layers = [block(in_channel, out_channel, stride=stride)]
        for _ in range(1, layer_num):
            layers.append(block(out_channel, out_channel, stride=1))
        return nn.SequentialCell(layers)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        if self.res_base:
            x = self.pad(x)
        c1 = self.maxpool(x)
        c5 = self.layer4(self.layer3(self.layer2(self.layer1(c1))))
        out = self.flatten(self.mean(c5, (2, 3)))
        return self.end_point(out)


def resnet18(class_num=10, width=64):
    w = [width, width, width * 2, width * 4]
    return ResNet(ResidualBlockBase, [2, 2, 2, 2], w, [w[1], w[2], w[3], width * 8], [1, 2, 2, 2], class_num, True)


def resnet50(class_num=10, width=64):
    return ResNet(
        ResidualBlock,
        [3, 4, 6, 3],
        [width, width * 4, width * 8, width * 16],
        [width * 4, width * 8, width * 16, width * 32],
        [1, 2, 2, 2],
        class_num,
    )
