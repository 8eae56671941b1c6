"""ECAPA-TDNN as MindSpore's model zoo runs it (tests/zoo/ecapatdnn: official/audio/EcapaTDNN with ``mindspore``
replaced by ``opforge``), shrunk to 16 fbank bins, 32 channels and 6 speakers, on synthetic fbank features (the
zoo's feature extraction needs speechbrain / torchaudio and VoxCeleb wavs, so it is left out): the SE-Res2Net
block, the attentive statistics pooling and the whole ``ECAPA_TDNN`` with ``Classifier``,
``AdditiveAngularMargin`` and the softmax cross-entropy of train.py's ``BuildTrainNetwork`` against a NumPy ECAPA
over the same weights (BatchNorm on batch and on moving statistics); its gradients against NumPy central
differences; and train.py's training setup (``nn.Adam`` over the cyclic learning rate,
src/loss_scale.py's ``TrainOneStepWithLossScaleCellv2`` with a ``FixedLossScaleUpdateCell``, value clipping at 1)
in PyNative and graph mode: the first update is a NumPy Adam step over the same gradients, the loss falls."""

import numpy as np
import pytest
from zoo.ecapatdnn.src.ecapa_tdnn import ECAPA_TDNN, AttentiveStatisticsPooling, Classifier, SERes2NetBlock
from zoo.ecapatdnn.src.loss_scale import TrainOneStepWithLossScaleCellv2
from zoo.ecapatdnn.src.model_utils.config import config as hparams
from zoo.ecapatdnn.src.util import AdditiveAngularMargin
from zoo.ecapatdnn.train import BuildTrainNetwork, CorrectLabelNum, learning_rate_clr_triangle_function

import opforge as ms
import opforge.nn as nn
from opforge import Tensor, context, ops
from opforge.nn import FixedLossScaleUpdateCell

B, T = hparams.minibatch_size, 12  # 4 utterances of 12 frames


@pytest.fixture(autouse=True)
def _mode():
    ms.set_seed(3)
    yield
    context.set_context(mode=context.PYNATIVE_MODE)


# ---------------------------------------------------------------- a NumPy ECAPA-TDNN (float64)


