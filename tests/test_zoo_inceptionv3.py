"""Inception-V3 as MindSpore's model zoo runs it (tests/zoo/inceptionv3: official/cv/Inception/inceptionv3 with
``mindspore`` replaced by ``opforge``), on CIFAR-10 binary files written here: train.py's
``train_inceptionv3()`` (GRAPH_MODE; ``create_dataset_cifar10``'s ``Cifar10Dataset`` with ``RandomCrop``,
``RandomHorizontalFlip``, ``Resize((299, 299))``, ``Rescale``, ``Normalize``, ``HWC2CHW``; the network's
main and auxiliary logits into ``CrossEntropy``; ``RMSProp`` on parameter groups (no weight decay on the
BatchNorm and bias parameters) and the cosine learning rates; ``Model`` with ``LossMonitor``, ``TimeMonitor``
and ``ModelCheckpoint``), and eval.py's ``eval_inceptionv3()`` on a checkpoint (``nn.Loss``,
``Top1CategoricalAccuracy``, ``Top5CategoricalAccuracy``). The architecture, the losses, the learning rates
and the metrics are checked against references; ImageNet's pipelines (``ImageFolderDataset``,
``RandomCropDecodeResize``, ``RandomColorAdjust``, ``Decode``, ``Resize``, ``CenterCrop``) too."""

import copy
import math
import os

import numpy as np
import pytest
from PIL import Image
from zoo.inceptionv3 import eval as zoo_eval
from zoo.inceptionv3 import train as zoo_train
from zoo.inceptionv3.src.dataset import create_dataset_cifar10, create_dataset_imagenet
from zoo.inceptionv3.src.inception_v3 import InceptionV3
from zoo.inceptionv3.src.loss import CrossEntropy, CrossEntropy_Val
from zoo.inceptionv3.src.lr_generator import get_lr
from zoo.inceptionv3.src.model_utils.config import config

import opforge
import opforge.dataset as ds
from opforge import Tensor, context
from opforge.train.callback import LambdaCallback

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220], [200, 200, 40]])
ds.config._state["seed"] = None  # train.py's set_seed(1) at import (collection): the other tests do not see it


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    opforge.set_seed(1)  # the weights, numpy.random and the dataset's shuffles and augmentations
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_cifar(root, count=8, seed=0):
    """CIFAR-10's binary layout under cifar-10-batches-bin (train) and cifar-10-verify-bin (eval): a label
    byte, then the red, green and blue 32 x 32 planes; images of four colours (labels 0..3) with noise."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(count) % 4).astype(np.uint8)
    planes = COLORS[labels][:, :, None, None] + rng.normal(0, 20, (count, 3, 32, 32))
    images = np.clip(planes, 0, 255).astype(np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(count, -1)], 1).tobytes()
    for sub, name in (("cifar-10-batches-bin", "data_batch_1.bin"), ("cifar-10-verify-bin", "test_batch.bin")):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        with open(os.path.join(root, sub, name), "wb") as f:
            f.write(records)
    return str(root)


class _Recording(zoo_train.Model):
    """The zoo's Model, recording the step losses."""

    losses: list = []

    def train(self, *args, callbacks=None, **kwargs):
        record = LambdaCallback(
            on_train_step_end=lambda rc: _Recording.losses.append(float(rc.original_args().net_outputs.asnumpy()))
        )
        return super().train(*args, callbacks=[*callbacks, record], **kwargs)


def _conv(cin, cout, kh, kw=None):
    """A BasicConv2d's parameters: the convolution's weights (no bias) and BatchNorm's gamma and beta."""
    return cin * cout * kh * (kh if kw is None else kw) + 2 * cout


def _inception_v3_parameters(num_classes):
    def block_a(cin, pool):
        return (_conv(cin, 64, 1) + _conv(cin, 48, 1) + _conv(48, 64, 5) + _conv(cin, 64, 1) + _conv(64, 96, 3)
                + _conv(96, 96, 3) + _conv(cin, pool, 1))  # fmt: skip

    def block_b(cin):
        return _conv(cin, 384, 3) + _conv(cin, 64, 1) + _conv(64, 96, 3) + _conv(96, 96, 3)

    def block_c(cin, c7):
        return (_conv(cin, 192, 1) + _conv(cin, c7, 1) + _conv(c7, c7, 1, 7) + _conv(c7, 192, 7, 1)
                + _conv(cin, c7, 1) + _conv(c7, c7, 7, 1) + _conv(c7, c7, 1, 7) + _conv(c7, c7, 7, 1)
                + _conv(c7, 192, 1, 7) + _conv(cin, 192, 1))  # fmt: skip

    def block_d(cin):
        return (_conv(cin, 192, 1) + _conv(192, 320, 3) + _conv(cin, 192, 1) + _conv(192, 192, 1, 7)
                + _conv(192, 192, 7, 1) + _conv(192, 192, 3))  # fmt: skip

    def block_e(cin):
        return (_conv(cin, 320, 1) + _conv(cin, 384, 1) + 2 * (_conv(384, 384, 1, 3) + _conv(384, 384, 3, 1))
                + _conv(cin, 448, 1) + _conv(448, 384, 3) + _conv(cin, 192, 1))  # fmt: skip

    stem = _conv(3, 32, 3) + _conv(32, 32, 3) + _conv(32, 64, 3) + _conv(64, 80, 1) + _conv(80, 192, 3)
    blocks = block_a(192, 32) + block_a(256, 64) + block_a(288, 64) + block_b(288)
    blocks += block_c(768, 128) + 2 * block_c(768, 160) + block_c(768, 192) + block_d(768)
    blocks += block_e(1280) + block_e(2048)
    aux = 768 * 128 + 128 * 768 * 25 + 768 * num_classes + num_classes  # bias-free convolutions, a Dense
    return stem + blocks + 2048 * num_classes + num_classes, aux


