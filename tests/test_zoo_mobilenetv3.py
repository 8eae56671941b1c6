"""MobileNetV3 as MindSpore's model zoo runs it (tests/zoo/mobilenetv3: official/cv/MobileNet/mobilenetv3 with
``mindspore`` replaced by ``opforge``): train.py run as the script with ``--device_target CPU`` on CIFAR-10
binary files written here (GRAPH_MODE; ``create_dataset_cifar``'s ``Cifar10Dataset`` with ``RandomCrop``,
``RandomHorizontalFlip``, ``RandomColorAdjust``, ``Resize``, ``Rescale``, ``Normalize``, ``CutOut``,
``HWC2CHW`` in 8 worker threads; ``mobilenet_v3_large`` with its squeeze-excite blocks, HSwish and HSigmoid;
the script's ``CrossEntropyWithLabelSmooth``, ``Momentum`` with a loss scale on ``get_lr``'s warm-up and
cosine, ``Model`` with ``FixedLossScaleManager`` in dataset sink mode, its ``Monitor`` callback and
``ModelCheckpoint``), then eval.py run as the script on the last checkpoint (the ``acc`` metric of the Softmax
network). ``create_dataset``'s ImageNet pipelines (``ImageFolderDataset``, ``RandomCropDecodeResize``, the
``config_gpu`` image size) run too. The architecture, the loss, the learning rates, the metric and the
pipelines are checked against references."""

import copy
import math
import os
import re
import runpy
import sys

import numpy as np
import pytest
from PIL import Image
from zoo.mobilenetv3.src.config import config_cpu, config_gpu
from zoo.mobilenetv3.src.dataset import create_dataset, create_dataset_cifar
from zoo.mobilenetv3.src.lr_generator import get_lr
from zoo.mobilenetv3.src.mobilenetV3 import SE, mobilenet_v3_large, mobilenet_v3_small

