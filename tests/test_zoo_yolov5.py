"""YOLOv5 as MindSpore's model zoo runs it (tests/zoo/yolov5: official/cv/YOLOv5 with ``mindspore`` replaced by
``opforge``; yolov5s, 4 classes, 64 x 64 / 64 x 96 images): the whole ``YOLOV5`` forward (its normalisation and
Focus space-to-depth input, the CSP-Darknet backbone with SPP, the PAN neck, the three ``DetectionBlock`` box
decodings) against a NumPy YOLOv5 over the same weights in both BatchNorm modes; the ``GIou``,
``ConfidenceLoss``, ``ClassLoss`` and ``YoloLossBlock`` against NumPy; ``YoloWithLossCell``'s gradients against
NumPy central differences; and train.py's training setup (``default_recurisive_init``, ``get_lr``,
``nn.Momentum`` over ``get_param_groups`` with the static loss scale, ``nn.TrainOneStepCell`` with
``sens = loss_scale // 2``) in graph mode on two images augmented by transforms.py's ``preprocess_fn`` and
labelled by its ``batch_preprocess_true_box_single``: the first update is MindSpore's, the loss falls."""

import json
import random

import numpy as np
import pytest
from PIL import Image
from zoo.yolov5.model_utils.config import config
from zoo.yolov5.src.initializer import default_recurisive_init
from zoo.yolov5.src.loss import ClassLoss, ConfidenceLoss
from zoo.yolov5.src.lr_scheduler import get_lr
from zoo.yolov5.src.transforms import _preprocess_true_boxes, batch_preprocess_true_box_single, preprocess_fn
from zoo.yolov5.src.util import AverageMeter, get_param_groups
from zoo.yolov5.src.yolo import YOLOV5, GIou, YoloLossBlock, YoloWithLossCell
from zoo.yolov5.src.yolo_dataset import create_yolo_dataset

import opforge as ms
import opforge.nn as nn
from opforge import context, ops

SHAPE = config.input_shape[0]  # yolov5s: widths 32..512, one bottleneck per CSP unit
NC = config.num_classes
ANCHORS = np.array(config.anchor_scales, np.float64)
# DetectionBlock / YoloLossBlock per scale: anchor indices, xy scale and offset
SCALES = {"l": ((6, 7, 8), 1.05, 0.025), "m": ((3, 4, 5), 1.1, 0.05), "s": ((0, 1, 2), 1.2, 0.1)}


@pytest.fixture(autouse=True)
def _seeds():
    np.random.seed(0)
    random.seed(0)
    ms.set_seed(1)
    yield
    context.set_context(mode=context.PYNATIVE_MODE)


