"""DeepLabV3 as MindSpore's model zoo runs it (tests/zoo/deeplabv3: official/cv/DeepLabv3 with ``mindspore``
replaced by ``opforge``): src/data/build_seg_data.py writes a MindRecord of JPEG images and PNG masks made here
(``FileWriter``), train.py's ``train()`` reads it (``MindDataset``, the zoo's random scale, pad, crop and flip in a
Python ``map``, ``shuffle``, ``batch``), trains ``DeepLabV3`` (ResNet-101 with atrous layer4, ASPP with
``ResizeNearestNeighbor`` and ``ResizeBilinear(align_corners=True)``) with the zoo's ignore-label softmax cross
entropy, ``Momentum`` on the cosine learning rates (a generator) with ``FixedLossScaleManager`` and
``ModelCheckpoint``; eval.py's ``net_eval()`` loads the checkpoint and prints the confusion matrix and mean IoU,
checked against the loaded network's own predictions."""

import copy
import glob
import os
import runpy
import sys

import numpy as np
import pytest
from PIL import Image
from zoo.deeplabv3 import cv2_shim
from zoo.deeplabv3 import eval as zoo_eval
from zoo.deeplabv3 import train as zoo_train
from zoo.deeplabv3.model_utils.config import config
from zoo.deeplabv3.src.loss.loss import SoftmaxCrossEntropyLoss
from zoo.deeplabv3.src.nets import net_factory
from zoo.deeplabv3.src.utils import learning_rates

import opforge
import opforge.dataset as ds
from opforge import Tensor, context, nn
from opforge.train.callback import LambdaCallback
from opforge.train.loss_scale_manager import FixedLossScaleManager
from opforge.train.model import Model
from opforge.train.serialization import load_checkpoint, load_param_into_net

# class 1 red, class 2 blue, class 0 (background) grey; BGR in the zoo's arrays, RGB in the files
COLORS = np.array([[128, 128, 128], [220, 30, 30], [30, 30, 220]])
ZOO = os.path.join(os.path.dirname(__file__), "zoo", "deeplabv3")


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


def _write_pairs(root, count=4, size=(36, 40), seed=0):
    """JPEG images and PNG masks: image i all of class i % 3 (its colour), a border of ignored pixels (255, as
    VOC's), noise on top; and the zoo's list file ("image mask" per line, relative to ``root``)."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(count):
        h, w = size
        mask = np.full((h, w), i % 3, np.uint8)
        mask[-3:, :] = 255  # an ignored border, as VOC's
        pixels = np.clip(COLORS[np.where(mask == 255, 0, mask)] + rng.normal(0, 10, (h, w, 3)), 0, 255)
        Image.fromarray(pixels.astype(np.uint8)).save(os.path.join(root, f"img{i}.jpg"), quality=95)
        Image.fromarray(mask).save(os.path.join(root, f"msk{i}.png"))
        lines.append(f"img{i}.jpg msk{i}.png")
    with open(os.path.join(root, "list.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return os.path.join(root, "list.txt")


def test_network_shapes_and_loss_against_numpy():
    net = net_factory.nets_map["deeplab_v3_s16"]("train", 3, 16, False)
    # ResNet-101's bottlenecks (without its fc) and the ASPP head
    assert [len(getattr(net.resnet, f"layer{i}")) for i in range(1, 5)] == [3, 4, 23, 3]
    assert [b.conv2.dilation[-1] for b in net.resnet.layer4] == [2, 4, 8]
    net.set_train(False)
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 33, 33)).astype(np.float32))
    out = net(x)
    assert out.shape == (2, 3, 33, 33) and np.all(np.isfinite(out.asnumpy()))

    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    labels = rng.integers(0, 3, (2, 4, 5)).astype(np.uint8)
    labels[0, 0] = 255
    got = SoftmaxCrossEntropyLoss(3, 255)(Tensor(logits), Tensor(labels)).asnumpy()
    flat = logits.transpose(0, 2, 3, 1).reshape(-1, 3)
    lab = labels.reshape(-1).astype(np.int64)
    keep = lab != 255
    logp = flat - flat.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(got, -logp[keep, lab[keep]].mean(), rtol=1e-5)

    lr = list(learning_rates.cosine_lr(0.015, 4, 4))
    np.testing.assert_allclose(lr, [0.015 * 0.5 * (1 + np.cos(np.pi * i / 4)) for i in range(4)])


def test_the_train_step_learns_a_batch():
    """train.py's cells on one fixed batch (each image one class): BuildTrainNetwork, the ignore-label loss,
    Momentum with loss_scale on cosine_lr's generator, Model with FixedLossScaleManager, in GRAPH_MODE."""
    context.set_context(mode=context.GRAPH_MODE)
    network = net_factory.nets_map["deeplab_v3_s16"]("train", 3, 16, False)
    loss_ = SoftmaxCrossEntropyLoss(3, 255)
    train_net = zoo_train.BuildTrainNetwork(network, loss_)
    lr_iter = learning_rates.cosine_lr(0.003, 12, 12)
    opt = nn.Momentum(train_net.trainable_params(), lr_iter, momentum=0.9, weight_decay=0.0001, loss_scale=3072.0)
    model = Model(train_net, optimizer=opt, amp_level="O0", loss_scale_manager=FixedLossScaleManager(3072.0, False))
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (4, 1, 1)).repeat(33, 1).repeat(33, 2).astype(np.int32)
    labels[:, -3:] = 255
    images = (np.eye(3)[labels % 255].transpose(0, 3, 1, 2) + 0.1 * rng.standard_normal((4, 3, 33, 33))).astype(
        np.float32
    )
    data = ds.NumpySlicesDataset({"data": images, "label": labels}, shuffle=False).batch(4)
    losses = []
    record = LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
    model.train(12, data, callbacks=[record], dataset_sink_mode=False)
    assert len(losses) == 12 and np.all(np.isfinite(losses))
    assert np.mean(losses[-3:]) < 0.3 * np.mean(losses[:3]), losses


