"""U-Net as the model zoo writes it for medical segmentation (official/cv/Unet: src/unet_medical/, src/loss.py,
src/utils.py): valid 3x3 convolutions with TruncatedNormal weights, max-pool downsampling, Conv2dTranspose
upsampling, skip connections cropped by ``nn.CentralCrop`` and joined by ``Concat``; a per-pixel softmax
cross-entropy loss that reduces over every axis through ``F.shape``, ``F.tuple_len`` and ``F.make_range``; an
evaluation wrapper (``UnetEval``), a pass-through loss (``TempLoss``, ``P.identity``), a dice ``nn.Metric`` and
a callback written with MindSpore's older hook names (``step_begin``, ``step_end``, ``epoch_end``).

The zoo's four ``Up`` cells differ only in the crop fraction, which fits its 572x572 input; here the fraction
is an argument, so a small input can be cropped to the sizes the upsampled maps have."""

import time

import numpy as np

import opforge
import opforge.nn as nn
import opforge.ops.operations as F
from opforge.common import dtype as mstype
from opforge.common.initializer import TruncatedNormal
from opforge.common.tensor import Tensor
from opforge.nn import CentralCrop
from opforge.nn.cell import Cell
from opforge.ops import functional as F2
from opforge.ops import operations as ops
from opforge.train.callback import Callback

# ---- src/unet_medical/unet_parts.py, unet_model.py -------------------------------------------------------------


class DoubleConv(nn.Cell):
    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.SequentialCell(
            [
                nn.Conv2d(in_channels, mid_channels, kernel_size=3, has_bias=True,
                          weight_init=TruncatedNormal(0.06), bias_init="zeros", pad_mode="valid"),
                nn.ReLU(),
                nn.Conv2d(mid_channels, out_channels, kernel_size=3, has_bias=True,
                          weight_init=TruncatedNormal(0.06), bias_init="zeros", pad_mode="valid"),
                nn.ReLU(),
            ]
        )  # fmt: skip

    def construct(self, x):
        return self.double_conv(x)


class Down(nn.Cell):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.SequentialCell(
            [nn.MaxPool2d(kernel_size=2, stride=2), DoubleConv(in_channels, out_channels)]
        )

    def construct(self, x):
        return self.maxpool_conv(x)


class Up(nn.Cell):
    def __init__(self, in_channels, out_channels, factor):
        super().__init__()
        self.concat = F.Concat(axis=1)
        self.factor = factor
        self.center_crop = CentralCrop(central_fraction=self.factor)
        self.print_fn = F.Print()
        self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        self.up = nn.Conv2dTranspose(
            in_channels, in_channels // 2, kernel_size=2, stride=2, weight_init="normal", bias_init="zeros"
        )
        self.relu = nn.ReLU()

    def construct(self, x1, x2):
        x1 = self.relu(self.up(x1))
        x2 = self.center_crop(x2)
        return self.conv(self.concat((x1, x2)))


class OutConv(nn.Cell):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels,
            out_channels,
            kernel_size=1,
            has_bias=True,
            weight_init=TruncatedNormal(0.06),
            bias_init="zeros",
        )

    def construct(self, x):
        return self.conv(x)


