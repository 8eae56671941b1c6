"""PointNet as MindSpore's model zoo runs it (tests/zoo/pointnet: official/cv/PointNet with ``mindspore`` replaced
by ``opforge``) on a ShapeNet-style part-segmentation folder written here: ``PointNetDenseCls`` (the input T-Net
``STN3d``: 1 x 1 ``Conv1d`` layers, ``BatchNorm2d`` over an ``ExpandDims``-ed axis, the ``ArgMaxWithValue`` max
pool, ``BatchNorm1d`` Dense layers and the identity added by ``Tile``; the points turned by ``BatchMatMul``; the
global feature tiled and ``Concat``-ed with the point features; the dense head's ``LogSoftmax``) in training mode
and the feature T-Net ``STNkd`` (its max pool through NumPy inside ``construct``) against NumPy; ``PointnetLoss``'s
NLL over the one-based part labels; then train.py run as the script (``--device_target CPU``: GRAPH_MODE,
``ShapeNetDataset`` through ``GeneratorDataset`` with shards, ``piecewise_constant_lr``, ``Adam`` with a loss scale
of 1024 under ``TrainOneStepCell`` with ``sens=1024``, its own loop with the validation batch and
``save_checkpoint``), a further step of its ``TrainOneStepCell`` against NumPy's Adam, and eval.py run as the script
on the checkpoint (``load_checkpoint``, ``get_batch_size``, the per-shape part IoUs) with its ``test_net`` checked
against NumPy's IoUs. (The program's own limits, in MindSpore too: ``PointNetCls`` feeds the 1088-channel point
features to a 1024-input Dense layer, and ``feature_transform=True`` multiplies the 64-channel features by the
3 x 3 transform.)"""

import json
import os
import re
import runpy
import sys

import numpy as np
import pytest
from zoo.pointnet.src.loss import PointnetLoss
from zoo.pointnet.src.network import PointNetDenseCls, STNkd

import opforge.dataset as ds
from opforge import ParameterTuple, Tensor, context, ops


@pytest.fixture(autouse=True)
def _state():
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def _np(p):
    return p.asnumpy().astype(np.float64)


def _conv(x, conv):  # a 1 x 1 Conv1d: [B, C, N], its weight [out, in, 1, 1]
    return np.einsum("oc,bcn->bon", _np(conv.weight)[:, :, 0, 0], x) + _np(conv.bias)[None, :, None]


def _dense(x, dense):
    return x @ _np(dense.weight).T + _np(dense.bias)


