"""MelGAN as MindSpore's model zoo writes it (tests/zoo/melgan: official/audio/MELGAN's src/model.py and src/loss.py
with ``mindspore`` replaced by ``opforge``), on synthetic log-mel frames and waveforms (the zoo's dataset reads wav
files and precomputed mels): the ``Generator`` (its transposed-convolution upsampling stack x8 x8 x2 x2 and dilated
residual stacks) and the ``MultiDiscriminator`` (three discriminators on the waveform and its two strided
down-samplings, 7 feature maps each) against NumPy over the same weights; ``MelganLoss_G`` (least squares plus
feature matching) and ``MelganLoss_D`` against NumPy; and the training steps of train.py: the generator's gradient
taken as src/trainonestep.py's ``TrainOneStepCellGEN`` takes it (the discriminator loss's gradient for the
generated waveform, with the loss scale as sens, pulled back through the generator), ``nn.Adam`` with
config.yaml's learning rates and betas: the first generator update is a NumPy Adam step, the discriminator's loss
falls. src/trainonestep.py itself (and train.py, which imports it) is not copied: it reads Ascend's overflow
register (``NPUAllocFloatStatus`` / ``NPUGetFloatStatus`` / ``NPUClearFloatStatus``), which opforge lacks."""

import numpy as np
import pytest
from zoo.melgan.src.loss import MelganLoss_D, MelganLoss_G
from zoo.melgan.src.model import Generator, MultiDiscriminator

import opforge as ms
import opforge.nn as nn
from opforge import Tensor, ops

LR, BETA1, BETA2, WEIGHT_DECAY, ALPHA = 0.0001, 0.9, 0.999, 0.0, 0.2  # config.yaml
MEL_FRAMES = 4  # 4 frames of 80 mel bins -> 1024 samples (hop 256)


@pytest.fixture(scope="module")
def nets():
    ms.set_seed(1)
    return Generator(alpha=ALPHA), MultiDiscriminator()


# ---------------------------------------------------------------- NumPy MelGAN


def _leaky(x, a=0.2):
    return np.where(x > 0, x, a * x)


def _conv(x, w, b, stride=1, pad=0, dilation=1):
    """nn.Conv1d over (N, C, L) with a (O, C, 1, K) weight, ``pad`` zeros on both sides."""
    w = w[:, :, 0, :]
    k = w.shape[-1]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
    lout = (xp.shape[2] - dilation * (k - 1) - 1) // stride + 1
    cols = np.stack([xp[:, :, i * dilation : i * dilation + stride * (lout - 1) + 1 : stride] for i in range(k)], 2)
    return np.einsum("ock,nckl->nol", w, cols) + b[None, :, None]


def _conv_t(x, w, b, stride, pad):
    """nn.Conv1dTranspose (pad_mode 'pad') with a (C_in, C_out, 1, K) weight."""
    w = w[:, :, 0, :]
    k = w.shape[-1]
    n, _, length = x.shape
    full = np.zeros((n, w.shape[1], (length - 1) * stride + k), x.dtype)
    for i in range(length):
        full[:, :, i * stride : i * stride + k] += np.einsum("nc,cok->nok", x[:, :, i], w)
    return full[:, :, pad : full.shape[2] - pad] + b[None, :, None]


def _np_generator(p, mel):
    def c(x, name, **kw):
        return _conv(x, p[name + ".conv.weight"], p[name + ".conv.bias"], **kw)

    def res_stack(x, name):
        for i, d in ((1, 1), (2, 3), (3, 9)):
            h = _leaky(x)
            h = c(np.pad(h, ((0, 0), (0, 0), (d, d))), f"{name}.block{i}.2", dilation=d)
            h = c(_leaky(h), f"{name}.block{i}.4")
            x = h + c(x, f"{name}.shortcut{i}")
        return x

    x = _leaky(c(np.pad(mel, ((0, 0), (0, 0), (3, 3))), "conv1d_1"), ALPHA)
    for i, (stride, pad) in enumerate(((8, 4), (8, 4), (2, 1), (2, 1)), 1):
        name = f"conv1dtran_{i}"
        x = _conv_t(x, p[name + ".conv.weight"], p[name + ".conv.bias"], stride, pad)
        x = _leaky(res_stack(x, f"rses_{i}"), ALPHA if i <= 2 else 0.2)
    return np.tanh(c(np.pad(x, ((0, 0), (0, 0), (3, 3))), "conv1d_2"))