# ---------------------------------------------------------------------------------------------
# The network, the losses and the learning rates


def test_inception_v3_has_the_paper_blocks_and_parameter_count():
    main, aux = _inception_v3_parameters(1000)
    # torchvision's inception_v3 (27,161,264 parameters) less its auxiliary head's BatchNorm (2 x (128 + 768))
    assert main + aux == 27_161_264 - 1792
    net = InceptionV3(num_classes=1000)
    assert sum(int(np.prod(p.shape)) for p in net.trainable_params()) == main + aux
    inference = InceptionV3(10, is_training=False)  # no auxiliary head
    assert sum(int(np.prod(p.shape)) for p in inference.trainable_params()) == _inception_v3_parameters(10)[0]
    # XavierUniform weights: uniform within sqrt(6 / (fan_in + fan_out))
    w = net.Mixed_6b.branch1[1].conv.weight.asnumpy()  # 128 -> 128, 1 x 7
    bound = math.sqrt(6 / (128 * 7 + 128 * 7))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound and abs(w.mean()) < 0.01 * bound

    x = Tensor(np.random.default_rng(0).standard_normal((1, 3, 299, 299)).astype(np.float32))
    small = InceptionV3(num_classes=10)
    small.set_train(False)
    logits, aux_logits = small(x)  # is_training=True: the auxiliary head's logits too
    assert logits.shape == aux_logits.shape == (1, 10)
    features = InceptionV3(num_classes=10, is_training=False, include_top=False)
    features.set_train(False)
    assert features(x).shape == (1, 2048, 8, 8)  # 299 -> 8 x 8: Logits' 8 x 8 average pool


def _log_softmax(x):
    shifted = x - x.max(1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(1, keepdims=True))


