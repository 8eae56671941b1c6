"""What the model zoo's ResNet training script (official/cv/ResNet: train.py and src/) builds around the network:
the label-smoothed ``CrossEntropySmooth`` loss, per-step learning-rate arrays (warm-up + cosine), ``init_weight``
redrawing convolutions and dense layers (XavierUniform / a truncated normal by variance scaling / RandomNormal),
parameter groups without decay on BN and bias, the ``LossCallBack``/``ResumeCallback``/``EvalCallBack`` callbacks,
the GPU ``Momentum`` optimizer written with ``MultitypeFuncGraph``, ``HyperMap``, ``ops.partial`` and
``FusedWeightScaleApplyMomentum``, and the distributed-eval ``ClassifyCorrectCell``/``DistAccuracy`` pair."""

import math
import os
import stat
import time

import numpy as np
from opforge.nn.optim.optimizer import Optimizer
from scipy.stats import truncnorm

import opforge as ms
import opforge.nn as nn
import opforge.ops as ops
import opforge.train as train
from opforge import save_checkpoint
from opforge.common.parameter import Parameter
from opforge.common.tensor import Tensor
from opforge.communication.management import GlobalComm
from opforge.nn.loss import LossBase
from opforge.train.callback import Callback


class CrossEntropySmooth(LossBase):
    """Softmax cross entropy against one-hot labels smoothed to ``1 - smooth_factor`` / the rest spread evenly."""

    def __init__(self, sparse=True, reduction="mean", smooth_factor=0.0, num_classes=1000):
        super().__init__()
        self.onehot = ops.OneHot()
        self.sparse = sparse
        self.on_value = Tensor(1.0 - smooth_factor, ms.float32)
        self.off_value = Tensor(1.0 * smooth_factor / (num_classes - 1), ms.float32)
        self.ce = nn.SoftmaxCrossEntropyWithLogits(reduction=reduction)

    def construct(self, logit, label):
        if self.sparse:
            label = self.onehot(label, ops.shape(logit)[1], self.on_value, self.off_value)
        return self.ce(logit, label)


# -- learning rates (src/lr_generator.py) -------------------------------------------------------------------
def _cosine_lr(lr_init, lr_max, total_steps, warmup_steps):
    decay_steps = total_steps - warmup_steps
    out = []
    for i in range(total_steps):
        if i < warmup_steps:
            out.append(float(lr_init) + (float(lr_max) - float(lr_init)) / float(warmup_steps) * (i + 1))
        else:
            linear = (total_steps - i) / decay_steps
            cosine = 0.5 * (1 + math.cos(math.pi * 2 * 0.47 * i / decay_steps))
            out.append(lr_max * (linear * cosine + 0.00001))
    return out


def _linear_lr(lr_init, lr_end, lr_max, total_steps, warmup_steps):
    out = []
    for i in range(total_steps):
        if i < warmup_steps:
            out.append(lr_init + (lr_max - lr_init) * i / warmup_steps)
        else:
            out.append(lr_max - (lr_max - lr_end) * (i - warmup_steps) / (total_steps - warmup_steps))
    return out


def get_lr(lr_init, lr_end, lr_max, warmup_epochs, total_epochs, start_epoch, steps_per_epoch, lr_decay_mode):
    total_steps = steps_per_epoch * total_epochs
    warmup_steps = steps_per_epoch * warmup_epochs
    if lr_decay_mode == "cosine":
        lr_each_step = _cosine_lr(lr_init, lr_max, total_steps, warmup_steps)
    else:
        lr_each_step = _linear_lr(lr_init, lr_end, lr_max, total_steps, warmup_steps)
    return np.array(lr_each_step[steps_per_epoch * start_epoch :]).astype(np.float32)