class UNetMedical(nn.Cell):
    """``factors``: the crop fraction of each skip connection, deepest first (the zoo's 56/64, 104/136,
    200/280, 392/568 for 572x572 images)."""

    def __init__(self, n_channels, n_classes, width=64, factors=(56 / 64, 104 / 136, 200 / 280, 392 / 568)):
        super().__init__()
        w = width
        self.n_channels = n_channels
        self.n_classes = n_classes
        self.inc = DoubleConv(n_channels, w)
        self.down1 = Down(w, w * 2)
        self.down2 = Down(w * 2, w * 4)
        self.down3 = Down(w * 4, w * 8)
        self.down4 = Down(w * 8, w * 16)
        self.up1 = Up(w * 16, w * 8, factors[0])
        self.up2 = Up(w * 8, w * 4, factors[1])
        self.up3 = Up(w * 4, w * 2, factors[2])
        self.up4 = Up(w * 2, w, factors[3])
        self.outc = OutConv(w, n_classes)

    def construct(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x5 = self.down4(x4)
        x = self.up1(x5, x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        x = self.up4(x, x1)
        return self.outc(x)


# ---- src/loss.py -------------------------------------------------------------------------------------------


class MyLoss(Cell):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction is None:
            reduction = "none"
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction method for {reduction.lower()} is not supported")
        self.average = reduction != "sum"
        self.reduce = reduction != "none"
        self.reduce_mean = F.ReduceMean()
        self.reduce_sum = F.ReduceSum()
        self.mul = F.Mul()
        self.cast = F.Cast()

    def get_axis(self, x):
        shape = F2.shape(x)
        length = F2.tuple_len(shape)
        return F2.make_range(0, length)

    def get_loss(self, x, weights=1.0):
        input_dtype = x.dtype
        x = self.cast(x, mstype.float32)
        weights = self.cast(weights, mstype.float32)
        x = self.mul(weights, x)
        if self.reduce and self.average:
            x = self.reduce_mean(x, self.get_axis(x))
        if self.reduce and not self.average:
            x = self.reduce_sum(x, self.get_axis(x))
        return self.cast(x, input_dtype)

    def construct(self, base, target):
        raise NotImplementedError


class CrossEntropyWithLogits(MyLoss):
    def __init__(self):
        super().__init__()
        self.transpose_fn = F.Transpose()
        self.reshape_fn = F.Reshape()
        self.softmax_cross_entropy_loss = nn.SoftmaxCrossEntropyWithLogits()
        self.cast = F.Cast()

    def construct(self, logits, label):
        logits = self.transpose_fn(logits, (0, 2, 3, 1))  # NCHW -> NHWC
        logits = self.cast(logits, opforge.float32)
        label = self.transpose_fn(label, (0, 2, 3, 1))
        _, _, _, c = F.Shape()(label)
        loss = self.reduce_mean(
            self.softmax_cross_entropy_loss(self.reshape_fn(logits, (-1, c)), self.reshape_fn(label, (-1, c)))
        )
        return self.get_loss(loss)


# ---- src/utils.py ------------------------------------------------------------------------------------------


class UnetEval(nn.Cell):
    def __init__(self, net, need_slice=False, eval_activate="softmax"):
        super().__init__()
        self.net = net
        self.need_slice = need_slice
        self.transpose = ops.Transpose()
        self.softmax = ops.Softmax(axis=-1)
        self.argmax = ops.Argmax(axis=-1)
        self.squeeze = ops.Squeeze(axis=0)
        if eval_activate.lower() not in ("softmax", "argmax"):
            raise ValueError("eval_activate only support 'softmax' or 'argmax'")
        self.is_softmax = eval_activate != "argmax"

    def construct(self, x):
        out = self.net(x)
        if self.need_slice:
            out = self.squeeze(out[-1:])
        out = self.transpose(out, (0, 2, 3, 1))
        if self.is_softmax:
            return self.softmax(out)
        return self.argmax(out)


class TempLoss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.identity = ops.identity()

    def construct(self, logits, label):
        return self.identity(logits)


class dice_coeff(nn.Metric):  # noqa: N801 (the zoo's name)
    """Mean dice coefficient and IOU of softmax predictions (N, H, W, C) against one-hot masks (N, C, H, W)."""

    def __init__(self, print_res=True, show_eval=False):
        super().__init__()
        self.show_eval = show_eval
        self.print_res = print_res
        self.img_num = 0
        self.clear()

    def clear(self):
        self._dice_coeff_sum = 0
        self._iou_sum = 0
        self._samples_num = 0
        self.img_num = 0
        if self.show_eval:  # the zoo draws the predictions into a folder here
            raise NotImplementedError("show_eval draws images with OpenCV")

    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"Need 2 inputs (y_predict, y), but got {len(inputs)}")
        y = self._convert_data(inputs[1]).transpose(0, 2, 3, 1)
        y_pred = self._convert_data(inputs[0]).astype(np.float32)
        for pred, mask in zip(y_pred, y):
            inter = np.dot(pred.flatten(), mask.flatten())
            union = np.dot(pred.flatten(), pred.flatten()) + np.dot(mask.flatten(), mask.flatten())
            single_dice_coeff = 2 * float(inter) / float(union + 1e-6)
            self._dice_coeff_sum += single_dice_coeff
            self._iou_sum += single_dice_coeff / (2 - single_dice_coeff)
            self._samples_num += 1

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("Total samples num must not be 0.")
        return (self._dice_coeff_sum / float(self._samples_num), self._iou_sum / float(self._samples_num))


class StepLossTimeMonitor(Callback):
    def __init__(self, batch_size, per_print_times=1, rank=0):
        super().__init__()
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError("print_step must be int and >= 0.")
        self._per_print_times = per_print_times
        self.batch_size = batch_size
        self.rank = rank
        self.step_time = 0
        self.epoch_start = 0
        self.losses = []
        self.all_losses = []

    def step_begin(self, run_context):
        self.step_time = time.time()

    def step_end(self, run_context):
        step_seconds = time.time() - self.step_time
        step_fps = self.batch_size * 1.0 / step_seconds
        cb_params = run_context.original_args()
        loss = cb_params.net_outputs
        if isinstance(loss, (tuple, list)) and isinstance(loss[0], Tensor):
            loss = loss[0]
        if isinstance(loss, Tensor) and isinstance(loss.asnumpy(), np.ndarray):
            loss = np.mean(loss.asnumpy())
        cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and (np.isnan(loss) or np.isinf(loss)):
            raise ValueError(f"epoch: {cb_params.cur_epoch_num} step: {cur_step_in_epoch}. Invalid loss.")
        self.losses.append(loss)
        self.all_losses.append(float(loss))
        if self._per_print_times != 0 and cb_params.cur_step_num % self._per_print_times == 0:
            print(f"step: {cur_step_in_epoch}, loss is {loss}, fps is {step_fps}", flush=True)

    def epoch_begin(self, run_context):
        self.epoch_start = time.time()
        self.losses = []

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        epoch_cost = time.time() - self.epoch_start
        step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if self.rank == 0:
            print(
                f"epoch: {cb_params.cur_epoch_num:3d}, avg loss:{np.mean(self.losses):.4f}, "
                f"total cost: {epoch_cost:.3f} s, per step fps:{self.batch_size * step_in_epoch / epoch_cost:5.3f}",
                flush=True,
            )