def _bn(x, bn, training=True):
    """BatchNorm over every axis but 1: the batch's mean and biased variance in training, else the moving ones."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axes), x.var(axes)
    else:
        mean, var = _np(bn.moving_mean), _np(bn.moving_variance)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5)
    return y * _np(bn.gamma).reshape(shape) + _np(bn.beta).reshape(shape)


def _relu(x):
    return np.maximum(x, 0)


def _tnet(net, x, k, training=True):
    """STN3d / STNkd: three point-wise layers, the max over the points, three Dense layers, plus the identity."""
    for conv, bn in ((net.conv1, net.bn1), (net.conv2, net.bn2), (net.conv3, net.bn3)):
        x = _relu(_bn(_conv(x, conv), bn, training))
    x = x.max(2)
    x = _relu(_bn(_dense(x, net.fc1), net.bn4, training))
    x = _relu(_bn(_dense(x, net.fc2), net.bn5, training))
    return (_dense(x, net.fc3) + np.eye(k).ravel()).reshape(-1, k, k)


def _dense_cls_numpy(net, x):
    feat = net.feat
    trans = _tnet(feat.stn, x, 3)
    x = np.einsum("bcn,bcd->bdn", x, trans)  # (x^T trans)^T
    points = _relu(_bn(_conv(x, feat.conv1), feat.bn1))
    h = _relu(_bn(_conv(points, feat.conv2), feat.bn2))
    h = _bn(_conv(h, feat.conv3), feat.bn3).max(2)
    x = np.concatenate([np.repeat(h[:, :, None], x.shape[2], 2), points], 1)
    for conv, bn in ((net.conv1, net.bn1), (net.conv2, net.bn2), (net.conv3, net.bn3)):
        x = _relu(_bn(_conv(x, conv), bn))
    x = _conv(x, net.conv4).transpose(0, 2, 1)
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True)), trans


def _randomize(net, rng):
    for name, p in net.parameters_and_names():
        if name.endswith("gamma") or name.endswith("moving_variance"):
            value = rng.uniform(0.5, 1.5, p.shape)
        elif name.endswith("weight"):
            value = rng.normal(0, np.sqrt(1.0 / np.prod(p.shape[1:])), p.shape)
        else:
            value = rng.normal(0, 0.2, p.shape)
        p.set_data(Tensor(value.astype(np.float32)))


def test_dense_segmentation_network_matches_numpy(rng):
    net = PointNetDenseCls(k=4)
    _randomize(net, rng)
    net.set_train(True)
    x = rng.normal(0, 1, (3, 3, 32)).astype(np.float32)
    want, want_trans = _dense_cls_numpy(net, x.astype(np.float64))
    np.testing.assert_allclose(net.feat.stn(Tensor(x)).asnumpy(), want_trans, rtol=1e-4, atol=1e-4)
    got = net(Tensor(x)).asnumpy()
    assert got.shape == (3, 32, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # PointNetfeat's outputs: [global feature tiled; point features], the input transform, no feature transform
    feats, trans, trans_feat = net.feat(Tensor(x))
    assert feats.shape == (3, 1088, 32) and trans.shape == (3, 3, 3) and trans_feat is None


def test_feature_tnet_matches_numpy(rng):
    stn = STNkd(k=64)
    _randomize(stn, rng)
    x = rng.normal(0, 1, (3, 64, 8)).astype(np.float32)
    for training in (False, True):
        stn.set_train(training)
        got = stn(Tensor(x)).asnumpy()
        assert got.shape == (3, 64, 64)
        np.testing.assert_allclose(got, _tnet(stn, x.astype(np.float64), 64, training), rtol=1e-4, atol=1e-4)


def test_pointnet_loss_is_the_nll_of_the_one_based_parts(rng):
    logits = rng.normal(0, 1, (2, 5, 4))
    log_probs = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    target = rng.integers(1, 5, (2, 5)).astype(np.int64)  # ShapeNet's part labels start at 1
    got = PointnetLoss(feature_transform=False, num_class=4)(Tensor(log_probs), Tensor(target)).asnumpy()
    want = -np.take_along_axis(log_probs.reshape(-1, 4), target.reshape(-1, 1) - 1, 1).mean()
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def _write_shapenet(root, counts=(4, 4), points=300, seed=0):
    """shapenetcore_partanno_segmentation_benchmark_v0's layout: synsetoffset2category.txt, a folder per
    category with points/<id>.pts and points_label/<id>.seg, train_test_split/shuffled_<split>_file_list.json.
    Chairs whose four parts (1..4) are the quadrants of the x-y plane."""
    rng = np.random.default_rng(seed)
    os.makedirs(root)
    with open(os.path.join(root, "synsetoffset2category.txt"), "w") as f:
        f.write("Airplane\t02691156\nChair\t03001627\n")
    for d in ("points", "points_label"):
        os.makedirs(os.path.join(root, "03001627", d))
    os.makedirs(os.path.join(root, "train_test_split"))
    for split, count in zip(("train", "test"), counts):
        names = []
        for i in range(count):
            pts = rng.normal(0, 1, (points, 3))
            seg = 1 + (pts[:, 0] > 0) + 2 * (pts[:, 1] > 0)
            np.savetxt(os.path.join(root, "03001627", "points", f"{split}{i}.pts"), pts, fmt="%.6f")
            np.savetxt(os.path.join(root, "03001627", "points_label", f"{split}{i}.seg"), seg, fmt="%d")
            names.append(f"shape_data/03001627/{split}{i}")
        with open(os.path.join(root, "train_test_split", f"shuffled_{split}_file_list.json"), "w") as f:
            json.dump(names, f)
    return str(root)


def test_train_py_then_eval_py(tmp_path, monkeypatch, capsys):
    root = _write_shapenet(tmp_path / "shapenet")
    out_dir = str(tmp_path / "ckpts")
    monkeypatch.setattr(sys, "argv", ["train.py", "--batchSize", "2", "--nepoch", "2", "--device_target", "CPU",
                                      "--data_url", root, "--train_url", out_dir])  # fmt: skip
    script = runpy.run_module("zoo.pointnet.train", run_name="__main__")
    out = capsys.readouterr().out
    assert "dataset output shape [[2, 3, 2500], [2, 2500]]" in out
    losses = [float(v) for v in re.findall(r"Loss : ([0-9.]+)", out)]
    assert len(losses) == 4 and np.all(np.isfinite(losses)), out  # 2 epochs of 2 batches
    assert np.all(np.diff(losses) < 0), losses  # Adam at 5e-4 on the quadrant parts
    tests = re.findall(r"\[(\d): 0/1\] .*test.*  loss: ([0-9.]+) accuracy: ([0-9.]+)", out)
    assert [int(e) for e, _, _ in tests] == [1, 2]
    assert os.path.exists(os.path.join(out_dir, "pointnet_network_epoch_1.ckpt"))
    assert script["num_classes"] == 4  # Chair's, from src/misc/num_seg_classes.txt

    # a further step of the script's TrainOneStepCell: the gradients scaled by sens=1024, Adam's loss_scale=1024
    # dividing them back, at piecewise_constant_lr's first rate; against NumPy's Adam (epsilon 1e-8). The script's
    # validation left the network in evaluation mode (set_train(False)); in GRAPH_MODE the step replays what it
    # compiled in training mode (MindSpore's compiled graph too): batch statistics
    optim, net_with_loss, classifier = script["optim"], script["net_with_loss"], script["classifier"]
    assert not classifier.training
    params = list(optim.parameters)
    points, label = next(script["dataset"].create_tuple_iterator())
    classifier.set_train(True)
    grads = ops.GradOperation(get_by_list=True)(net_with_loss, ParameterTuple(params))(points, label)
    classifier.set_train(False)
    b1p = float(optim.beta1_power.asnumpy()) * 0.9
    b2p = float(optim.beta2_power.asnumpy()) * 0.999
    assert np.isclose(b1p, 0.9**5)  # four steps taken
    before = [(_np(p), _np(m), _np(v)) for p, m, v in zip(params, optim.moment1, optim.moment2)]
    script["net_train"](points, label)
    lr = 0.0005 * np.sqrt(1 - b2p) / (1 - b1p)
    for p, (value, m, v), g in zip(params, before, grads):
        g = g.asnumpy().astype(np.float64)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        want = value - lr * m / (np.sqrt(v) + 1e-8)
        np.testing.assert_allclose(_np(p) - value, want - value, rtol=1e-3, atol=4e-3 * lr, err_msg=p.name)

    # eval.py as the script on the checkpoint
    checkpoint = os.path.join(out_dir, "pointnet_network_epoch_1.ckpt")
    monkeypatch.setattr(sys, "argv", ["eval.py", "--batchSize", "2", "--device_target", "CPU", "--data_path", root,
                                      "--model_path", checkpoint, "--ckpt_dir", str(tmp_path / "eval")])  # fmt: skip
    evaluation = runpy.run_module("zoo.pointnet.eval", run_name="__main__")
    out = capsys.readouterr().out
    assert "successfully load model" in out and "batchSize 2" in out and "num_batch 2" in out
    ious = [float(v) for v in re.findall(r"^([0-9.]+)$", out, re.M)]
    assert len(ious) == 4  # one line per test shape
    miou = float(re.search(r"mIOU for class Chair: ([0-9.]+)", out).group(1))
    np.testing.assert_allclose(miou, np.mean(ious), rtol=1e-9)

    # its test_net on fixed points: the part IoUs (a part absent from both counts 1) from the network's argmax
    test_net = evaluation["test_net"]
    rng = np.random.default_rng(5)
    pts = rng.normal(0, 1, (2, 3, 2500)).astype(np.float32)
    labels = (1 + (pts[:, 0] > 0) + 2 * (pts[:, 1] > 0)).astype(np.int64)
    labels[1][labels[1] == 4] = 3  # the second shape without part 4
    fixed = ds.NumpySlicesDataset({"point": pts, "label": labels}, shuffle=False).batch(2)
    classifier = evaluation["classifier"]
    test_net(fixed, classifier, root, "Chair", checkpoint)
    out = capsys.readouterr().out
    pred = classifier(Tensor(pts)).asnumpy().argmax(2)
    want = []
    for p, t in zip(pred, labels - 1):
        inter = [np.sum((p == c) & (t == c)) for c in range(4)]
        union = [np.sum((p == c) | (t == c)) for c in range(4)]
        want.append(np.mean([i / u if u else 1 for i, u in zip(inter, union)]))
    np.testing.assert_allclose([float(v) for v in re.findall(r"^([0-9.]+)$", out, re.M)], want, rtol=1e-9)
    assert float(re.search(r"mIOU for class Chair: ([0-9.]+)", out).group(1)) == pytest.approx(np.mean(want))