def _np_discriminator(p, x, name):
    def c(x, layer, **kw):
        return _conv(x, p[f"{name}.{layer}.conv.weight"], p[f"{name}.{layer}.conv.bias"], **kw)

    feats = [_leaky(c(np.pad(x, ((0, 0), (0, 0), (7, 7))), "conv1.1"))]
    for i in (2, 3, 4):
        feats.append(_leaky(c(feats[-1], f"conv{i}.0", stride=4, pad=20)))
    feats.append(_leaky(c(feats[-1], "conv5.0", stride=4, pad=5)))
    feats.append(_leaky(c(feats[-1], "conv6.0", pad=1)))
    feats.append(c(feats[-1], "conv7", pad=1))
    return feats


def _np_multi(p, x):
    x1 = _conv(x, p["avg1.conv.weight"], p["avg1.conv.bias"], stride=2, pad=2)
    x2 = _conv(x1, p["avg2.conv.weight"], p["avg2.conv.bias"], stride=2, pad=2)
    return [_np_discriminator(p, x, "dis1"), _np_discriminator(p, x1, "dis2"), _np_discriminator(p, x2, "dis3")]


def _np_loss_g(fake, real):
    loss = sum(((f[6] - 1.0) ** 2).sum(axis=(1, 2)).mean() for f in fake)
    return loss + sum(10 * np.abs(fake[i][j] - real[i][j]).mean() for i in range(3) for j in range(6))


def _np_loss_d(fake, real):
    return sum((f[6] ** 2).sum(axis=(1, 2)).mean() for f in fake) + sum(
        ((r[6] - 1.0) ** 2).sum(axis=(1, 2)).mean() for r in real
    )


def _params(cell, dtype):
    return {n: p.asnumpy().astype(dtype) for n, p in cell.parameters_and_names()}


def _data(rng):
    mel = (rng.normal(-5.0, 2.0, (2, 80, MEL_FRAMES)) + 5.0) / 5.0  # train.py: (data + 5) / 5
    wav = 0.5 * np.sin(np.linspace(0, 60, 256 * MEL_FRAMES))[None, None] * rng.uniform(0.5, 1, (2, 1, 1))
    return mel.astype(np.float32), wav.astype(np.float32)


# ---------------------------------------------------------------- tests


def test_generator_upsampling_stack_matches_numpy(nets, rng):
    gen, _ = nets
    mel, _ = _data(rng)
    out = gen(Tensor(mel))
    assert out.shape == (2, 1, 256 * MEL_FRAMES)
    np.testing.assert_allclose(out.asnumpy(), _np_generator(_params(gen, np.float64), mel), rtol=1e-4, atol=2e-5)


def test_multiscale_discriminator_and_losses_match_numpy(nets, rng):
    gen, dis = nets
    mel, wav = _data(rng)
    fake = gen(Tensor(mel))
    y_fake, y_real = dis(fake), dis(Tensor(wav))
    p = _params(dis, np.float32)
    np_fake, np_real = _np_multi(p, fake.asnumpy()), _np_multi(p, wav)
    lengths = [[1024, 256, 64, 16, 4, 4, 4], [512, 128, 32, 8, 2, 2, 2], [256, 64, 16, 4, 1, 1, 1]]
    for got, expect in ((y_fake, np_fake), (y_real, np_real)):
        for i in range(3):
            assert [t.shape[2] for t in got[i]] == lengths[i]
            for j in range(7):
                scale = np.abs(expect[i][j]).max()
                np.testing.assert_allclose(got[i][j].asnumpy(), expect[i][j], rtol=1e-3, atol=1e-4 * scale)
    np_fake = [[f.astype(np.float64) for f in s] for s in (np_fake)]
    np_real = [[f.astype(np.float64) for f in s] for s in (np_real)]
    np.testing.assert_allclose(MelganLoss_G()(y_fake, y_real).asnumpy(), _np_loss_g(np_fake, np_real), rtol=1e-4)
    np.testing.assert_allclose(MelganLoss_D()(y_fake, y_real).asnumpy(), _np_loss_d(np_fake, np_real), rtol=1e-4)