# ---------------------------------------------------------------- a NumPy YOLOv5 (float64)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _conv(x, w, stride=1, pad=0, bias=None):
    n, c, h, wd = x.shape
    o, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    cols = np.empty((n, c, k, k, oh, ow))
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = xp[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
    out = np.einsum("ok,nkp->nop", w.reshape(o, -1), cols.reshape(n, c * k * k, oh * ow)).reshape(n, o, oh, ow)
    return out if bias is None else out + bias[None, :, None, None]


def _maxpool_same(x, k):
    p = k // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    h, w = x.shape[2:]
    return np.max([xp[:, :, i : i + h, j : j + w] for i in range(k) for j in range(k)], axis=0)


class NumpyYolo:
    """YOLOv5 written from the zoo's architecture (k / stride / CSP depth per layer), reading only the weights."""

    def __init__(self, params, train_bn):
        self.p = {k: v.asnumpy().astype(np.float64) for k, v in params}
        self.train_bn = train_bn
        self.batch_means = {}  # per Conv block, when BatchNorm runs on batch statistics

    def cbs(self, name, x, k=1, s=1):
        """Conv (no bias, padding k // 2) + BatchNorm(eps 1e-3) + SiLU."""
        p = self.p
        y = _conv(x, p[name + ".conv.weight"], s, k // 2)
        if self.train_bn:
            mean, var = y.mean((0, 2, 3)), y.var((0, 2, 3))
            self.batch_means[name] = mean
        else:
            mean, var = p[name + ".bn.moving_mean"], p[name + ".bn.moving_variance"]
        y = (y - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-3)
        y = y * p[name + ".bn.gamma"][:, None, None] + p[name + ".bn.beta"][:, None, None]
        return y * _sigmoid(y)

    def csp(self, name, x, n, shortcut=True):
        y = self.cbs(name + ".conv1", x)
        for i in range(n):
            b = self.cbs(f"{name}.m.{i}.conv2", self.cbs(f"{name}.m.{i}.conv1", y), k=3)
            y = y + b if shortcut else b
        return self.cbs(name + ".conv3", np.concatenate([y, self.cbs(name + ".conv2", x)], 1))

    def features(self, img):
        """The inputs of the three YoloBlocks (small, medium, big objects) for NHWC images."""
        mean = np.array([0.485, 0.456, 0.406]) * 255
        std = np.array([0.229, 0.224, 0.225]) * 255
        x = ((img - mean) / std).transpose(0, 3, 1, 2)
        x = np.concatenate([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], 1)
        d = SHAPE[6]
        b = "feature_map.backbone."
        c1 = self.cbs(b + "focus.conv", x, k=3)
        c3 = self.csp(b + "CSP1", self.cbs(b + "conv1", c1, 3, 2), d)
        c5 = self.csp(b + "CSP2", self.cbs(b + "conv2", c3, 3, 2), 3 * d)
        c7 = self.csp(b + "CSP3", self.cbs(b + "conv3", c5, 3, 2), 3 * d)
        c8 = self.cbs(b + "conv4", c7, 3, 2)
        s1 = self.cbs(b + "spp.conv1", c8)
        spp = self.cbs(b + "spp.conv2", np.concatenate([s1] + [_maxpool_same(s1, k) for k in (5, 9, 13)], 1))
        c10 = self.csp(b + "CSP4", spp, d, shortcut=False)
        f = "feature_map."
        up = lambda t: t.repeat(2, axis=2).repeat(2, axis=3)  # noqa: E731  nearest, twice the size
        n1 = self.cbs(f + "conv1", c10)
        n3 = self.csp(f + "CSP5", np.concatenate([up(n1), c7], 1), d, shortcut=False)
        n4 = self.cbs(f + "conv2", n3)
        n6 = self.csp(f + "CSP6", np.concatenate([up(n4), c5], 1), d, shortcut=False)
        n9 = self.csp(f + "CSP7", np.concatenate([self.cbs(f + "conv3", n6, 3, 2), n4], 1), d, shortcut=False)
        n12 = self.csp(f + "CSP8", np.concatenate([self.cbs(f + "conv4", n9, 3, 2), n1], 1), d, shortcut=False)
        return n6, n9, n12

    def head(self, i, feat, bias=None):
        p = self.p[f"feature_map.back_block{i}.conv.bias"] if bias is None else bias
        return _conv(feat, self.p[f"feature_map.back_block{i}.conv.weight"], bias=p)


def _decode(x, scale, input_shape):
    """DetectionBlock: (prediction, box_xy, box_wh, confidence, class probabilities)."""
    idx, sxy, off = SCALES[scale]
    n, _, h, w = x.shape
    pred = x.reshape(n, 3, 5 + NC, h, w).transpose(0, 3, 4, 1, 2)
    grid = np.stack(np.broadcast_arrays(np.arange(w)[None, :], np.arange(h)[:, None]), -1)[None, :, :, None, :]
    xy = (sxy * _sigmoid(pred[..., :2]) - off + grid) / np.array([w, h])
    wh = np.exp(pred[..., 2:4]) * ANCHORS[list(idx)] / np.asarray(input_shape, np.float64)
    return pred, xy, wh, _sigmoid(pred[..., 4:5]), _sigmoid(pred[..., 5:])


def _bce(x, z):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def _xyxy(b):
    return np.concatenate([b[..., :2] - b[..., 2:4] / 2, b[..., :2] + b[..., 2:4] / 2], -1)


def _giou(p, g):
    """The zoo's GIoU of (x1, y1, x2, y2) boxes: its intersection is the product of the overlaps unclamped (two
    negative overlaps make a positive one), eps 1e-6 on the union and the enclosing area, clipped to [-1, 1]."""
    area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])  # noqa: E731
    inter = (np.minimum(p[..., 2], g[..., 2]) - np.maximum(p[..., 0], g[..., 0])) * (
        np.minimum(p[..., 3], g[..., 3]) - np.maximum(p[..., 1], g[..., 1])
    )
    enclose = (np.maximum(p[..., 2], g[..., 2]) - np.minimum(p[..., 0], g[..., 0])) * (
        np.maximum(p[..., 3], g[..., 3]) - np.minimum(p[..., 1], g[..., 1])
    ) + 1e-6
    union = area(p) + area(g) - inter + 1e-6
    return np.clip(inter / union - (enclose - union) / enclose, -1, 1)[..., None]


