"""ArcFace as MindSpore's model zoo runs it (tests/zoo/arcface: official/cv/Arcface with ``mindspore`` replaced by
``opforge``): the IResNet (``IBasicBlock``'s BatchNorm / 3 x 3 convolution / PReLU / strided convolution with its
1 x 1 downsample, the flattened 7 x 7 x 512 map through ``Dense`` and the feature ``BatchNorm1d`` whose gamma is
frozen) against a NumPy IResNet; ``PartialFC`` (``L2Normalize`` of the features and of the class centres, their
``MatMul`` in float16, the ArcFace margin ``cos(acos(cos) + m)`` on the label's column through ``OneHot``, scaled by
``s``, and ``SoftMaxCE``) and its gradients against NumPy; train.py's ``lr_generator``; then train.py's set-up as its
``__main__`` writes it (GRAPH_MODE, ``MyNetWithLoss`` with the backbone in float16, ``SGD`` with momentum and weight
decay on the scaled step learning rates, ``Model`` in dataset sink mode with ``ModelCheckpoint``, ``TimeMonitor`` and
``LossMonitor``) on ``create_dataset``'s ImageFolder pipeline: a step against NumPy's SGD, and the loss falling.
(train.py's ``__main__`` accepts only the GPU and Ascend targets, and builds ``iresnet100``; the tests build the same
``IResNet`` with one block a stage.)"""

import os
import re
import runpy
import sys

import numpy as np
import pytest
from PIL import Image
from zoo.arcface.src.dataset import create_dataset
from zoo.arcface.src.iresnet import IBasicBlock, IResNet, iresnet18
from zoo.arcface.src.loss import PartialFC

import opforge
import opforge.dataset as ds
from opforge import ParameterTuple, Tensor, context, nn, ops
from opforge.train.model import Model


@pytest.fixture(autouse=True)
def _state():
    opforge.set_seed(1024)  # as train.py at import
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _script(monkeypatch, *argv):
    """train.py's definitions, its argparse run at import on ``argv`` (one device, a few classes)."""
    monkeypatch.setattr(sys, "argv", ["train.py", "--device_num", "1", "--num_classes", "4", *argv])
    return runpy.run_module("zoo.arcface.train")


def _small_iresnet():
    return IResNet(IBasicBlock, [1, 1, 1, 1])  # iresnet18's [2, 2, 2, 2] with one block a stage


# ---------------------------------------------------------------------------------------------
# A NumPy IResNet


def _np(p):
    return p.asnumpy().astype(np.float64)


def _conv(x, conv, stride, pad):
    w = _np(conv.weight)
    k = w.shape[-1]
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h, wd = (x.shape[2] - k) // stride + 1, (x.shape[3] - k) // stride + 1
    out = 0
    for i in range(k):
        for j in range(k):
            patch = x[:, :, i : i + stride * h : stride, j : j + stride * wd : stride]
            out = out + np.tensordot(w[:, :, i, j], patch, axes=([1], [1])).transpose(1, 0, 2, 3)
    return out


def _bn(x, bn):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale = _np(bn.gamma) / np.sqrt(_np(bn.moving_variance) + 1e-5)
    return (x - _np(bn.moving_mean).reshape(shape)) * scale.reshape(shape) + _np(bn.beta).reshape(shape)


def _prelu(x, prelu):
    return np.where(x > 0, x, _np(prelu.w)[None, :, None, None] * x)


def _iresnet_numpy(net, x):
    x = _prelu(_bn(_conv(x, net.conv1, 1, 1), net.bn1), net.prelu)
    for layer in (net.layer1, net.layer2, net.layer3, net.layer4):
        for block in layer:
            out = _conv(_bn(x, block.bn1), block.conv1, 1, 1)
            out = _prelu(_bn(out, block.bn2), block.prelu)
            out = _bn(_conv(out, block.conv2, block.stride, 1), block.bn3)
            if block.downsample is not None:
                x = _bn(_conv(x, block.downsample[0], block.stride, 0), block.downsample[1])
            x = out + x
    x = _bn(x, net.bn2).reshape(x.shape[0], -1)
    x = x @ _np(net.fc.weight).T + _np(net.fc.bias)
    return _bn(x, net.features)


