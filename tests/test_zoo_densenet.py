"""DenseNet-121 as MindSpore's model zoo runs it (tests/zoo/densenet: research/cv/densenet with ``mindspore``
replaced by ``opforge``), on JPEG images written here in class folders: train.py's ``train()`` (the ImageNet
pipeline of ``ImageFolderDataset`` with ``RandomCropDecodeResize``, ``RandomHorizontalFlip``,
``RandomColorAdjust``, ``Normalize``, ``HWC2CHW``, ``project`` and ``repeat``; ``DenseNet121`` initialized by
the zoo's Kaiming ``Initializer`` subclasses; ``CrossEntropy``; ``Momentum`` on the parameter groups of
``get_param_groups`` and ``CosineAnnealingLR``; ``Model`` with ``FixedLossScaleManager`` in dataset sink mode;
the zoo's ``ProgressMonitor`` and ``ModelCheckpoint``) and eval.py's ``test()`` on every checkpoint it wrote
(top-1 and top-5 counts from the network's outputs, logged). The architecture, the initialization, the loss,
the learning rates and eval.py's counts are checked against independent references."""

import copy
import glob
import math
import os
import re

import numpy as np
import pytest
from PIL import Image
from zoo.densenet import eval as zoo_eval
from zoo.densenet import train as zoo_train
from zoo.densenet.classification import classification_dataset_imagenet
from zoo.densenet.config import config
from zoo.densenet.crossentropy import CrossEntropy
from zoo.densenet.densenet import DenseNet121
from zoo.densenet.lr_scheduler import CosineAnnealingLR, MultiStepLR
from zoo.densenet.optimizers import get_param_groups

import opforge
import opforge.dataset as ds
from opforge import Tensor, context
from opforge.nn.optim import Momentum
from opforge.train.callback import LambdaCallback
from opforge.train.loss_scale_manager import FixedLossScaleManager
from opforge.train.model import Model
from opforge.train.serialization import load_checkpoint, load_param_into_net

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220]])


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    ds.config._state["seed"] = None
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_images(root, per_class=4, seed=0):
    """ImageFolderDataset's layout: a folder per class (class0..class2), JPEG images of the class's colour."""
    rng = np.random.default_rng(seed)
    for c, color in enumerate(COLORS):
        os.makedirs(os.path.join(root, f"class{c}"), exist_ok=True)
        for i in range(per_class):
            pixels = np.clip(color + rng.normal(0, 25, (40, 48, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.jpg"))
    return str(root)


# ---------------------------------------------------------------------------------------------
# The network, its initialization, loss, learning rates and parameter groups


def test_densenet121_has_the_paper_blocks_parameter_count_and_kaiming_init():
    net = DenseNet121(1000)
    features = net.backbone.features
    assert [len(getattr(features, f"denseblock{i}").cell_list) for i in range(1, 5)] == [6, 12, 24, 16]
    assert net.backbone.get_out_channels() == 1024
    # torchvision's densenet121: 7,978,856 trainable parameters
    assert sum(int(np.prod(p.shape)) for p in net.trainable_params()) == 7_978_856
    # KaimingNormal(mode="fan_out", relu) on the convolutions: std sqrt(2 / (out * k * k))
    conv = features.denseblock3.cell_list[0].conv2.weight.asnumpy()
    assert conv.shape == (32, 128, 3, 3) and abs(conv.mean()) < 0.01
    assert conv.std() == pytest.approx(math.sqrt(2 / (32 * 9)), rel=0.05)
    # KaimingUniform(a=sqrt(5)) on the Dense weight: bound 1 / sqrt(fan_in); biases zero, BatchNorm 1 and 0
    fc = net.head.fc
    assert np.abs(fc.weight.asnumpy()).max() <= 1 / math.sqrt(1024) + 1e-7
    assert np.abs(fc.weight.asnumpy()).max() > 0.9 / math.sqrt(1024)
    assert not fc.bias.asnumpy().any() and np.all(features.norm0.gamma.asnumpy() == 1)
    net.set_train(False)
    out = net(Tensor(np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)))
    assert out.shape == (2, 1000) and np.all(np.isfinite(out.asnumpy()))


def test_cross_entropy_matches_numpy():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 5)).astype(np.float32)
    labels = rng.integers(0, 5, 6).astype(np.int32)
    for smooth in (0.0, 0.1):
        got = CrossEntropy(smooth_factor=smooth, num_classes=5)(Tensor(logits), Tensor(labels)).asnumpy()
        target = np.full((6, 5), smooth / 4)
        target[np.arange(6), labels] = 1 - smooth
        shifted = logits - logits.max(1, keepdims=True)
        log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        np.testing.assert_allclose(got, np.mean(-(target * log_softmax).sum(1)), rtol=1e-5)


def test_learning_rate_schedulers_and_parameter_groups():
    lr = CosineAnnealingLR(0.1, T_max=4, steps_per_epoch=2, max_epoch=4, warmup_epochs=1).get_lr()
    epochs = np.arange(8) // 2
    want = 0.5 * 0.1 * (1 + np.cos(np.pi * epochs / 4))
    want[:2] = 0.1 * np.arange(1, 3) / 2  # the linear warm-up's first epoch
    np.testing.assert_allclose(lr, want.astype(np.float32), rtol=1e-6)
    lr = MultiStepLR(0.1, [1, 3], 0.1, steps_per_epoch=2, max_epoch=4).get_lr()
    np.testing.assert_allclose(lr, np.float32([0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.001, 0.001]), rtol=1e-6)

    net = DenseNet121(3)
    no_decay, decay = get_param_groups(net)
    assert no_decay["weight_decay"] == 0.0 and "weight_decay" not in decay
    assert all(p.name.endswith((".bias", ".gamma", ".beta")) for p in no_decay["params"])
    assert all(p.name.endswith(".weight") for p in decay["params"])
    assert len(no_decay["params"]) + len(decay["params"]) == len(net.trainable_params())