def _loss_block(pred, xy, wh, y_true, gt_box, thr=config.ignore_threshold):
    """YoloLossBlock: 4 x GIoU box loss (weighted 2 - w h) + confidence (ignoring the cells whose box overlaps a
    ground truth by IoU >= thr) + class sigmoid cross entropies, summed, over the batch size."""
    obj, probs = y_true[..., 4:5], y_true[..., 5:]
    boxes = np.concatenate([xy, wh], -1)
    pb, gb = _xyxy(boxes)[..., None, :], _xyxy(gt_box)[:, None, None, None]
    inter = np.prod(np.maximum(np.minimum(pb[..., 2:], gb[..., 2:]) - np.maximum(pb[..., :2], gb[..., :2]), 0), -1)
    iou = inter / (np.prod(boxes[..., None, 2:4], -1) + np.prod(gt_box[:, None, None, None, :, 2:4], -1) - inter)
    ignore = (iou.max(-1) < thr)[..., None]
    conf = _bce(pred[..., 4:5], obj)
    conf = (obj * conf + (1 - obj) * conf * ignore).sum()
    cls = (obj * _bce(pred[..., 5:], probs)).sum()
    box = (obj * (2 - y_true[..., 2:3] * y_true[..., 3:4]) * (1 - _giou(_xyxy(boxes), _xyxy(y_true[..., :4])))).sum()
    return (4 * box + conf + cls) / pred.shape[0]


# ---------------------------------------------------------------- data


def _labels(input_shape, boxes_per_image):
    """The zoo's y_true / padded ground truths (transforms.py) for (x1, y1, x2, y2, class) boxes in pixels."""
    rows = [
        _preprocess_true_boxes(b, config.anchor_scales, input_shape, NC, config.max_box, config.label_smooth)
        for b in boxes_per_image
    ]
    return [np.stack(col).astype(np.float32) for col in zip(*rows)]


def _randomize_bn(net, rng):
    for name, p in net.parameters_and_names():
        value = {
            "gamma": lambda s: rng.uniform(0.6, 1.4, s),
            "beta": lambda s: rng.normal(0, 0.2, s),
            "moving_mean": lambda s: rng.normal(0, 0.2, s),
            "moving_variance": lambda s: rng.uniform(0.5, 2.0, s),
        }.get(name.rsplit(".", 1)[-1])
        if value is not None and ".bn." in name:
            p.set_data(ms.Tensor(value(p.shape).astype(np.float32)))