def warmup_cosine_annealing_lr(lr, steps_per_epoch, warmup_epochs, max_epoch=120, global_step=0):
    total_steps = int(max_epoch * steps_per_epoch)
    warmup_steps = int(warmup_epochs * steps_per_epoch)
    lr_each_step = np.array(_cosine_lr(0, lr, total_steps, warmup_steps)).astype(np.float32)
    return lr_each_step[global_step:]


def get_thor_lr(global_step, lr_init, decay, total_epochs, steps_per_epoch, decay_epochs=100):
    """THOR's per-step rates: ``lr_init * (1 - epoch / total_epochs) ** decay`` at epoch (step + 1) / steps,
    halved from ``decay_epochs`` and again one epoch later; from ``global_step`` on."""
    epochs = np.arange(1, steps_per_epoch * total_epochs + 1) / steps_per_epoch
    lr = lr_init * (1.0 - epochs / total_epochs) ** decay
    lr = lr * np.where(epochs >= decay_epochs, 0.5, 1.0) * np.where(epochs >= decay_epochs + 1, 0.5, 1.0)
    return lr.astype(np.float32)[global_step:]


def get_thor_damping(global_step, damping_init, decay_rate, total_epochs, steps_per_epoch):
    """THOR's per-step damping: ``damping_init * decay_rate ** (epoch / 10)`` at epoch (step + 1) / steps."""
    epochs = np.arange(1, steps_per_epoch * total_epochs + 1) / steps_per_epoch
    return (damping_init * decay_rate ** (epochs / 10)).astype(np.float32)[global_step:]


# -- weights and parameter groups (src/resnet.py, src/util.py) ----------------------------------------------
def conv_variance_scaling_initializer(in_channel, out_channel, kernel_size):
    fan_in = in_channel * kernel_size * kernel_size
    stddev = (1.0 / max(1.0, fan_in)) ** 0.5 / 0.87962566103423978
    weight = truncnorm(-2, 2, loc=0, scale=stddev).rvs(out_channel * in_channel * kernel_size * kernel_size)
    weight = np.reshape(weight, (out_channel, in_channel, kernel_size, kernel_size))
    return Tensor(weight, dtype=ms.float32)


def init_weight(net, cfg):
    for _, cell in net.cells_and_names():
        if isinstance(cell, nn.Conv2d):
            if cfg.conv_init == "XavierUniform":
                init = ms.common.initializer
                cell.weight.set_data(init.initializer(init.XavierUniform(), cell.weight.shape, cell.weight.dtype))
            elif cfg.conv_init == "TruncatedNormal":
                weight = conv_variance_scaling_initializer(cell.in_channels, cell.out_channels, cell.kernel_size[0])
                cell.weight.set_data(weight)
        if isinstance(cell, nn.Dense):
            if cfg.dense_init == "TruncatedNormal":
                init = ms.common.initializer
                cell.weight.set_data(init.initializer(init.TruncatedNormal(), cell.weight.shape, cell.weight.dtype))
            elif cfg.dense_init == "RandomNormal":
                weight = np.random.normal(loc=0, scale=0.01, size=cell.out_channels * cell.in_channels)
                weight = ms.Tensor(np.reshape(weight, (cell.out_channels, cell.in_channels)), dtype=cell.weight.dtype)
                cell.weight.set_data(weight)


def init_group_params(net, cfg):
    decayed_params, no_decayed_params = [], []
    for param in net.trainable_params():
        if "beta" not in param.name and "gamma" not in param.name and "bias" not in param.name:
            decayed_params.append(param)
        else:
            no_decayed_params.append(param)
    return [{"params": decayed_params, "weight_decay": cfg.weight_decay}, {"params": no_decayed_params},
            {"order_params": net.trainable_params()}]  # fmt: skip