import opforge
import opforge.dataset as ds
from opforge import Tensor, context

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220], [200, 200, 40]])


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(dict(config_cpu)), copy.deepcopy(dict(config_gpu))
    opforge.set_seed(1)  # the weights (np.random.normal), the dataset's shuffles and augmentations
    yield
    for cfg, values in zip((config_cpu, config_gpu), saved):
        cfg.clear()
        cfg.update(values)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_cifar(root, count=8, seed=0):
    """CIFAR-10's binary layout (data_batch_1.bin): a label byte, then the red, green and blue 32 x 32
    planes; images of four colours (labels 0..3) with noise."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(count) % 4).astype(np.uint8)
    planes = COLORS[labels][:, :, None, None] + rng.normal(0, 20, (count, 3, 32, 32))
    images = np.clip(planes, 0, 255).astype(np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(count, -1)], 1).tobytes()
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "data_batch_1.bin"), "wb") as f:
        f.write(records)
    return str(root)


def _ceil8(x):
    return int(math.ceil(x / 8) * 8)


def _parameters(cfg, squeeze, num_classes):
    """The parameters of the zoo's MobileNetV3 counted from its block table (multiplier 1)."""
    total, cin = 3 * 16 * 9 + 2 * 16, 16  # the stem's convolution and BatchNorm
    for k, exp, out, se, _, _ in cfg:
        if exp != out:
            total += cin * exp + 2 * exp  # the 1 x 1 expansion
        total += exp * k * k + 2 * exp  # the depthwise convolution
        if se:
            mid = _ceil8(exp // 4)
            total += 2 * exp * mid + mid + exp  # two 1 x 1 convolutions with biases
        total += exp * out + 2 * out  # the projection, no activation
        cin = out
    total += cin * squeeze + 2 * squeeze + squeeze * 1280  # the last 1 x 1 convolutions (no bias after pooling)
    return total + 1280 * num_classes + num_classes  # the output convolution, with a bias


# fmt: off
LARGE = [(3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2), (3, 72, 24, False, "relu", 1),
         (5, 72, 40, True, "relu", 2), (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
         (3, 240, 80, False, "hswish", 2), (3, 200, 80, False, "hswish", 1), (3, 184, 80, False, "hswish", 1),
         (3, 184, 80, False, "hswish", 1), (3, 480, 112, True, "hswish", 1), (3, 672, 112, True, "hswish", 1),
         (5, 672, 160, True, "hswish", 2), (5, 960, 160, True, "hswish", 1), (5, 960, 160, True, "hswish", 1)]
SMALL = [(3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
         (5, 96, 40, True, "hswish", 2), (5, 240, 40, True, "hswish", 1), (5, 240, 40, True, "hswish", 1),
         (5, 120, 48, True, "hswish", 1), (5, 144, 48, True, "hswish", 1), (5, 288, 96, True, "hswish", 2),
         (5, 576, 96, True, "hswish", 1), (5, 576, 96, True, "hswish", 1)]
# fmt: on


# ---------------------------------------------------------------------------------------------
# The network, the loss and the learning rates


def test_mobilenet_v3_large_and_small_have_the_paper_blocks_and_parameter_counts():
    large, small = mobilenet_v3_large(num_classes=1000), mobilenet_v3_small(num_classes=1000)
    count = [sum(int(np.prod(p.shape)) for p in net.trainable_params()) for net in (large, small)]
    # torchvision's mobilenet_v3_large has 5,483,032 parameters: the zoo's has no bias on the 960 -> 1280 layer
    assert count == [_parameters(LARGE, 960, 1000), _parameters(SMALL, 576, 1000)] == [5_483_032 - 1280, 2_945_288]
    # the He-normal initial weights (std sqrt(2 / (k * k * out_channels))), BatchNorm at 1 and 0
    w = large.features[4].conv1.conv.weight.asnumpy()  # the 3 x 3 depthwise convolution of 64 channels
    assert w.shape == (64, 1, 3, 3) and w.std() == pytest.approx(math.sqrt(2 / (9 * 64)), rel=0.15)
    assert np.all(large.features[1].gamma.asnumpy() == 1) and np.all(large.features[1].beta.asnumpy() == 0)

    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype(np.float32))
    net = mobilenet_v3_small(num_classes=10, multiplier=0.5, activation="Softmax")
    net.set_train(False)
    probabilities = net(x).asnumpy()
    assert probabilities.shape == (2, 10)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, rtol=1e-5)
    features = mobilenet_v3_large(include_top=False)
    features.set_train(False)
    assert features(x).shape == (2, 1280, 1, 1)


def test_squeeze_excite_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 16, 5, 5)).astype(np.float32)
    se = SE(16)
    out = se(Tensor(x)).asnumpy()
    w1, b1 = se.conv1.weight.asnumpy()[:, :, 0, 0], se.conv1.bias.asnumpy()
    w2, b2 = se.conv2.weight.asnumpy()[:, :, 0, 0], se.conv2.bias.asnumpy()
    assert w1.shape == (8, 16)  # 16 // 4 rounded up to 8
    pooled = x.mean((2, 3))
    hidden = np.maximum(pooled @ w1.T + b1, 0)
    gate = np.clip(hidden @ w2.T + b2 + 3, 0, 6) / 6  # hard sigmoid
    np.testing.assert_allclose(out, x * gate[:, :, None, None], rtol=1e-5, atol=1e-6)