def _close(actual, expected, rtol=2e-3):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("train_bn", [False, True])
def test_forward_matches_numpy_yolov5(train_bn):
    """Non-square 64 x 96 images: the outputs (train: prediction, box_xy, box_wh; eval: boxes, confidence and
    class probabilities, after load_param_into_net as train.py's load_parameters) of each scale."""
    rng = np.random.default_rng(0)
    net = YOLOV5(is_training=True, version=0)
    default_recurisive_init(net)
    _randomize_bn(net, rng)
    val = YOLOV5(is_training=False, version=0)
    ms.load_param_into_net(val, dict(net.parameters_and_names()))
    net.set_train(train_bn)
    val.set_train(train_bn)
    img = rng.uniform(0, 255, (2, 64, 96, 3)).astype(np.float32)
    input_shape = ms.Tensor((64, 96), ms.float32)
    ref = NumpyYolo(net.parameters_and_names(), train_bn)
    outs = net(ms.Tensor(img), input_shape)
    evals = val(ms.Tensor(img), input_shape)

    feats = ref.features(img.astype(np.float64))
    for name in ("feature_map.backbone.focus.conv", "feature_map.CSP8.conv3"):
        moving = dict(net.parameters_and_names())[name + ".bn.moving_mean"].asnumpy()
        old = ref.p[name + ".bn.moving_mean"]
        # the zoo's BatchNorm2d(momentum=0.97): moving = 0.97 moving + 0.03 batch mean, in training only
        _close(moving, 0.97 * old + 0.03 * ref.batch_means[name] if train_bn else old, 1e-4)
    for out, ev, (i, scale), grid in zip(outs, evals, [(3, "l"), (2, "m"), (1, "s")], [(2, 3), (4, 6), (8, 12)]):
        pred, xy, wh, conf, probs = _decode(ref.head(i, feats[i - 1]), scale, (64, 96))
        assert out[0].shape == (2, *grid, 3, 5 + NC)
        for a, e in zip(out, (pred, xy, wh)):
            _close(a.asnumpy(), e)
        _close(ev.asnumpy(), np.concatenate([xy, wh, conf, probs], -1))


def test_giou_confidence_and_class_losses_match_numpy():
    rng = np.random.default_rng(1)
    # overlapping, nested, touching and disjoint pairs (x1, y1, x2, y2)
    p = np.array([[0.1, 0.1, 0.5, 0.5], [0.2, 0.2, 0.4, 0.4], [0.0, 0.0, 0.3, 0.3], [0.0, 0.0, 0.2, 0.2]])
    g = np.array([[0.3, 0.2, 0.7, 0.6], [0.1, 0.1, 0.6, 0.6], [0.3, 0.0, 0.6, 0.3], [0.6, 0.5, 0.9, 0.9]])
    xy = rng.uniform(0.2, 0.8, (16, 2))
    wh = rng.uniform(0.05, 0.5, (32, 2))
    p = np.concatenate([p, _xyxy(np.concatenate([xy, wh[:16]], 1))]).astype(np.float32)
    g = np.concatenate([g, _xyxy(np.concatenate([xy[::-1], wh[16:]], 1))]).astype(np.float32)
    giou = GIou()(ms.Tensor(p), ms.Tensor(g)).asnumpy()
    _close(giou, _giou(p.astype(np.float64), g.astype(np.float64)), 1e-5)
    assert giou[1, 0] == pytest.approx(0.04 / 0.25 - 0.0, abs=1e-5)  # nested: IoU, no extra enclosing area

    obj = (rng.uniform(size=(2, 4, 4, 3, 1)) < 0.3).astype(np.float32)
    logits = rng.normal(0, 2, (2, 4, 4, 3, 1)).astype(np.float32)
    ignore = (rng.uniform(size=(2, 4, 4, 3, 1)) < 0.5).astype(np.float32)
    conf = ConfidenceLoss()(ms.Tensor(obj), ms.Tensor(logits), ms.Tensor(ignore))
    ce = _bce(logits.astype(np.float64), obj)
    _close(conf.asnumpy(), (obj * ce + (1 - obj) * ce * ignore).sum(), 1e-5)

    cls_logits = rng.normal(0, 2, (2, 4, 4, 3, NC)).astype(np.float32)
    probs = rng.uniform(size=(2, 4, 4, 3, NC)).astype(np.float32)
    cls = ClassLoss()(ms.Tensor(obj), ms.Tensor(cls_logits), ms.Tensor(probs))
    _close(cls.asnumpy(), (obj * _bce(cls_logits.astype(np.float64), probs)).sum(), 1e-5)