# -- callbacks (src/callback.py) ----------------------------------------------------------------------------
class LossCallBack(Callback):
    """Logs the loss and learning rate every ``per_print_time`` steps; stops on a NaN or infinite loss."""

    def __init__(self, epoch_size, logger, lr, per_print_time=1, global_steps=0):
        super().__init__()
        self.epoch_size = epoch_size
        self.logger = logger
        self.lr = lr
        self.global_steps = global_steps
        self.per_print_time = per_print_time
        self.step_start_time = time.time()
        self.epoch_start_time = time.time()
        self.losses = []

    @staticmethod
    def _mean_loss(loss):
        if isinstance(loss, (tuple, list)) and isinstance(loss[0], ms.Tensor):
            loss = loss[0]
        if isinstance(loss, ms.Tensor) and isinstance(loss.asnumpy(), np.ndarray):
            loss = np.mean(loss.asnumpy())
        return loss

    def on_train_step_end(self, run_context):
        cb_params = run_context.original_args()
        if not cb_params.get("dataset_sink_mode", True):
            loss = float(self._mean_loss(cb_params.net_outputs))
            cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
            if np.isnan(loss) or np.isinf(loss):
                raise ValueError(f"epoch: {cb_params.cur_epoch_num} step: {cur_step_in_epoch}. Invalid loss.")
            self.losses.append(loss)
            if cur_step_in_epoch % self.per_print_time == 0:
                self.logger.info("epoch: [%s/%s] step: [%s/%s], lr: %.6f, loss: %.6f", cb_params.cur_epoch_num,
                                 self.epoch_size, cur_step_in_epoch, cb_params.batch_num,
                                 self.lr[self.global_steps], loss)  # fmt: skip
        self.global_steps += 1

    def on_train_epoch_begin(self, run_context):
        self.epoch_start_time = self.step_start_time = time.time()

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        loss = self._mean_loss(cb_params.net_outputs)
        epoch_time = time.time() - self.epoch_start_time
        self.logger.info("epoch: [%s/%s] loss: %.6f, epoch time: %.3f s", cb_params.cur_epoch_num,
                         self.epoch_size, loss, epoch_time)  # fmt: skip


class ResumeCallback(Callback):
    def __init__(self, start_epoch=0):
        super().__init__()
        self.start_epoch = start_epoch

    def on_train_epoch_begin(self, run_context):
        run_context.original_args().cur_epoch_num += self.start_epoch


def apply_eval(eval_param):
    res = eval_param["model"].eval(eval_param["dataset"])
    return res[eval_param["metrics_name"]]


class EvalCallBack(Callback):
    """Evaluates every ``interval`` epochs from ``eval_start_epoch``, keeping the best checkpoint."""

    def __init__(self, eval_function, eval_param_dict, interval=1, eval_start_epoch=1, rank_id=0, save_best_ckpt=True,
                 ckpt_directory="./", best_ckpt_name="best.ckpt", metrics_name="acc", logger=None):  # fmt: skip
        super().__init__()
        self.eval_param_dict = eval_param_dict
        self.eval_function = eval_function
        self.eval_start_epoch = eval_start_epoch
        self.logger = logger
        if interval < 1:
            raise ValueError("interval should >= 1.")
        self.interval = interval
        self.save_best_ckpt = save_best_ckpt
        self.best_res = 0
        self.best_epoch = 0
        self.rank_id = rank_id
        if not os.path.isdir(ckpt_directory):
            os.makedirs(ckpt_directory)
        self.best_ckpt_path = os.path.join(ckpt_directory, best_ckpt_name)
        self.metrics_name = metrics_name

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        cur_epoch = cb_params.cur_epoch_num
        if cur_epoch >= self.eval_start_epoch and (cur_epoch - self.eval_start_epoch) % self.interval == 0:
            res = self.eval_function(self.eval_param_dict)
            self.logger.info(f"epoch: {cur_epoch}, {self.metrics_name}: {res}")
            if res >= self.best_res:
                if ms.context.get_context("enable_ge"):
                    cb_params.train_network.exec_checkpoint_graph()
                self.best_res = res
                self.best_epoch = cur_epoch
                if self.save_best_ckpt and self.rank_id == 0:
                    if os.path.exists(self.best_ckpt_path):
                        os.chmod(self.best_ckpt_path, stat.S_IWRITE)
                        os.remove(self.best_ckpt_path)
                    save_checkpoint(cb_params.train_network, self.best_ckpt_path)

    def on_train_end(self, run_context):
        self.logger.info("End training, the best %s is: %s at epoch %s", self.metrics_name, self.best_res,
                         self.best_epoch)  # fmt: skip