def _run_build_seg_data(data_root, data_lst, dst_path, monkeypatch):
    """src/data/build_seg_data.py as its README runs it (``python build_seg_data.py --data_root ...``)."""
    argv = ["build_seg_data.py", "--data_root", data_root, "--data_lst", data_lst, "--dst_path", dst_path]
    argv += ["--num_shards", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(os.path.join(ZOO, "src", "data", "build_seg_data.py"), run_name="__main__")


def test_build_seg_data_then_train_py_then_eval_py(tmp_path, monkeypatch, capsys):
    root = str(tmp_path / "voc")
    os.makedirs(root)
    data_lst = _write_pairs(root, count=8)
    mindrecord = str(tmp_path / "mindrecord" / "seg.mindrecord")
    _run_build_seg_data(root, data_lst, mindrecord, monkeypatch)
    assert os.path.exists(mindrecord)

    config.data_file = mindrecord
    config.train_dir = str(tmp_path / "ckpt")
    config.train_epochs = 12
    config.base_lr = 0.003
    config.batch_size = 4
    losses = []

    class Recording(zoo_train.Model):  # the zoo's Model, with a callback recording the losses
        def train(self, *args, callbacks=None, **kwargs):
            record = LambdaCallback(
                on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy()))
            )
            return super().train(*args, callbacks=[*callbacks, record], **kwargs)

    monkeypatch.setattr(zoo_train, "Model", Recording)
    zoo_train.train()
    assert len(losses) == 24 and np.all(np.isfinite(losses)), losses
    # the zoo's random scale, crop and flip on 33-pixel crops with batch-4 BatchNorm and Dropout(0.7): too noisy
    # for a falling loss in 24 steps (test_the_train_step_learns_a_batch shows the same cells learning)
    ckpts = glob.glob(os.path.join(config.train_dir, "*.ckpt"))
    assert [os.path.basename(c) for c in ckpts] == ["deeplab_v3_s16-12_2.ckpt"]  # keep_checkpoint_max 1

    # eval.py on the same images (their long side resized to the crop size, padded, the probabilities resized back)
    capsys.readouterr()
    recorded = []

    def recording_cal_hist(a, b, n):
        recorded.append(cal_hist(a, b, n))
        return recorded[-1]

    cal_hist = zoo_eval.cal_hist
    monkeypatch.setattr(zoo_eval, "cal_hist", recording_cal_hist)
    config.data_root, config.data_lst, config.ckpt_path = root, data_lst, ckpts[0]
    zoo_eval.net_eval()
    printed = capsys.readouterr().out
    assert "processed 8 images" in printed and "mean IoU" in printed

    # the same evaluation from the checkpoint, written here: resize the long side to the crop, normalize, pad,
    # softmax, crop, resize back (the shim's resize, as eval.py's cv2), argmax, confusion matrix by np.add.at
    net = net_factory.nets_map["deeplab_v3_s16"]("eval", 3, 16, False)
    params = {k[len("network.") :]: v for k, v in load_checkpoint(ckpts[0]).items() if k.startswith("network.")}
    load_param_into_net(net, params)
    net.set_train(False)
    # BatchNorm2d(use_batch_statistics=True) (freeze_bn False) normalizes with the batch's statistics in eval mode
    # too, so the images go through in eval.py's batches of config.batch_size
    hist = np.zeros((3, 3))
    pairs = [line.split(" ") for line in open(data_lst).read().split("\n")[:-1]]
    for start in range(0, len(pairs), config.batch_size):
        batch = np.zeros((config.batch_size, 3, 33, 33), np.float32)
        shapes = []
        for k, (img, _) in enumerate(pairs[start : start + config.batch_size]):
            bgr = np.asarray(Image.open(os.path.join(root, img)).convert("RGB"))[:, :, ::-1]
            h, w = bgr.shape[:2]
            rh, rw = (33, int(33 * w / h)) if h > w else (int(33 * h / w), 33)
            x = (cv2_shim.resize(bgr, (rw, rh)) - np.array(config.image_mean)) / np.array(config.image_std)
            batch[k] = np.pad(x, ((0, 33 - rh), (0, 33 - rw), (0, 0))).transpose(2, 0, 1)
            shapes.append((h, w, rh, rw))
        logits = net(Tensor(batch)).asnumpy()
        for k, (h, w, rh, rw) in enumerate(shapes):
            probs = np.exp(logits[k] - logits[k].max(0))
            probs /= probs.sum(0)
            pred = cv2_shim.resize(probs[:, :rh, :rw].transpose(1, 2, 0), (w, h)).argmax(2)
            mask = np.asarray(Image.open(os.path.join(root, pairs[start + k][1]))).astype(np.int64)
            keep = mask < 3
            np.add.at(hist, (mask[keep], pred[keep]), 1)
    assert hist.sum() == 8 * 33 * 40
    np.testing.assert_array_equal(np.array(recorded).sum(0), hist)
    iou = np.diag(hist) / (hist.sum(1) + hist.sum(0) - np.diag(hist))
    iou_line = [line for line in printed.splitlines() if line.startswith("mean IoU")][0]
    assert float(iou_line.split()[-1]) == pytest.approx(np.nanmean(iou), rel=1e-6)