def test_yolo_loss_block_matches_numpy():
    """The medium scale (4 x 4 cells at 64 x 64) with two ground truths per image; some predicted boxes sit on a
    ground truth (IoU above the 0.7 ignore threshold), the rest are random."""
    rng = np.random.default_rng(2)
    boxes = [np.array([[4, 6, 40, 30, 1], [30, 20, 62, 60, 3]]), np.array([[10, 10, 50, 44, 0], [2, 40, 22, 62, 2]])]
    _, y_true, _, _, gt_box, _ = _labels([64, 64], boxes)
    assert y_true[..., 4].sum() >= 2
    pred = rng.normal(0, 1, (2, 4, 4, 3, 5 + NC)).astype(np.float32)
    xy = rng.uniform(0, 1, (2, 4, 4, 3, 2))
    wh = rng.uniform(0.05, 0.8, (2, 4, 4, 3, 2))
    on_gt = rng.uniform(size=(2, 4, 4, 3)) < 0.4
    for n in range(2):
        real = gt_box[n][gt_box[n, :, 2] > 0]
        k = rng.integers(0, len(real), (4, 4, 3))
        xy[n][on_gt[n]] = real[k[on_gt[n]], :2] + 0.01
        wh[n][on_gt[n]] = real[k[on_gt[n]], 2:] * 1.02
    xy, wh = xy.astype(np.float32), wh.astype(np.float32)
    block = YoloLossBlock("m", config)
    loss = block(*(ms.Tensor(a) for a in (pred, xy, wh, y_true, gt_box)), ms.Tensor((64, 64), ms.float32))
    expected = _loss_block(*(a.astype(np.float64) for a in (pred, xy, wh, y_true, gt_box)))
    _close(loss.asnumpy(), expected, 1e-4)


def test_loss_gradients_match_numpy_differences():
    """YoloWithLossCell's gradients (96 x 96 images, so that the big-object scale has ground truths; BatchNorm
    on batch statistics, as in training) of the big- and small-object heads' biases against central differences
    of the NumPy YOLOv5's loss."""
    boxes = [np.array([[2, 4, 94, 92, 1], [40, 40, 52, 56, 2]]), np.array([[6, 2, 90, 80, 0], [20, 8, 34, 30, 3]])]
    y0, y1, y2, g0, g1, g2 = _labels([96, 96], boxes)
    assert y0[..., 4].sum() > 0 and y2[..., 4].sum() > 0
    rng = np.random.default_rng(3)
    img = rng.uniform(0, 255, (2, 96, 96, 3)).astype(np.float32)
    yolo = YOLOV5(is_training=True, version=0)
    default_recurisive_init(yolo)
    net = YoloWithLossCell(yolo)
    net.set_train()
    weights = ms.ParameterTuple([yolo.feature_map.back_block3.conv.bias, yolo.feature_map.back_block1.conv.bias])
    inputs = [ms.Tensor(a) for a in (img, y0, y1, y2, g0, g1, g2)] + [ms.Tensor((96, 96), ms.float32)]
    grads = ops.GradOperation(get_by_list=True)(net, weights)(*inputs)

    ref = NumpyYolo(yolo.parameters_and_names(), train_bn=True)
    feats = ref.features(img.astype(np.float64))
    cases = [(3, "l", y0, g0, 1.0), (1, "s", y2, g2, 0.2)]
    for grad, (i, scale, y_true, gt_box, weight) in zip(grads, cases):
        bias = ref.p[f"feature_map.back_block{i}.conv.bias"]

        def loss(b, i=i, scale=scale, y_true=y_true, gt_box=gt_box, weight=weight):
            pred, xy, wh, _, _ = _decode(ref.head(i, feats[i - 1], b), scale, (96, 96))
            return weight * _loss_block(pred, xy, wh, y_true.astype(np.float64), gt_box.astype(np.float64))

        eps = 1e-6
        numeric = np.array([(loss(bias + eps * e) - loss(bias - eps * e)) / (2 * eps) for e in np.eye(len(bias))])
        _close(grad.asnumpy(), numeric, 2e-3)