def test_cross_entropy_with_the_auxiliary_logits_matches_numpy():
    rng = np.random.default_rng(1)
    logits, aux = rng.standard_normal((2, 6, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 6).astype(np.int32)
    target = np.full((6, 10), 0.1 / 9)
    target[np.arange(6), labels] = 0.9
    main_loss = np.mean(-(target * _log_softmax(logits)).sum(1))
    aux_loss = np.mean(-(target * _log_softmax(aux)).sum(1))
    loss = CrossEntropy(smooth_factor=0.1, num_classes=10, factor=0.2)
    got = loss((Tensor(logits), Tensor(aux)), Tensor(labels)).asnumpy()
    np.testing.assert_allclose(got, main_loss + 0.2 * aux_loss, rtol=1e-5)
    got = CrossEntropy_Val(smooth_factor=0.1, num_classes=10)(Tensor(logits), Tensor(labels)).asnumpy()
    np.testing.assert_allclose(got, main_loss, rtol=1e-5)


def test_learning_rates_match_references():
    # cosine: the warm-up's linear steps from lr_init, then a cosine from lr_max down to lr_end
    lr = get_lr(0.01, 0.001, 0.1, warmup_epochs=1, total_epochs=3, steps_per_epoch=2, lr_decay_mode="cosine")
    want = [0.01 + 0.045 * (i + 1) for i in range(2)]
    want += [0.001 + 0.099 * 0.5 * (1 + math.cos(math.pi * i / 4)) for i in range(4)]
    np.testing.assert_allclose(lr, np.float32(want), rtol=1e-6)
    lr = get_lr(0.0, 0.0, 1.0, warmup_epochs=0, total_epochs=10, steps_per_epoch=1, lr_decay_mode="steps")
    np.testing.assert_allclose(lr, np.float32([1, 1, 1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001]), rtol=1e-6)
    lr = get_lr(0.0, 0.0, 1.0, warmup_epochs=0, total_epochs=6, steps_per_epoch=1, lr_decay_mode="steps_decay")
    np.testing.assert_allclose(lr, np.float32([1, 1, 0.94, 0.94, 0.94**2, 0.94**2]), rtol=1e-6)
    lr = get_lr(0.0, 0.2, 1.0, warmup_epochs=1, total_epochs=3, steps_per_epoch=1, lr_decay_mode="linear")
    np.testing.assert_allclose(lr, np.float32([0.0, 1.0, 0.6]), rtol=1e-6)


def test_the_datasets_pipelines(tmp_path):
    config.batch_size, config.rank, config.group_size = 2, 0, 1
    root = _write_cifar(tmp_path / "cifar", count=4)
    image, label = next(create_dataset_cifar10(root, True, config).create_tuple_iterator(output_numpy=True))
    assert image.shape == (2, 3, 299, 299) and image.dtype == np.float32 and label.dtype == np.int32
    # the eval pipeline: a 32 x 32 colour resized to 299 x 299, normalized per channel
    evaluated = create_dataset_cifar10(root, False, config)
    rows = [r for r in evaluated.create_tuple_iterator(output_numpy=True)]
    assert sum(len(lab) for _, lab in rows) == 4
    mean, std = np.array([0.4914, 0.4822, 0.4465]), np.array([0.2023, 0.1994, 0.2010])
    for images, labels in rows:
        for im, lab in zip(images, labels):
            colour = (im.mean((1, 2)) * std + mean) * 255
            np.testing.assert_allclose(colour, COLORS[lab], atol=12)  # the noise averages out

    # ImageNet's: JPEG files under a folder per class
    for c, colour in enumerate(COLORS[:2]):
        os.makedirs(tmp_path / "images" / f"class{c}")
        for i in range(2):
            pixels = np.clip(colour + np.random.default_rng(i).normal(0, 20, (40, 60, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(tmp_path / "images" / f"class{c}" / f"{i}.jpg")
    for do_train in (True, False):
        data = create_dataset_imagenet(str(tmp_path / "images"), do_train, config)
        batches = list(data.create_tuple_iterator(output_numpy=True))
        assert len(batches) == 2 and all(b[0].shape == (2, 3, 299, 299) for b in batches)
        assert sorted(np.concatenate([b[1] for b in batches]).tolist()) == [0, 0, 1, 1]


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def test_train_py_on_cifar10(tmp_path, monkeypatch):
    config.dataset_path = _write_cifar(tmp_path / "cifar")
    config.ckpt_path = str(tmp_path / "out")
    _Recording.losses = []
    monkeypatch.setattr(zoo_train, "Model", _Recording)
    zoo_train.train_inceptionv3()
    # 8 images in batches of 2: 4 steps an epoch, 3 epochs; a checkpoint at the end of each
    losses = _Recording.losses
    assert len(losses) == 12 and np.all(np.isfinite(losses)), losses
    assert np.mean(losses[8:]) < 0.95 * np.mean(losses[:4]), losses
    ckpt_dir = os.path.join(config.ckpt_path, "ckpt_0")
    assert sorted(os.listdir(ckpt_dir)) == [f"inceptionv3-rank0-{e}_4.ckpt" for e in (1, 2, 3)]
    saved = opforge.load_checkpoint(os.path.join(ckpt_dir, "inceptionv3-rank0-3_4.ckpt"))
    net = InceptionV3(num_classes=config.num_classes)
    assert {p.name for p in net.get_parameters()} <= set(saved)  # the network's weights and BatchNorm statistics
    opforge.load_param_into_net(net, saved)


def test_eval_py_on_a_checkpoint(tmp_path, monkeypatch):
    config.dataset_path = _write_cifar(tmp_path / "cifar")
    config.checkpoint = str(tmp_path / "inceptionv3.ckpt")
    opforge.save_checkpoint(InceptionV3(num_classes=config.num_classes), config.checkpoint)  # with its aux head
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(a))
    zoo_eval.eval_inceptionv3()
    (metrics,) = [a[1] for a in printed if a and a[0] == "metric: "]
    assert set(metrics) == {"Loss", "Top1-Acc", "Top5-Acc"}

    # the same metrics from the checkpoint's network on the verify files (their order, shuffled, does not matter:
    # the loss is the mean of equal batches' means)
    context.set_context(mode=context.PYNATIVE_MODE)
    net = InceptionV3(num_classes=config.num_classes, is_training=False)
    opforge.load_param_into_net(net, opforge.load_checkpoint(config.checkpoint))
    net.set_train(False)
    loss = CrossEntropy_Val(smooth_factor=0.1, num_classes=config.num_classes)
    top1 = top5 = total = 0
    batch_losses = []
    for images, labels in create_dataset_cifar10(config.dataset_path, False, config).create_tuple_iterator(
        output_numpy=True
    ):
        logits = net(Tensor(images)).asnumpy()
        order = np.argsort(-logits, axis=1)
        top1 += int((order[:, 0] == labels).sum())
        top5 += int(sum(lab in row[:5] for lab, row in zip(labels, order)))
        total += len(labels)
        batch_losses.append(float(loss(Tensor(logits), Tensor(labels)).asnumpy()))
    assert total == 8
    assert metrics["Top1-Acc"] == pytest.approx(top1 / total) and metrics["Top5-Acc"] == pytest.approx(top5 / total)
    assert metrics["Loss"] == pytest.approx(np.mean(batch_losses), rel=1e-4)