# ---------------------------------------------------------------------------------------------
# Training as train.py does


def _model(net, lr, steps):
    """train.py's: CrossEntropy, Momentum on the parameter groups with the loss scale, BuildTrainNetwork, Model
    with FixedLossScaleManager (amp O0, the CPU's)."""
    criterion = CrossEntropy(smooth_factor=0.0, num_classes=config.num_classes)
    opt = Momentum(
        params=get_param_groups(net),
        learning_rate=Tensor(np.full(steps, lr, np.float32)),
        momentum=config.momentum,
        weight_decay=config.weight_decay,
        loss_scale=config.loss_scale,
    )
    criterion.add_flags_recursive(fp32=True)
    train_net = zoo_train.BuildTrainNetwork(net, criterion)
    return Model(
        train_net,
        optimizer=opt,
        metrics=None,
        loss_scale_manager=FixedLossScaleManager(config.loss_scale, drop_overflow_update=False),
        amp_level="O0",
    )


def test_the_train_step_learns_a_batch():
    config.num_classes = 4
    rng = np.random.default_rng(2)
    images = rng.standard_normal((8, 3, 32, 32)).astype(np.float32)
    labels = (np.arange(8) % 4).astype(np.int32)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(8)
    model = _model(DenseNet121(config.num_classes), 0.01, 10)
    losses = []
    model.train(
        10,
        data,
        callbacks=[
            LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
        ],
        dataset_sink_mode=False,
    )
    assert len(losses) == 10 and np.all(np.isfinite(losses))
    assert np.mean(losses[-3:]) < 0.5 * losses[0], losses


def _eval_counts(root, ckpt):
    """eval.py's top-1 and top-5 counts over the eval pipeline, from a DenseNet121 loaded here."""
    net = DenseNet121(config.num_classes)
    params = {
        k[8:] if k.startswith("network.") else k: v
        for k, v in load_checkpoint(ckpt).items()
        if not k.startswith("moments.")
    }
    load_param_into_net(net, params)
    net.set_train(False)
    data = classification_dataset_imagenet(
        root, image_size=[32, 32], per_batch_size=config.per_batch_size, max_epoch=1, rank=0, group_size=1, mode="eval"
    )
    top1 = top5 = total = 0
    for image, label in data.create_tuple_iterator(output_numpy=True):
        out = net(Tensor(image)).asnumpy()
        top1 += int((out.argmax(-1) == label).sum())
        top5 += int(sum(lab in row for lab, row in zip(label, np.argsort(out)[:, -5:])))
        total += len(label)
    return top1, top5, total


def test_train_py_then_eval_py(tmp_path, monkeypatch):
    root = _write_images(tmp_path / "images")
    config.train_data_dir = config.eval_data_dir = root
    config.save_ckpt_path = str(tmp_path / "ckpt")
    config.log_path = str(tmp_path / "log")
    config.num_classes = 3
    config.lr = 0.003

    losses = []

    class RecordingModel(zoo_train.Model):  # the zoo's Model, with a callback recording the losses
        def train(self, *args, callbacks=None, **kwargs):
            record = LambdaCallback(on_train_step_end=lambda rc: losses.append(rc.original_args().net_outputs))
            return super().train(*args, callbacks=[*callbacks, record], **kwargs)

    monkeypatch.setattr(zoo_train, "Model", RecordingModel)
    zoo_train.train()

    # dataset sink mode (train.py's): one step-end per epoch of 3 steps
    assert len(losses) == config.max_epoch and all(np.isfinite(float(v.asnumpy())) for v in losses)
    ckpts = sorted(glob.glob(os.path.join(config.save_ckpt_path, "*.ckpt")))
    assert [os.path.basename(c) for c in ckpts] == ["0-1_3.ckpt", "0-2_3.ckpt"]
    (train_log,) = glob.glob(os.path.join(config.save_ckpt_path, "*", "*_rank_0.log"))
    text = open(train_log).read()
    assert "start network train..." in text and "end network train..." in text
    assert re.search(r"epoch\[1\], iter\[5\], loss:", text)  # ProgressMonitor's epoch_end
    params = load_checkpoint(ckpts[-1])
    assert "moments.backbone.features.conv0.weight" in params and "learning_rate" in params

    # eval.py in a new process: its config as the yaml gives it
    config.image_size = "32, 32"
    config.ckpt_files = config.save_ckpt_path
    zoo_eval.test()
    (eval_log,) = glob.glob(os.path.join(config.log_path, "*", "*_rank_0.log"))
    found = re.findall(r"after allreduce eval: top1_correct=(\d+), tot=(\d+)", open(eval_log).read())
    found5 = re.findall(r"after allreduce eval: top5_correct=(\d+), tot=(\d+)", open(eval_log).read())
    assert len(found) == len(found5) == 2  # one line of each per checkpoint, the last epoch's first
    top1, top5, total = _eval_counts(root, ckpts[-1])
    assert total == 12 and (int(found[0][0]), int(found[0][1])) == (top1, total)
    assert (int(found5[0][0]), int(found5[0][1])) == (top5, total) == (12, 12)  # 3 classes: always in the top 5