def test_train_py_setup_trains_in_graph_mode():
    """train.py's steps on two 80 x 80 images of coloured squares, augmented to 64 x 64 by the zoo's
    preprocess_fn: the first update is Momentum's over (sens / loss_scale) x the gradient plus the weight decay
    of get_param_groups' decay group, at get_lr's first rate; the loss stays finite and falls."""
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU")
    imgs, annos = [], []
    for i in range(2):
        img = np.full((80, 80, 3), 30, np.uint8)
        x0, y0 = 8 + 10 * i, 12 - 4 * i
        img[y0 : y0 + 44, x0 : x0 + 40] = (220, 40, 40) if i == 0 else (40, 220, 40)
        box = np.array([[x0, y0, x0 + 40, y0 + 44, i]], np.float64)
        image, anno = preprocess_fn(img, box, config, [64, 64], 1)
        imgs.append(image)
        annos.append(anno)
    labels = batch_preprocess_true_box_single(annos, config, [64, 64])
    assert sum(y[..., 4].sum() for y in labels[:3]) > 0

    network = YOLOV5(is_training=True, version=0)
    default_recurisive_init(network)
    network = YoloWithLossCell(network)
    steps_per_epoch = 2
    lr = get_lr(config, steps_per_epoch)
    np.testing.assert_allclose(lr, [0.005, 0.01, 0.005, 0.005], rtol=1e-6)  # warm-up epoch, then cosine
    opt = nn.Momentum(
        params=get_param_groups(network),
        momentum=config.momentum,
        learning_rate=ms.Tensor(lr),
        weight_decay=config.weight_decay,
        loss_scale=config.loss_scale,
    )
    train_net = nn.TrainOneStepCell(network, opt, config.loss_scale // 2)
    train_net.set_train()

    images = ms.Tensor(np.stack(imgs))  # uint8, as create_yolo_dataset gives them
    input_shape = ms.Tensor(images.shape[1:3], ms.float32)
    data = [images] + [ms.Tensor(a.astype(np.float32)) for a in labels] + [input_shape]

    names = [
        "yolo_network.feature_map.backbone.focus.conv.conv.weight",
        "yolo_network.feature_map.CSP8.conv3.bn.gamma",
        "yolo_network.feature_map.back_block2.conv.bias",
        "yolo_network.feature_map.back_block2.conv.weight",
    ]
    params = dict(network.parameters_and_names())
    watched = ms.ParameterTuple([params[n] for n in names])
    before = [p.asnumpy().copy() for p in watched]
    grads = [g.asnumpy() for g in ops.GradOperation(get_by_list=True)(network, watched)(*data)]

    meter = AverageMeter("loss")
    losses = []
    for step in range(4):
        loss = train_net(*data)
        meter.update(loss.asnumpy())
        losses.append(float(loss.asnumpy()))
        if step == 0:
            for name, w0, g, p in zip(names, before, grads, watched):
                decay = config.weight_decay if name.endswith(".weight") else 0.0
                step_ = -lr[0] * (g * (config.loss_scale // 2) / config.loss_scale + decay * w0)
                _close(p.asnumpy() - w0, step_, 5e-3)
                # the weight decay part alone (small beside the gradient's): present on the decay group only
                rest = (p.asnumpy().astype(np.float64) - w0) + lr[0] * g.astype(np.float64) / 2
                tol = 0.2 * lr[0] * config.weight_decay * max(np.abs(w0).max(), 0.1)
                assert np.abs(rest + lr[0] * decay * w0).max() <= tol, name
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < 0.8 * losses[0], losses
    assert meter.count == 4 and np.isclose(meter.avg, np.mean(losses), rtol=1e-5)


def _coco_folder(root, count=4):
    """A COCO-style folder: JPEG images of a red rectangle on grey, the instances JSON of its boxes."""
    rng = np.random.default_rng(4)
    (root / "img").mkdir()
    images, anns = [], []
    for i in range(count):
        img = np.full((120, 160, 3), 30, np.uint8)
        x0, y0, w, h = int(rng.integers(5, 80)), int(rng.integers(5, 50)), int(rng.integers(40, 70)), 50
        img[y0 : y0 + h, x0 : x0 + w] = (220, 40, 40)
        Image.fromarray(img).save(root / "img" / f"{i}.jpg", quality=95)
        images.append({"id": 10 + i, "file_name": f"{i}.jpg", "width": 160, "height": 120})
        anns.append(
            {
                "id": i + 1,
                "image_id": 10 + i,
                "category_id": config.coco_ids[i % NC],
                "bbox": [x0, y0, w, h],
                "iscrowd": 0,
                "area": w * h,
            }
        )
    cats = [{"id": c, "name": n} for c, n in zip(config.coco_ids, config.labels)]
    (root / "ann.json").write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
    return str(root / "img"), str(root / "ann.json")


def test_create_yolo_dataset_pipelines(tmp_path):
    """src/yolo_dataset.py's pipelines on a COCO-style folder. Training: GeneratorDataset over the zoo's
    DistributedSampler (worker processes), MultiScaleTrans (Decode of the file's int8 bytes, or the mosaic of four
    images; the zoo's crop / resize / flip / HSV jitter to 640 x 640), PreprocessTrueBox, project, batch: each
    batch's y_true and padded ground truths are the zoo's for its annotation column, and each box lies on red
    pixels. Evaluation: reshape_fn to config.test_img_shape, whose batch YOLOV5 (is_training=False) decodes as the
    NumPy YOLOv5 does (EvalWrapper.inference's step)."""
    image_dir, ann_file = _coco_folder(tmp_path)
    train = create_yolo_dataset(image_dir, ann_file, batch_size=2, device_num=1, rank=0, config=config)
    assert train.get_dataset_size() == 2
    batches = list(train.create_tuple_iterator(do_copy=False))
    assert len(batches) == 2
    boxes = 0  # the real boxes checked (the zoo's random crops may cut one down below 24 pixels: not all of them)
    for data in batches:
        image, anno, *labels = (d.asnumpy() for d in data)
        assert image.shape == (2, 640, 640, 3) and image.dtype == np.uint8 and anno.shape == (2, config.max_box, 5)
        assert [y.shape[1:3] for y in labels[:3]] == [(20, 20), (40, 40), (80, 80)]
        for n in range(2):
            expected = _preprocess_true_boxes(anno[n], config.anchor_scales, [640, 640], NC, config.max_box, 0)
            for got, want in zip(labels, expected):
                np.testing.assert_array_equal(got[n], want)
            real = anno[n][(anno[n, :, 2] - anno[n, :, 0] > 24) & (anno[n, :, 3] - anno[n, :, 1] > 24)]
            boxes += len(real)
            for x1, y1, x2, y2, _ in real:
                dx, dy = (x2 - x1) / 4, (y2 - y1) / 4
                inner = image[n, int(y1 + dy) : int(y2 - dy), int(x1 + dx) : int(x2 - dx)].astype(np.float64)
                assert inner[..., 0].mean() - inner[..., 1].mean() > 40
    assert boxes > 0

    val = create_yolo_dataset(
        image_dir, ann_file, batch_size=2, device_num=1, rank=0, config=config, is_training=False, shuffle=False
    )
    rows = list(val.create_dict_iterator(output_numpy=True, num_epochs=1))
    assert [r["img_id"].tolist() for r in rows] == [[10, 11], [12, 13]]
    np.testing.assert_array_equal(rows[0]["image_shape"], [[160, 120], [160, 120]])
    image = rows[0]["image"]
    assert image.shape == (2, *config.test_img_shape, 3) and image.dtype == np.uint8
    network = YOLOV5(is_training=False, version=0)
    default_recurisive_init(network)
    network.set_train(False)
    outs = network(ms.Tensor(image), ms.Tensor(tuple(config.test_img_shape), ms.float32))
    ref = NumpyYolo(network.parameters_and_names(), train_bn=False)
    feats = ref.features(image.astype(np.float64))
    for out, (i, scale) in zip(outs, [(3, "l"), (2, "m"), (1, "s")]):
        _, xy, wh, conf, probs = _decode(ref.head(i, feats[i - 1]), scale, config.test_img_shape)
        _close(out.asnumpy(), np.concatenate([xy, wh, conf, probs], -1))