def test_label_smoothed_cross_entropy_and_learning_rates_match_references(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["train.py", "--device_target", "CPU"])
    script = runpy.run_module("zoo.mobilenetv3.train")  # the script's definitions (its argparse runs at import)
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((6, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 6).astype(np.int32)
    got = script["CrossEntropyWithLabelSmooth"](smooth_factor=0.1, num_classes=10)(Tensor(logits), Tensor(labels))
    target = np.full((6, 10), 0.1 / 9)
    target[np.arange(6), labels] = 0.9
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(got.asnumpy(), np.mean(-(target * log_softmax).sum(1)), rtol=1e-5)

    lr = get_lr(global_step=1, lr_init=0.0, lr_end=0.01, lr_max=0.1, warmup_epochs=1, total_epochs=3, steps_per_epoch=2)
    want = [0.0, 0.05] + [0.01 + 0.09 * (1 + math.cos(math.pi * i / 4)) / 2 for i in range(4)]
    np.testing.assert_allclose(lr, np.float32(want[1:]), rtol=1e-6)


def test_create_dataset_imagenet_pipelines_at_the_configured_size(tmp_path):
    rng = np.random.default_rng(3)
    raw = {}
    for c, colour in enumerate(COLORS[:2]):
        os.makedirs(tmp_path / f"class{c}")
        for i in range(4):
            pixels = np.clip(colour + rng.normal(0, 30, (64, 96, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(tmp_path / f"class{c}" / f"{i}.png")  # lossless: the reference decodes alike
            raw[(c, i)] = pixels
    for image, label in create_dataset(str(tmp_path), True, config_gpu, "GPU", batch_size=4).create_tuple_iterator(
        output_numpy=True
    ):
        assert image.shape == (4, 3, 32, 32) and image.dtype == np.float32 and label.dtype == np.int32
    # eval: Resize(256) of the shorter side (64 x 96 -> 256 x 384, bilinear), a 32 x 32 centre crop, Normalize
    mean, std = np.array([0.485, 0.456, 0.406]) * 255, np.array([0.229, 0.224, 0.225]) * 255
    want = {}
    for (c, i), pixels in raw.items():
        resized = np.asarray(Image.fromarray(pixels).resize((384, 256), Image.BILINEAR), np.float32)
        want[(c, i)] = ((resized[112:144, 176:208] - mean) / std).transpose(2, 0, 1)
    seen = []
    data = create_dataset(str(tmp_path), False, config_gpu, "GPU", batch_size=4)
    for images, labels in data.create_tuple_iterator(output_numpy=True):
        for image, label in zip(images, labels):
            (match,) = [key for key, w in want.items() if np.allclose(image, w, atol=1e-3)]
            assert match[0] == label
            seen.append(match)
    assert sorted(seen) == sorted(want)  # every image once, shuffled
    with pytest.raises(ValueError, match="Unsupported device_target"):
        create_dataset(str(tmp_path), True, config_gpu, "CPU")


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def test_train_py_then_eval_py_on_cifar10(tmp_path, monkeypatch, capsys):
    root = _write_cifar(tmp_path / "cifar")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["train.py", "--dataset_path", root, "--device_target", "CPU"])
    runpy.run_module("zoo.mobilenetv3.train", run_name="__main__")
    out = capsys.readouterr().out
    # dataset sink mode: the Monitor's step end once an epoch (2 steps of 4 images), the epoch's last loss
    losses = [float(v) for v in re.findall(r"loss:\[ *([0-9.]+)/", out)]
    assert len(losses) == config_cpu.epoch_size == 5 and np.all(np.isfinite(losses)), out
    assert losses[-1] < 0.8 * losses[0], losses
    lrs = [float(v) for v in re.findall(r"lr:\[([0-9.]+)\]", out)]
    want_lr = get_lr(0, 0, 0, config_cpu.lr, config_cpu.warmup_epochs, 5, 2)
    np.testing.assert_allclose(lrs, want_lr[1::2], atol=6e-4)  # each epoch's last step's, printed to 3 decimals
    ckpt_dir = tmp_path / "checkpointckpt_"  # config_gpu's save_checkpoint_path + "ckpt_/"
    assert sorted(os.listdir(ckpt_dir)) == [f"mobilenetV3-{e}_2.ckpt" for e in range(1, 6)]

    checkpoint = str(ckpt_dir / "mobilenetV3-5_2.ckpt")
    monkeypatch.setattr(
        sys, "argv", ["eval.py", "--checkpoint_path", checkpoint, "--dataset_path", root, "--device_target", "CPU"]
    )
    runpy.run_module("zoo.mobilenetv3.eval", run_name="__main__")
    printed = capsys.readouterr().out
    result = eval(printed.split("result:")[1].split("ckpt=")[0])  # the dict eval.py prints
    # the accuracy of the checkpoint's network on the eval pipeline's images (shuffled: the order does not matter)
    context.set_context(mode=context.PYNATIVE_MODE)
    net = mobilenet_v3_large(num_classes=config_cpu.num_classes, activation="Softmax")
    opforge.load_param_into_net(net, opforge.load_checkpoint(checkpoint))
    net.set_train(False)
    hits = total = 0
    for images, labels in create_dataset_cifar(root, False, batch_size=4).create_tuple_iterator(output_numpy=True):
        hits += int((net(Tensor(images)).asnumpy().argmax(1) == labels).sum())
        total += len(labels)
    assert total == 8 and result == {"acc": pytest.approx(hits / total)}