# -- the GPU Momentum (src/momentum.py) ---------------------------------------------------------------------
_momentum_opt = ops.MultitypeFuncGraph("momentum_opt")


@_momentum_opt.register("Function", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor")
def _tensor_run_opt_ext(opt, weight_decay, scale, momentum, learning_rate, gradient, weight, moment):
    return ops.depend(True, opt(weight_decay, scale, weight, moment, learning_rate, gradient, momentum))


class Momentum(Optimizer):
    """Momentum whose weight decay and loss-scale division are fused into the update
    (``FusedWeightScaleApplyMomentum``), one ``HyperMap`` over the parameters."""

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        assert isinstance(momentum, float) and momentum >= 0, "momentum should be equal or bigger than 0"
        assert isinstance(use_nesterov, bool), "use_nesterov should be bool"
        self.momentum = Parameter(Tensor(momentum, ms.float32), name="momentum")
        self.params = self.parameters
        self.moments = self.params.clone(prefix="moments", init="zeros")
        self.hyper_map = ops.HyperMap()
        self.opt = ops.FusedWeightScaleApplyMomentum()

    def construct(self, gradients):
        params = self.params
        moments = self.moments
        weight_decay = Tensor(0.0, ms.float32)
        scale = Tensor(1.0, ms.float32)
        if self.exec_weight_decay:
            weight_decay = self.weight_decay
        if self.need_scale:
            scale = self.reciprocal_scale
        lr = self.get_lr()
        if self.is_group_lr:
            return self.hyper_map(ops.partial(_momentum_opt, self.opt, weight_decay, scale, self.momentum),
                                  lr, gradients, params, moments)  # fmt: skip
        return self.hyper_map(ops.partial(_momentum_opt, self.opt, weight_decay, scale, self.momentum, lr),
                              gradients, params, moments)  # fmt: skip


# -- distributed evaluation (src/metric.py) -----------------------------------------------------------------
class ClassifyCorrectCell(nn.Cell):
    """The number of correct predictions in a batch, summed over the devices."""

    def __init__(self, network):
        super().__init__(auto_prefix=False)
        self._network = network
        self.argmax = ops.Argmax()
        self.equal = ops.Equal()
        self.cast = ops.Cast()
        self.reduce_sum = ops.ReduceSum()
        self.allreduce = ops.AllReduce(ops.ReduceOp.SUM, GlobalComm.WORLD_COMM_GROUP)

    def construct(self, data, label):
        outputs = self._network(data)
        y_pred = self.cast(self.argmax(outputs), ms.int32)
        y_correct = self.cast(self.equal(y_pred, label), ms.float32)
        return (self.allreduce(self.reduce_sum(y_correct)),)


class DistAccuracy(train.Metric):
    """Accuracy from the per-batch correct counts ``ClassifyCorrectCell`` gathers."""

    def __init__(self, batch_size, device_num):
        super().__init__()
        self.clear()
        self.batch_size = batch_size
        self.device_num = device_num

    def clear(self):
        self._correct_num = 0
        self._total_num = 0

    def update(self, *inputs):
        if len(inputs) != 1:
            raise ValueError(f"Distribute accuracy needs 1 input (y_correct), but got {len(inputs)}")
        self._correct_num += self._convert_data(inputs[0])
        self._total_num += self.batch_size * self.device_num

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("Accuracy can not be calculated, because the number of samples is 0.")
        return self._correct_num / self._total_num