def _conv1d(x, w, b, dilation=1):
    """nn.Conv1d with pad_mode='same': (N, C, L) by a (O, C, 1, K) weight."""
    w = w[:, :, 0, :]
    k = w.shape[-1]
    total = dilation * (k - 1)
    xp = np.pad(x, ((0, 0), (0, 0), (total // 2, total - total // 2)))
    length = x.shape[2]
    out = sum(np.einsum("oc,ncl->nol", w[:, :, i], xp[:, :, i * dilation : i * dilation + length]) for i in range(k))
    return out + b[None, :, None]


class NumpyEcapa:
    """The zoo's blocks written from the paper's structure, reading only the weights (``p``, by name)."""

    def __init__(self, params, train_bn, prefix=""):
        self.p = {k[len(prefix) :]: v for k, v in params.items() if k.startswith(prefix)}
        self.train_bn = train_bn

    def bn(self, x, name):
        g, b = self.p[name + ".norm2d.gamma"], self.p[name + ".norm2d.beta"]
        if self.train_bn:
            mean, var = x.mean(axis=(0, 2), keepdims=True), x.var(axis=(0, 2), keepdims=True)
        else:
            mean = self.p[name + ".norm2d.moving_mean"][None, :, None]
            var = self.p[name + ".norm2d.moving_variance"][None, :, None]
        return (x - mean) / np.sqrt(var + 1e-5) * g[None, :, None] + b[None, :, None]

    def tdnn(self, x, name, dilation=1):
        y = _conv1d(x, self.p[name + ".conv.weight"], self.p[name + ".conv.bias"], dilation)
        return self.bn(np.maximum(y, 0.0), name + ".norm")

    def res2net(self, x, name, scale, dilation):
        chunks = np.split(x, scale, axis=1)
        ys = [chunks[0]]
        for i in range(1, scale):
            inp = chunks[i] if i == 1 else chunks[i] + ys[-1]
            ys.append(self.tdnn(inp, f"{name}.blocks.{i - 1}", dilation))
        return np.concatenate(ys, axis=1)

    def se(self, x, name):
        s = x.mean(axis=2, keepdims=True)
        s = np.maximum(_conv1d(s, self.p[name + ".conv1.weight"], self.p[name + ".conv1.bias"]), 0.0)
        s = 1.0 / (1.0 + np.exp(-_conv1d(s, self.p[name + ".conv2.weight"], self.p[name + ".conv2.bias"])))
        return s * x

    def se_res2net(self, x, name, scale, dilation):
        y = self.tdnn(x, name + ".tdnn1")
        y = self.res2net(y, name + ".res2net_block", scale, dilation)
        y = self.tdnn(y, name + ".tdnn2")
        return self.se(y, name + ".se_block") + x

    def asp(self, x, name):
        a = np.tanh(self.tdnn(x, name + ".tdnn"))
        a = _conv1d(a, self.p[name + ".conv.weight"], self.p[name + ".conv.bias"])
        a = np.exp(a - a.max(axis=2, keepdims=True))
        a /= a.sum(axis=2, keepdims=True)
        mean = (a * x).sum(axis=2)
        std = np.sqrt(np.maximum((a * (x - mean[:, :, None]) ** 2).sum(axis=2), 1e-12))
        return np.concatenate([mean, std], axis=1)[:, :, None]

    def embed(self, feats, scale, dilations):
        x = feats.transpose(0, 2, 1)
        xs = [self.tdnn(x, "blocks.0", 1)]
        for i in range(1, 4):
            xs.append(self.se_res2net(xs[-1], f"blocks.{i}", scale, dilations[i]))
        x = self.tdnn(np.concatenate(xs[1:], axis=1), "mfa")
        x = self.bn(self.asp(x, "asp"), "asp_bn")
        return _conv1d(x, self.p["fc.weight"], self.p["fc.bias"])[:, :, 0]


def _l2n(x):
    return x / np.sqrt(np.maximum((x * x).sum(axis=1, keepdims=True), 1e-4))


def _np_head(emb, weight, onehot, margin=0.2, scale=30.0):
    """Classifier (cosines), AdditiveAngularMargin and the mean softmax cross-entropy."""
    cos = _l2n(emb) @ _l2n(weight).T
    sine = np.sqrt(1.0 - cos**2)
    phi = cos * np.cos(margin) - sine * np.sin(margin)
    phi = np.where(cos > np.cos(np.pi - margin), phi, cos - np.sin(np.pi - margin) * margin)
    logits = scale * (onehot * phi + (1.0 - onehot) * cos)
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return logits, -(onehot * logp).sum(axis=1).mean()


def _params(cell):
    return {n: p.asnumpy().astype(np.float64) for n, p in cell.parameters_and_names()}


def _randomise_bn(cell, rng):
    """Moving statistics and affine BatchNorm parameters away from their 0 / 1 starts."""
    for name, p in cell.parameters_and_names():
        if name.endswith(("moving_mean", "beta")):
            p.set_data(Tensor(rng.normal(0, 0.3, p.shape).astype(np.float32)))
        elif name.endswith(("moving_variance", "gamma")):
            p.set_data(Tensor(rng.uniform(0.5, 1.5, p.shape).astype(np.float32)))


def _feats(rng):
    return rng.normal(size=(B, T, hparams.in_channels)).astype(np.float32)


def _ecapa():
    c = hparams.channels
    return ECAPA_TDNN(hparams.in_channels, channels=(c, c, c, c, c * 3), lin_neurons=hparams.emb_size)


# ---------------------------------------------------------------- the blocks


@pytest.mark.parametrize("train_bn", [True, False])
def test_se_res2net_block_and_pooling_match_numpy(rng, train_bn):
    c = hparams.channels
    block = SERes2NetBlock(c, c, res2net_scale=8, se_channels=8, kernel_size=3, dilation=2)
    asp = AttentiveStatisticsPooling(c, attention_channels=8)
    _randomise_bn(block, rng)
    _randomise_bn(asp, rng)
    block.set_train(train_bn)
    asp.set_train(train_bn)
    x = rng.normal(size=(B, c, T)).astype(np.float32)
    ref = NumpyEcapa({"." + k: v for k, v in _params(block).items()}, train_bn)
    y = block(Tensor(x))
    expect = ref.se_res2net(x.astype(np.float64), "", 8, 2)
    np.testing.assert_allclose(y.asnumpy(), expect, rtol=1e-4, atol=1e-4)
    pooled = asp(y)
    assert pooled.shape == (B, 2 * c, 1)
    np.testing.assert_allclose(
        pooled.asnumpy(),
        NumpyEcapa({"." + k: v for k, v in _params(asp).items()}, train_bn).asp(expect, ""),
        rtol=1e-4,
        atol=1e-4,
    )
    if train_bn:  # MindSpore's moving statistics: 0.9 * old + 0.1 * batch (the unbiased batch variance)
        pre = np.maximum(_conv1d(x, ref.p[".tdnn1.conv.weight"], ref.p[".tdnn1.conv.bias"]), 0.0)
        mm = block.tdnn1.norm.norm2d.moving_mean.asnumpy()
        mv = block.tdnn1.norm.norm2d.moving_variance.asnumpy()
        np.testing.assert_allclose(
            mm, 0.9 * ref.p[".tdnn1.norm.norm2d.moving_mean"] + 0.1 * pre.mean(axis=(0, 2)), rtol=1e-4, atol=1e-5
        )
        var = pre.var(axis=(0, 2), ddof=1)
        np.testing.assert_allclose(
            mv, 0.9 * ref.p[".tdnn1.norm.norm2d.moving_variance"] + 0.1 * var, rtol=1e-4, atol=1e-5
        )


def test_additive_angular_margin_matches_numpy(rng):
    cos = np.concatenate([rng.uniform(-0.999, 0.999, (5, 6)), [[-0.99, -0.985, 0.3, 0.0, 0.5, 0.9]]]).astype(np.float32)
    onehot = np.eye(6, dtype=np.float32)[[0, 1, 2, 3, 4, 1]]
    for easy in (False, True):
        out = AdditiveAngularMargin(0.2, 30, easy_margin=easy)(Tensor(cos), Tensor(onehot)).asnumpy()
        c = cos.astype(np.float64)
        phi = c * np.cos(0.2) - np.sqrt(1 - c * c) * np.sin(0.2)
        phi = np.where(c > 0, phi, c) if easy else np.where(c > np.cos(np.pi - 0.2), phi, c - np.sin(np.pi - 0.2) * 0.2)
        np.testing.assert_allclose(out, 30 * (onehot * phi + (1 - onehot) * c), rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------- the network, loss and gradients


def test_ecapa_network_and_loss_match_numpy(rng):
    net = _ecapa()
    _randomise_bn(net, rng)
    classifier = Classifier(1, 0, hparams.emb_size, hparams.class_num)
    loss_fn = nn.loss.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean")
    train_net = BuildTrainNetwork(net, classifier, AdditiveAngularMargin(0.2, 30), loss_fn, B, hparams.class_num)
    feats, labels = _feats(rng), np.array([0, 3, 5, 3], np.int32)
    onehot = np.eye(hparams.class_num)[labels]
    for train_bn in (False, True):
        net.set_train(train_bn)
        ref = NumpyEcapa(_params(net), train_bn)
        emb = ref.embed(feats.astype(np.float64), 8, (1, 2, 3, 4))
        np.testing.assert_allclose(net(Tensor(feats)).asnumpy(), emb, rtol=2e-4, atol=2e-4)
    cw = classifier.weight.asnumpy().astype(np.float64)
    train_net.set_train(True)
    ref = NumpyEcapa(_params(net), True)
    logits, loss = _np_head(ref.embed(feats.astype(np.float64), 8, (1, 2, 3, 4)), cw, onehot)
    got = train_net(Tensor(feats), Tensor(labels))
    np.testing.assert_allclose(got.asnumpy(), loss, rtol=1e-4)
    np.testing.assert_allclose(train_net.output.asnumpy(), logits, rtol=1e-4, atol=2e-4)  # self.output = output
    correct = CorrectLabelNum()(train_net.output, Tensor(labels)).asnumpy()
    assert correct == (logits.argmax(1) == labels).sum()

    # gradients against central differences of the NumPy loss (float64)
    weights = ms.ParameterTuple(train_net.trainable_params())
    grads = ops.GradOperation(get_by_list=True)(train_net, weights)(Tensor(feats), Tensor(labels))
    grads = {p.name: g.asnumpy() for p, g in zip(weights, grads)}
    params = _params(net)

    def np_loss(params, cw):
        return _np_head(NumpyEcapa(params, True).embed(feats.astype(np.float64), 8, (1, 2, 3, 4)), cw, onehot)[1]

    checked = 0
    for name in (
        "fc.weight",
        "blocks.2.res2net_block.blocks.1.conv.weight",
        "asp.conv.weight",
        "blocks.1.se_block.conv1.bias",
        "blocks.0.norm.norm2d.gamma",
        "mfa.conv.weight",
    ):
        gname = next(k for k in grads if k.endswith(name))
        flat = params[name].reshape(-1)
        for idx in rng.choice(flat.size, 3, replace=False):
            plus, minus = {**params, name: params[name].copy()}, {**params, name: params[name].copy()}
            plus[name].reshape(-1)[idx] += 1e-5
            minus[name].reshape(-1)[idx] -= 1e-5
            fd = (np_loss(plus, cw) - np_loss(minus, cw)) / 2e-5
            np.testing.assert_allclose(grads[gname].reshape(-1)[idx], fd, rtol=2e-3, atol=2e-4)
            checked += 1
    cidx = rng.choice(cw.size, 3, replace=False)
    for idx in cidx:
        plus, minus = cw.copy(), cw.copy()
        plus.reshape(-1)[idx] += 1e-5
        minus.reshape(-1)[idx] -= 1e-5
        fd = (np_loss(params, plus) - np_loss(params, minus)) / 2e-5
        gname = next(k for k in grads if k.endswith("classifier.weight") or k == "weight")
        np.testing.assert_allclose(grads[gname].reshape(-1)[idx], fd, rtol=2e-3, atol=2e-4)
    assert checked == 18


# ---------------------------------------------------------------- train.py's training step


def _np_adam_step(params, grads, names, lr, t, state, weight_decay):
    """nn.Adam (beta1 0.9, beta2 0.999, eps 1e-8) with the weight decay added to the gradients of the
    Parameters whose names hold neither 'beta' nor 'gamma'."""
    out = {}
    for n in names:
        g = grads[n] + (weight_decay * params[n] if ("beta" not in n and "gamma" not in n) else 0.0)
        m, v = state.get(n, (0.0, 0.0))
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        state[n] = (m, v)
        lr_t = lr * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        out[n] = params[n] - lr_t * m / (np.sqrt(v) + 1e-8)
    return out


@pytest.mark.parametrize("mode", [context.PYNATIVE_MODE, context.GRAPH_MODE])
def test_train_step_is_a_clipped_adam_step_and_loss_falls(rng, mode):
    context.set_context(mode=mode)
    net = _ecapa()
    classifier = Classifier(1, 0, hparams.emb_size, hparams.class_num)
    aam = AdditiveAngularMargin(0.2, 30)
    steps = 6
    lr_list = [
        learning_rate_clr_triangle_function(hparams.step_size, hparams.max_lrate, hparams.base_lrate, i)
        for i in range(steps)
    ]
    np.testing.assert_allclose(lr_list[:5], [1e-4, 0.00505, 0.01, 0.00505, 1e-4])
    loss = nn.loss.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean")
    model = BuildTrainNetwork(net, classifier, aam, loss, B, hparams.class_num)
    opt = nn.Adam(model.trainable_params(), learning_rate=lr_list, weight_decay=hparams.weight_decay)
    step = TrainOneStepWithLossScaleCellv2(model, opt, scale_sense=FixedLossScaleUpdateCell(loss_scale_value=2**14))
    feats, labels = Tensor(_feats(rng)), Tensor(np.array([0, 1, 2, 3], np.int32))

    # the gradients at the start (the network trains on batch statistics), clipped at 1 as ClipGradients does
    model.set_train(True)
    weights = model.trainable_params()
    names = [p.name for p in weights]
    before = {p.name: p.asnumpy().astype(np.float64) for p in weights}
    g = ops.GradOperation(get_by_list=True)(model, ms.ParameterTuple(weights))(feats, labels)
    grads = {n: np.clip(x.asnumpy().astype(np.float64), -1.0, 1.0) for n, x in zip(names, g)}
    assert any(np.abs(x.asnumpy()).max() > 1.0 for x in g)  # the clipping is exercised

    losses = []
    for i in range(steps):
        step.set_train()
        batch_loss, cond, scaling, output = step(feats, labels)
        assert not bool(cond.asnumpy()) and float(scaling.asnumpy()) == 2**14
        assert output.shape == (B, hparams.class_num)
        losses.append(float(batch_loss.asnumpy()))
        if i == 0:
            expect = _np_adam_step(before, grads, names, lr_list[0], 1, {}, hparams.weight_decay)
            for p in weights:
                np.testing.assert_allclose(p.asnumpy(), expect[p.name], rtol=1e-5, atol=1e-6)
    assert np.all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0]