class _DisLoss(nn.Cell):
    """train.py's BuildDisNetwork: the discriminator on the generated and the real waveform, then the criterion."""

    def __init__(self, network, criterion):
        super().__init__(auto_prefix=False)
        self.network = network
        self.criterion = criterion

    def construct(self, fake_wav, wav):
        return self.criterion(self.network(fake_wav), self.network(wav))


class _GenThenDis(nn.Cell):
    def __init__(self, gen, dis_loss):
        super().__init__(auto_prefix=False)
        self.gen = gen
        self.dis_loss = dis_loss

    def construct(self, mel, wav):
        return self.dis_loss(self.gen(mel), wav)


def test_train_steps_generator_adam_and_discriminator_loss_falls(nets, rng):
    gen, dis = nets
    mel, wav = _data(rng)
    mel_t, wav_t = Tensor(mel), Tensor(wav)
    sens = Tensor(np.float32(2**10))  # DynamicLossScaleManager(init_loss_scale=2 ** 10)
    dis_g, dis_d = _DisLoss(dis, MelganLoss_G()), _DisLoss(dis, MelganLoss_D())
    opt_g = nn.Adam(gen.trainable_params(), learning_rate=LR, beta1=BETA1, beta2=BETA2, weight_decay=WEIGHT_DECAY)
    opt_d = nn.Adam(dis.trainable_params(), learning_rate=LR, beta1=BETA1, beta2=BETA2, weight_decay=WEIGHT_DECAY)
    g_weights = ms.ParameterTuple(gen.trainable_params())

    # TrainOneStepCellGEN's gradient: d loss / d generated wav (sens = the loss scale), pulled back through G
    gdata = gen(mel_t)
    grads_d = ops.GradOperation(get_all=True, get_by_list=True, sens_param=True)(
        dis_g, ms.ParameterTuple(dis.trainable_params())
    )(gdata, wav_t, sens)
    grads_g = ops.GradOperation(get_by_list=True, sens_param=True)(gen, g_weights)(mel_t, grads_d[0][0])
    # ... is the scaled gradient of the whole generator loss
    direct = ops.GradOperation(get_by_list=True)(_GenThenDis(gen, dis_g), g_weights)(mel_t, wav_t)
    for a, b in zip(grads_g, direct):
        np.testing.assert_allclose(a.asnumpy() / 2**10, b.asnumpy(), rtol=2e-3, atol=1e-6 * np.abs(b.asnumpy()).max())

    before = [p.asnumpy().astype(np.float64) for p in g_weights]
    opt_g(grads_g)
    for p, w, g in zip(g_weights, before, grads_g):
        g = g.asnumpy().astype(np.float64)
        m, v = (1 - BETA1) * g, (1 - BETA2) * g * g
        lr_t = LR * np.sqrt(1 - BETA2) / (1 - BETA1)
        np.testing.assert_allclose(p.asnumpy(), w - lr_t * m / (np.sqrt(v) + 1e-8), rtol=1e-5, atol=1e-7)

    # TrainOneStepCellDIS: the discriminator loss's gradient (sens = the loss scale) into Adam, three times
    d_weights = ms.ParameterTuple(dis.trainable_params())
    d_losses = []
    for _ in range(3):
        fake = gen(mel_t)
        loss = dis_d(fake, wav_t)
        grads = ops.GradOperation(get_by_list=True, sens_param=True)(dis_d, d_weights)(fake, wav_t, sens)
        opt_d(grads)
        d_losses.append(float(loss.asnumpy()))
    assert np.all(np.isfinite(d_losses))
    assert d_losses[-1] < d_losses[0]