def _randomize(net, rng):
    for name, p in net.parameters_and_names():
        if name.endswith(("gamma", "moving_variance")):
            value = rng.uniform(0.5, 1.5, p.shape)
        elif p.ndim == 4 or name.endswith("fc.weight"):
            value = rng.normal(0, np.sqrt(1.0 / np.prod(p.shape[1:])), p.shape)
        else:
            value = rng.normal(0, 0.2, p.shape)
        p.set_data(Tensor(value.astype(np.float32)))


def test_iresnet_matches_a_numpy_iresnet(rng):
    net = _small_iresnet()
    _randomize(net, rng)
    net.set_train(False)
    x = rng.normal(0, 1, (2, 3, 112, 112)).astype(np.float32)
    got = net(Tensor(x)).asnumpy()
    assert got.shape == (2, 512)
    np.testing.assert_allclose(got, _iresnet_numpy(net, x.astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_iresnet_parameters_and_the_frozen_feature_gamma():
    net = iresnet18()
    names = [p.name for p in net.trainable_params()]
    assert "features.gamma" not in names and "features.beta" in names
    assert sum(not p.requires_grad for p in net.get_parameters()) == 1 + 2 * sum(
        1 for n, _ in net.parameters_and_names() if n.endswith("moving_mean")
    )

    def block(cin, c):  # bn1, conv1, bn2, prelu, conv2, bn3 (gammas and betas)
        return 2 * cin + 9 * cin * c + 2 * c + c + 9 * c * c + 2 * c

    count, cin = 27 * 64 + 2 * 64 + 64, 64  # conv1, bn1, prelu
    for c in (64, 128, 256, 512):
        count += block(cin, c) + cin * c + 2 * c + block(c, c)  # a strided block with its downsample, then one
        cin = c
    count += 2 * 512 + 512 * 49 * 512 + 512 + 512  # bn2, fc, the features' beta
    assert sum(p.size for p in net.trainable_params()) == count


# ---------------------------------------------------------------------------------------------
# PartialFC: the ArcFace margin and the softmax cross-entropy


def _l2n(a):
    return a / np.sqrt(np.maximum((a * a).sum(1, keepdims=True), 1e-4))  # L2Normalize's epsilon 1e-4


def _f16(a):
    return a.astype(np.float16).astype(np.float64)


def _partial_fc_numpy(f, w, y, s=64.0, m=0.5):
    """The loss and its gradients in NumPy: cos = <f/|f|, w/|w|> (a float16 product), logits s cos(acos(cos) + m)
    on the label's column and s cos elsewhere, the mean softmax cross-entropy."""
    fn, wn = _l2n(f), _l2n(w)
    cos = _f16(_f16(fn) @ _f16(wn).T)
    hot = np.eye(w.shape[0])[y]
    theta = np.arccos(cos)
    z = s * np.cos(theta + m * hot)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss = -np.mean(np.log((p * hot).sum(1) + 1e-30))
    g_z = (p - hot) / len(y)
    g_cos = g_z * s * np.where(hot > 0, np.sin(theta + m) / np.sin(theta), 1.0)
    g_fn, g_wn = g_cos @ wn, g_cos.T @ fn

    def back(g, a, an):  # through a / |a|
        return (g - an * (an * g).sum(1, keepdims=True)) / np.linalg.norm(a, axis=1, keepdims=True)

    return loss, back(g_fn, f, fn), back(g_wn, w, wn)


def test_partial_fc_arcface_loss_and_gradients_match_numpy(rng):
    pfc = PartialFC(num_classes=6, world_size=1)
    assert pfc.weight.name == "mp_weight" and pfc.weight.shape == (6, 512)
    w = rng.normal(0, 0.01, (6, 512)).astype(np.float32)
    pfc.weight.set_data(Tensor(w))
    f = rng.normal(0, 1, (4, 512)).astype(np.float32)
    y = np.array([0, 3, 5, 3], np.int32)
    want, want_df, want_dw = _partial_fc_numpy(f.astype(np.float64), w.astype(np.float64), y)
    np.testing.assert_allclose(pfc(Tensor(f), Tensor(y)).asnumpy(), want, rtol=1e-3)
    grad = ops.GradOperation(get_all=True, get_by_list=True)(pfc, ParameterTuple([pfc.weight]))
    (df, _), (dw,) = grad(Tensor(f), Tensor(y))
    for got, ref in ((df.asnumpy(), want_df), (dw.asnumpy(), want_dw)):
        np.testing.assert_allclose(got, ref, rtol=2e-2, atol=2e-2 * np.abs(ref).max())
    # the margin alone: ArcFace turns the label's cosine into cos(acos + m), times s
    cos = rng.uniform(-0.9, 0.9, (3, 6)).astype(np.float32)
    labels = np.array([1, 0, 5], np.int32)
    margin = pfc.margin_softmax(Tensor(cos), Tensor(labels)).asnumpy()
    want_margin = 64 * np.cos(np.arccos(cos.astype(np.float64)) + 0.5 * np.eye(6)[labels])
    np.testing.assert_allclose(margin, want_margin, rtol=1e-5, atol=1e-4)


def test_lr_generator_steps_at_the_schedule(monkeypatch):
    script = _script(monkeypatch)
    lr = script["lr_generator"](0.08, 25, steps_per_epoch=2).asnumpy()
    want = [0.08 * 0.1 ** sum(e >= s for s in (10, 16, 21)) for e in range(25) for _ in range(2)]
    np.testing.assert_allclose(lr, want, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# train.py's set-up


def _train_setup(script, net, steps_per_epoch):
    """What train.py's ``__main__`` builds, with ``net`` for iresnet100."""
    args = script["args"]
    train_net = script["MyNetWithLoss"](net, args)
    lr = script["lr_generator"](args.lr, args.epochs, steps_per_epoch=steps_per_epoch)
    optimizer = nn.SGD(params=train_net.trainable_params(), learning_rate=lr / 512 * args.batch_size * args.device_num,
                       momentum=args.momentum, weight_decay=args.weight_decay)  # fmt: skip
    return train_net, optimizer, Model(train_net, optimizer=optimizer)


def test_train_step_is_sgd_with_momentum_and_weight_decay(monkeypatch, rng):
    """Two steps of ``Model(MyNetWithLoss, optimizer=SGD)`` in dataset sink mode against NumPy's SGD (MindSpore's:
    the first step's accumulation is the gradient; weight decay on every parameter but the BatchNorm gammas and
    betas) on the gradients of the network with the loss."""
    script = _script(monkeypatch, "--batch_size", "2", "--epochs", "2", "--lr", "4")
    context.set_context(mode=context.GRAPH_MODE)
    train_net, optimizer, model = _train_setup(script, _small_iresnet(), steps_per_epoch=1)
    params = list(train_net.trainable_params())
    assert params[-1].name == "mp_weight" and len(params) == len(optimizer.parameters)
    x = rng.uniform(-1, 1, (2, 3, 112, 112)).astype(np.float32)
    y = np.array([1, 3], np.int32)
    data = ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False).batch(2)
    grad_fn = ops.GradOperation(get_by_list=True)(train_net, ParameterTuple(params))
    lr = 4 / 512 * 2
    accum = None
    for _ in range(2):
        before = [_np(p) for p in params]
        grads = [g.asnumpy().astype(np.float64) for g in grad_fn(Tensor(x), Tensor(y))]
        grads = [g + (1e-4 * v if "beta" not in p.name and "gamma" not in p.name else 0)
                 for g, v, p in zip(grads, before, params)]  # fmt: skip
        accum = grads if accum is None else [0.9 * a + g for a, g in zip(accum, grads)]
        model.train(1, data, dataset_sink_mode=True)
        for p, v, a in zip(params, before, accum):
            np.testing.assert_allclose(_np(p) - v, -lr * a, rtol=1e-3, atol=1e-3 * lr * np.abs(a).max(), err_msg=p.name)


def _write_faces(root, per_class=2, seed=0):
    """An ImageFolder of 112 x 112 PNG images, two classes told apart by their colour."""
    rng = np.random.default_rng(seed)
    images = {}
    for c, colour in enumerate(([200, 60, 60], [60, 60, 200])):
        os.makedirs(os.path.join(root, f"id{c}"))
        for i in range(per_class):
            pixels = np.clip(np.float64(colour) + rng.normal(0, 30, (112, 112, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"id{c}", f"{i}.png"))
            images[(c, i)] = pixels
    return str(root), images


def test_create_dataset_then_train_py_training(monkeypatch, tmp_path, capsys):
    root, images = _write_faces(tmp_path / "faces")
    # the pipeline: decoded images, flipped or not, scaled to [-1, 1] (mean and std 127.5), CHW; int32 labels
    normalized = {k: ((v - 127.5) / 127.5).transpose(2, 0, 1) for k, v in images.items()}
    seen = []
    for image, label in create_dataset(root, do_train=True, batch_size=2).create_tuple_iterator(output_numpy=True):
        assert image.shape == (2, 3, 112, 112) and image.dtype == np.float32 and label.dtype == np.int32
        for im, lb in zip(image, label):
            (match,) = [k for k, v in normalized.items() if np.allclose(im, v, atol=1e-5) or
                        np.allclose(im, v[:, :, ::-1], atol=1e-5)]  # fmt: skip
            assert match[0] == lb
            seen.append(match)
    assert sorted(seen) == sorted(images)

    script = _script(monkeypatch, "--batch_size", "4", "--epochs", "4", "--train_url", str(tmp_path / "out"))
    context.set_context(mode=context.GRAPH_MODE)
    dataset = create_dataset(dataset_path=root, do_train=True, repeat_num=1, batch_size=4, target="GPU")
    step = dataset.get_dataset_size()
    assert step == 1
    net = _small_iresnet()
    _, _, model = _train_setup(script, net, steps_per_epoch=step)
    config_ck = script["CheckpointConfig"](save_checkpoint_steps=60, keep_checkpoint_max=20)
    ckpt_cb = script["ModelCheckpoint"](prefix="ArcFace-", config=config_ck, directory=script["args"].train_url)
    cb = [ckpt_cb, script["TimeMonitor"](data_size=step), script["LossMonitor"]()]
    model.train(4, dataset, callbacks=cb, dataset_sink_mode=True)
    out = capsys.readouterr().out
    losses = [float(v) for v in re.findall(r"step: 1, loss is ([0-9.e+-]+)", out)]
    assert len(losses) == 4 and np.all(np.isfinite(losses)), out
    assert losses[-1] < 0.5 * losses[0], losses
    saved = os.listdir(tmp_path / "out")
    assert "ArcFace--4_1.ckpt" in saved, saved
    loaded = opforge.load_checkpoint(str(tmp_path / "out" / "ArcFace--4_1.ckpt"))
    np.testing.assert_array_equal(loaded["fc.weight"].asnumpy(), net.fc.weight.asnumpy())
    assert "mp_weight" in loaded


def test_my_net_with_loss_keeps_the_names_and_casts(monkeypatch):
    script = _script(monkeypatch)
    net = _small_iresnet()
    train_net = script["MyNetWithLoss"](net, script["args"])
    names = [p.name for p in train_net.trainable_params()]
    assert names[0] == "conv1.weight" and names[-1] == "mp_weight"  # auto_prefix=False: the backbone's own names
    x = Tensor(np.zeros((1, 3, 112, 112), np.float32))
    assert net(x).dtype == opforge.float16  # the backbone runs in float16
