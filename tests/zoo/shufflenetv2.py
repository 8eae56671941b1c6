"""ShuffleNetV2 as the model zoo writes it (shufflenetv2.py): blocks built from keyword-only arguments, a main
branch of 1x1 / depthwise (``group=channels``) / 1x1 convolutions, a projection branch on stride 2, and a channel
shuffle made of ``P.Reshape``/``P.Transpose`` and 5-D slicing ``x[0:1, :, :, :, :]`` squeezed by
``P.Squeeze(axis=0)``; weights redrawn by ``cells_and_names`` and ``Parameter.set_data``. The zoo's
``get_lr_basic`` (a linear decay per step) drives its Momentum."""

import numpy as np

import opforge.nn as nn
import opforge.ops.operations as P
from opforge import Tensor


def _conv(cin, cout, ksize=1, stride=1, pad=0, group=1):
    return nn.Conv2d(in_channels=cin, out_channels=cout, kernel_size=ksize, stride=stride, pad_mode="pad",
                     padding=pad, group=group, has_bias=False)  # fmt: skip


class ShuffleV2Block(nn.Cell):
    def __init__(self, inp, oup, mid_channels, *, ksize, stride):
        super().__init__()
        self.stride = stride
        pad = ksize // 2
        branch_main = [
            _conv(inp, mid_channels),
            nn.BatchNorm2d(num_features=mid_channels, momentum=0.9),
            nn.ReLU(),
            _conv(mid_channels, mid_channels, ksize, stride, pad, group=mid_channels),
            nn.BatchNorm2d(num_features=mid_channels, momentum=0.9),
            _conv(mid_channels, oup - inp),
            nn.BatchNorm2d(num_features=oup - inp, momentum=0.9),
            nn.ReLU(),
        ]
        self.branch_main = nn.SequentialCell(branch_main)
        if stride == 2:
            self.branch_proj = nn.SequentialCell([
                _conv(inp, inp, ksize, stride, pad, group=inp),
                nn.BatchNorm2d(num_features=inp, momentum=0.9),
                _conv(inp, inp),
                nn.BatchNorm2d(num_features=inp, momentum=0.9),
                nn.ReLU(),
            ])  # fmt: skip
        else:
            self.branch_proj = None
        self.squeeze = P.Squeeze(axis=0)

    def construct(self, old_x):
        if self.stride == 1:
            x_proj, x = self.channel_shuffle(old_x)
            x_proj = self.squeeze(x_proj)
            x = self.squeeze(x)
            return P.Concat(1)((x_proj, self.branch_main(x)))
        return P.Concat(1)((self.branch_proj(old_x), self.branch_main(old_x)))

    def channel_shuffle(self, x):
        batchsize, num_channels, height, width = P.Shape()(x)
        x = P.Reshape()(x, (batchsize * num_channels // 2, 2, height * width))
        x = P.Transpose()(x, (1, 0, 2))
        x = P.Reshape()(x, (2, -1, num_channels // 2, height, width))
        return x[0:1, :, :, :, :], x[-1:, :, :, :, :]


class ShuffleNetV2(nn.Cell):
    def __init__(self, input_size=224, n_class=1000, stage_out_channels=(-1, 24, 116, 232, 464, 1024),
                 stage_repeats=(4, 8, 4)):  # fmt: skip
        super().__init__()
        self.stage_out_channels = list(stage_out_channels)
        input_channel = self.stage_out_channels[1]
        self.first_conv = nn.SequentialCell([
            _conv(3, input_channel, 3, 2, 1),
            nn.BatchNorm2d(num_features=input_channel, momentum=0.9),
            nn.ReLU(),
        ])  # fmt: skip
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        features = []
        for stage, repeats in enumerate(stage_repeats):
            output_channel = self.stage_out_channels[stage + 2]
            for i in range(repeats):
                if i == 0:
                    features.append(ShuffleV2Block(input_channel, output_channel, mid_channels=output_channel // 2,
                                                   ksize=3, stride=2))  # fmt: skip
                else:
                    features.append(ShuffleV2Block(input_channel // 2, output_channel,
                                                   mid_channels=output_channel // 2, ksize=3, stride=1))  # fmt: skip
                input_channel = output_channel
        self.features = nn.SequentialCell([*features])
        self.conv_last = nn.SequentialCell([
            _conv(input_channel, self.stage_out_channels[-1]),
            nn.BatchNorm2d(num_features=self.stage_out_channels[-1], momentum=0.9),
            nn.ReLU(),
        ])  # fmt: skip
        pool = input_size // 32
        self.globalpool = nn.AvgPool2d(kernel_size=pool, stride=pool, pad_mode="valid")
        self.classifier = nn.SequentialCell([nn.Dense(in_channels=self.stage_out_channels[-1], out_channels=n_class,
                                                      has_bias=False)])  # fmt: skip
        self._initialize_weights()

    def construct(self, x):
        x = self.maxpool(self.first_conv(x))
        x = self.conv_last(self.features(x))
        x = self.globalpool(x)
        x = P.Reshape()(x, (-1, self.stage_out_channels[-1]))
        return self.classifier(x)

    def _initialize_weights(self):
        for name, m in self.cells_and_names():
            if isinstance(m, nn.Conv2d):
                std = 0.01 if "first" in name else 1.0 / m.weight.data.shape[1]
                m.weight.set_data(Tensor(np.random.normal(0, std, m.weight.data.shape).astype("float32")))
            if isinstance(m, nn.Dense):
                m.weight.set_data(Tensor(np.random.normal(0, 0.01, m.weight.data.shape).astype("float32")))


def get_lr_basic(lr_init, total_epochs, steps_per_epoch, is_stair=False):
    """A linear decay from ``lr_init`` towards 0 over every step of the run."""
    total_steps = steps_per_epoch * total_epochs
    return np.array([lr_init - lr_init * i / total_steps for i in range(total_steps)]).astype(np.float32)
