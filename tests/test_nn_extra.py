"""MindSpore 2.x nn cells added in one go: activations (ELU, Softmin, Softmax2d, GLU, Threshold, FastGelu),
channel dropout (Dropout1d/2d/3d, fresh masks under jit), padding layers, PixelUnshuffle, pooling
(AdaptiveAvgPool1d, AdaptiveMaxPool1d/2d, MaxPool3d, AvgPool3d), BatchNorm3d, CellDict, the metrics F1, Fbeta,
Dice and ConfusionMatrix, and the optimizers AdaMax, Adadelta, Rprop, ASGD, ProximalAdagrad, FTRL and LARS.
Each against a NumPy reference, MindSpore's documented example outputs, float64 gradients against numerical
differentiation, and errors naming the cell and argument."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, nn
from opforge.testing import numeric_grad


def _check_grad(cell, x: np.ndarray, rng) -> None:
    w = rng.standard_normal(np.asarray(cell(Tensor(x)).asnumpy()).shape)
    got = opforge.grad(lambda t: (cell(t) * Tensor(w)).sum())(Tensor(x)).asnumpy()
    want = numeric_grad(lambda a: float((cell(Tensor(a)).asnumpy() * w).sum()), x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


# -- activations -------------------------------------------------------------------------------------------


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = [
    (lambda: nn.ELU(), lambda x: np.where(x > 0, x, np.expm1(x))),
    (lambda: nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (lambda: nn.Softmin(), lambda x: _softmax(-x, -1)),
    (lambda: nn.Softmin(0), lambda x: _softmax(-x, 0)),
    (lambda: nn.Softmax2d(), lambda x: _softmax(x, -3)),
    (lambda: nn.GLU(), lambda x: x[..., :2] * _sigmoid(x[..., 2:])),
    (lambda: nn.GLU(0), lambda x: x[:1] * _sigmoid(x[1:])),
    (lambda: nn.Threshold(0.1, 20.0), lambda x: np.where(x > 0.1, x, 20.0)),
    (lambda: nn.FastGelu(), lambda x: x * _sigmoid(1.702 * x)),
]


@pytest.mark.parametrize("make, ref", ACTIVATIONS)
def test_activations_match_numpy_and_differentiate(make, ref, rng):
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(make()(Tensor(x)).asnumpy(), ref(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        make()(Tensor(x.astype(np.float32))).asnumpy(), ref(x).astype(np.float32), rtol=1e-5, atol=1e-6
    )
    _check_grad(make(), x + 0.05 * np.sign(x - 0.1), rng)  # away from Threshold's kink


def test_activation_documented_examples():
    x = Tensor(np.array([-1, -2, 0, 2, 1], np.float32))
    np.testing.assert_allclose(nn.ELU()(x).asnumpy(), [-0.63212055, -0.86466473, 0.0, 2.0, 1.0], rtol=1e-6)
    softmin = nn.Softmin()(Tensor(np.array([-1, -2, 0, 2, 1], np.float16))).asnumpy()
    np.testing.assert_allclose(softmin, [0.2341, 0.636, 0.0862, 0.01165, 0.03168], rtol=2e-3)
    glu = nn.GLU()(Tensor(np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]], np.float32))).asnumpy()
    np.testing.assert_allclose(glu, [[0.05744425, 0.11973753], [0.33409387, 0.41398472]], rtol=1e-6)
    out = nn.Threshold(0.1, 20)(Tensor(np.array([1.0, 2.0, 3.0], np.float32))).asnumpy()
    np.testing.assert_allclose(out, [1.0, 2.0, 3.0])
    assert isinstance(nn.get_activation("softmin"), nn.Softmin)


def test_activation_bad_arguments_name_cell_and_argument():
    with pytest.raises(TypeError, match="'ELU'.*'alpha'"):
        nn.ELU("1")
    with pytest.raises(TypeError, match="'Softmin'.*'axis'"):
        nn.Softmin(1.5)
    with pytest.raises(ValueError, match="'GLU'.*'axis'"):
        nn.GLU()(Tensor(np.ones((2, 3), np.float32)))
    with pytest.raises(TypeError, match="'Threshold'.*'value'"):
        nn.Threshold(0.1, None)
    with pytest.raises(ValueError, match="'Softmax2d'"):
        nn.Softmax2d()(Tensor(np.ones((2, 3), np.float32)))


# -- channel dropout -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls, shape", [(nn.Dropout1d, (4, 8, 5)), (nn.Dropout1d, (32, 5)),
                                        (nn.Dropout2d, (4, 8, 3, 2)), (nn.Dropout3d, (3, 8, 2, 2, 2))])  # fmt: skip
def test_channel_dropout_zeroes_whole_channels(cls, shape, rng):
    x = rng.standard_normal(shape).astype(np.float32) + 5.0
    cell = cls(p=0.5)
    assert cell(Tensor(x)).asnumpy() is not None and np.array_equal(cell(Tensor(x)).asnumpy(), x)  # eval: identity
    cell.set_train(True)
    out = cell(Tensor(x)).asnumpy()
    lead = 1 if len(shape) == 2 else 2  # the (N,) C dims
    scale = out / x
    per_channel = scale.reshape(shape[:lead] + (-1,))
    assert np.allclose(per_channel, per_channel[..., :1])  # one factor per channel
    assert set(np.round(np.unique(per_channel), 5)) <= {0.0, 2.0} and len(np.unique(per_channel)) == 2
    cell.step -= 1  # the same mask again: the gradient is the mask
    grad = opforge.grad(lambda t: cell(t).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(grad, scale, rtol=1e-5)


def test_dropout2d_under_jit_draws_a_fresh_mask_each_replay_equal_to_eager():
    eager, traced = nn.Dropout2d(p=0.5), nn.Dropout2d(p=0.5)
    traced.seed = eager.seed
    eager.set_train(True), traced.set_train(True)
    step = opforge.jit(lambda x: traced(x) * 3.0)
    x = Tensor(np.ones((4, 16, 2, 2), np.float32))
    seen = []
    for _ in range(4):
        got = step(x).asnumpy()
        np.testing.assert_array_equal(got, eager(x).asnumpy() * 3.0)
        seen.append(tuple(got[:, :, 0, 0].ravel() != 0))
    assert len(set(seen)) == 4 and len(step.traces()) == 1 and eager.step == traced.step == 4


def test_channel_dropout_edges_and_errors():
    x = Tensor(np.ones((2, 3, 2, 2), np.float32))
    for p, want in ((0.0, 1.0), (1.0, 0.0)):
        cell = nn.Dropout2d(p)
        cell.set_train(True)
        np.testing.assert_array_equal(cell(x).asnumpy(), np.full((2, 3, 2, 2), want, np.float32))
    with pytest.raises(ValueError, match="'Dropout2d'.*'p'"):
        nn.Dropout2d(1.5)
    with pytest.raises(TypeError, match="'Dropout3d'.*'p'"):
        nn.Dropout3d("0.5")
    with pytest.raises(ValueError, match="'Dropout2d'.*rank 4"):
        nn.Dropout2d()(Tensor(np.ones((2, 3), np.float32)))


# -- padding ---------------------------------------------------------------------------------------------


def _np_pad(x, padding, mode, value=0.0):
    pairs = [(0, 0)] * x.ndim
    for k in range(len(padding) // 2):
        pairs[x.ndim - 1 - k] = (padding[2 * k], padding[2 * k + 1])
    if mode == "constant":
        return np.pad(x, pairs, "constant", constant_values=value)
    return np.pad(x, pairs, {"reflect": "reflect", "replicate": "edge"}[mode])


PADS = [
    (lambda: nn.ZeroPad2d((1, 2, 0, 1)), (2, 3, 4, 5), (1, 2, 0, 1), "constant", 0.0),
    (lambda: nn.ZeroPad2d(1), (3, 4, 5), (1,) * 4, "constant", 0.0),
    (lambda: nn.ConstantPad1d((2, 1), 0.5), (2, 3, 4), (2, 1), "constant", 0.5),
    (lambda: nn.ConstantPad2d(1, -1.0), (2, 3, 4, 5), (1,) * 4, "constant", -1.0),
    (lambda: nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 3.0), (1, 2, 3, 4, 5), (1, 0, 0, 1, 2, 0), "constant", 3.0),
    (lambda: nn.ReflectionPad1d((3, 1)), (2, 3, 4), (3, 1), "reflect", 0),
    (lambda: nn.ReflectionPad2d(1), (2, 3, 4, 5), (1,) * 4, "reflect", 0),
    (lambda: nn.ReflectionPad3d((1, 1, 2, 0, 1, 0)), (2, 3, 4, 5), (1, 1, 2, 0, 1, 0), "reflect", 0),
    (lambda: nn.ReplicationPad1d(2), (3, 4), (2, 2), "replicate", 0),
    (lambda: nn.ReplicationPad2d((0, 3, 1, 2)), (2, 3, 4, 5), (0, 3, 1, 2), "replicate", 0),
    (lambda: nn.ReplicationPad3d(1), (1, 2, 3, 4, 5), (1,) * 6, "replicate", 0),
]


@pytest.mark.parametrize("make, shape, padding, mode, value", PADS)
def test_padding_layers_match_numpy_and_differentiate(make, shape, padding, mode, value, rng):
    x = rng.standard_normal(shape)
    np.testing.assert_array_equal(make()(Tensor(x)).asnumpy(), _np_pad(x, padding, mode, value))
    _check_grad(make(), x, rng)


def test_constant_pad_negative_crops_and_documented_example():
    x = np.ones((1, 2, 3, 4), np.float32)
    out = nn.ConstantPad2d((-1, 1, 0, 1), 0.5)(Tensor(x)).asnumpy()
    want = np.full((1, 2, 4, 4), 0.5, np.float32)
    want[:, :, :3, :3] = 1.0
    np.testing.assert_array_equal(out, want)
    refl = nn.ReflectionPad1d(3)(Tensor(np.array([[[0, 1, 2, 3], [4, 5, 6, 7]]], np.float32))).asnumpy()
    np.testing.assert_array_equal(refl[0, 0], [3, 2, 1, 0, 1, 2, 3, 2, 1, 0])


def test_padding_errors_name_cell_and_argument():
    with pytest.raises(TypeError, match="'ConstantPad2d'.*'padding'"):
        nn.ConstantPad2d((1, 2), 0.0)
    with pytest.raises(ValueError, match="'ReflectionPad1d'.*'padding'"):
        nn.ReflectionPad1d(4)(Tensor(np.ones((2, 3, 4), np.float32)))
    with pytest.raises(ValueError, match="'ReplicationPad2d'.*'padding'"):
        nn.ReplicationPad2d(-1)
    with pytest.raises(ValueError, match="'ZeroPad2d'.*rank"):
        nn.ZeroPad2d(1)(Tensor(np.ones((4,), np.float32)))
    with pytest.raises(TypeError, match="'ConstantPad1d'.*'value'"):
        nn.ConstantPad1d(1, "a")


# -- image layers, pooling, BatchNorm3d --------------------------------------------------------------------


def test_pixel_unshuffle_inverts_pixel_shuffle_and_differentiates(rng):
    x = rng.standard_normal((2, 3, 6, 4))
    out = nn.PixelUnshuffle(2)(Tensor(x)).asnumpy()
    want = x.reshape(2, 3, 3, 2, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(2, 12, 3, 2)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(nn.PixelShuffle(2)(Tensor(out)).asnumpy(), x)
    assert nn.PixelUnshuffle(3)(Tensor(np.ones((1, 1, 12, 12), np.float32))).shape == (1, 9, 4, 4)  # MindSpore's
    _check_grad(nn.PixelUnshuffle(2), x, rng)
    with pytest.raises(ValueError, match="'PixelUnshuffle'.*'downscale_factor'"):
        nn.PixelUnshuffle(0)
    with pytest.raises(ValueError, match="'PixelUnshuffle'"):
        nn.PixelUnshuffle(4)(Tensor(x))


def _adaptive(x, sizes, reduce):
    out = x
    for axis, n in sizes:
        size = out.shape[axis]
        parts = [reduce(np.take(out, range((i * size) // n, -((-(i + 1) * size) // n)), axis), axis) for i in range(n)]
        out = np.stack(parts, axis)
    return out


def test_adaptive_pools_match_numpy_and_differentiate(rng):
    x = rng.standard_normal((2, 3, 7))
    np.testing.assert_allclose(nn.AdaptiveAvgPool1d(3)(Tensor(x)).asnumpy(), _adaptive(x, [(2, 3)], np.mean))
    np.testing.assert_allclose(nn.AdaptiveMaxPool1d(3)(Tensor(x)).asnumpy(), _adaptive(x, [(2, 3)], np.max))
    np.testing.assert_allclose(nn.AdaptiveMaxPool1d(4)(Tensor(x[0])).asnumpy(), _adaptive(x[0], [(1, 4)], np.max))
    x2 = rng.standard_normal((2, 3, 5, 7))
    want = _adaptive(x2, [(2, 2), (3, 3)], np.max)
    np.testing.assert_allclose(nn.AdaptiveMaxPool2d((2, 3))(Tensor(x2)).asnumpy(), want)
    out, idx = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(Tensor(x2))
    assert idx.dtype == opforge.int64
    flat = np.take_along_axis(x2.reshape(2, 3, -1), idx.asnumpy().reshape(2, 3, -1), -1)
    np.testing.assert_array_equal(flat.reshape(out.shape), out.asnumpy())
    np.testing.assert_allclose(nn.AdaptiveMaxPool2d((None, 2))(Tensor(x2)).asnumpy(), _adaptive(x2, [(3, 2)], np.max))
    for cell, inp in ((nn.AdaptiveAvgPool1d(3), x), (nn.AdaptiveMaxPool1d(3), x), (nn.AdaptiveMaxPool2d(2), x2)):
        _check_grad(cell, inp, rng)


def test_adaptive_max_pool2d_documented_example():
    x = Tensor(np.tile(np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3), (1, 3, 1, 1)))
    out = nn.AdaptiveMaxPool2d((None, 2))(x).asnumpy()
    np.testing.assert_array_equal(out[0, 0], [[2.0, 3.0], [5.0, 6.0], [8.0, 9.0]])
    np.testing.assert_array_equal(nn.AdaptiveMaxPool2d(2)(x).asnumpy()[0, 0], [[5.0, 6.0], [8.0, 9.0]])


def _pool3d(x, k, s, reduce):
    n, c, d, h, w = x.shape
    od, oh, ow = ((d - k[0]) // s[0] + 1, (h - k[1]) // s[1] + 1, (w - k[2]) // s[2] + 1)
    out = np.empty((n, c, od, oh, ow))
    for i, j, m in np.ndindex(od, oh, ow):
        box = x[:, :, i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1], m * s[2] : m * s[2] + k[2]]
        out[:, :, i, j, m] = reduce(box.reshape(n, c, -1), -1)
    return out


def test_pool3d_match_numpy_and_differentiate(rng):
    x = rng.standard_normal((2, 3, 5, 6, 7))
    for cls, reduce in ((nn.MaxPool3d, np.max), (nn.AvgPool3d, np.mean)):
        got = cls(kernel_size=(2, 3, 2), stride=(1, 2, 2))(Tensor(x)).asnumpy()
        np.testing.assert_allclose(got, _pool3d(x, (2, 3, 2), (1, 2, 2), reduce), rtol=1e-12)
        assert cls(3, 2)(Tensor(x[0])).shape == (3, 2, 2, 3)  # unbatched
        _check_grad(cls(2, 2), x[:1, :2], rng)
    same = nn.MaxPool3d(3, 2, pad_mode="same")(Tensor(x)).shape
    assert same == (2, 3, 3, 3, 4)
    with pytest.raises(ValueError, match="'MaxPool3d'.*'pad_mode'"):
        nn.MaxPool3d(2, pad_mode="pad")
    with pytest.raises(ValueError, match="'AvgPool3d'.*'kernel_size'"):
        nn.AvgPool3d(0)
    with pytest.raises(ValueError, match="'MaxPool3d'.*'return_indices'"):
        nn.MaxPool3d(2, return_indices=True)


def test_batchnorm3d_normalises_per_channel_and_differentiates(rng):
    x = rng.standard_normal((2, 3, 2, 3, 4)) * 2 + 1
    bn = nn.BatchNorm3d(3, dtype=opforge.float64)
    bn.set_train(True)
    out = bn(Tensor(x)).asnumpy()
    mean, var = x.mean((0, 2, 3, 4), keepdims=True), x.var((0, 2, 3, 4), keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.1 * mean.ravel(), rtol=1e-6)
    bn.set_train(False)
    _check_grad(bn, x, rng)
    with pytest.raises(ValueError, match="'BatchNorm3d'.*rank 5"):
        bn(Tensor(x[0]))
    with pytest.raises(ValueError, match="'BatchNorm3d'.*'num_features'"):
        nn.BatchNorm3d(0)


# -- CellDict ----------------------------------------------------------------------------------------------


def test_cell_dict():
    cells = nn.CellDict({"conv": nn.Dense(2, 3), "act": nn.ReLU()})
    cells["pool"] = nn.Flatten()
    assert list(cells.keys()) == ["conv", "act", "pool"] and len(cells) == 3 and "act" in cells
    assert [p.name for p in cells.trainable_params()] == ["conv.weight", "conv.bias"]
    assert isinstance(cells.pop("act"), nn.ReLU) and list(cells) == ["conv", "pool"]
    cells.update([("x", nn.Tanh())])
    assert [type(c).__name__ for c in cells.values()] == ["Dense", "Flatten", "Tanh"]
    del cells["x"]
    cells.clear()
    assert len(cells) == 0
    with pytest.raises(TypeError, match="'CellDict'.*key"):
        nn.CellDict({1: nn.ReLU()})
    with pytest.raises(KeyError, match="CellDict"):
        nn.CellDict({"a.b": nn.ReLU()})
    with pytest.raises(TypeError, match="'CellDict'.*Cell"):
        nn.CellDict(a=3)


# -- metrics -----------------------------------------------------------------------------------------------


def test_metrics_documented_examples():
    x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
    y = Tensor(np.array([1, 0, 1]))
    f1 = nn.F1()
    f1.update(x, y)
    np.testing.assert_allclose(f1.eval(), [0.66666667, 0.66666667])
    fbeta = nn.Fbeta(1)
    fbeta.update(x, y)
    np.testing.assert_allclose(fbeta.eval(), [0.66666667, 0.66666667])
    assert abs(fbeta.eval(average=True) - 2 / 3) < 1e-12
    dice = nn.Dice(smooth=1e-5)
    dice.update(x, Tensor(np.array([[0, 1], [1, 0], [0, 1]])))
    assert abs(dice.eval() - 0.20467791371802546) < 1e-12
    cm = nn.ConfusionMatrix(num_classes=2, normalize="no_norm", threshold=0.5)
    cm.update(Tensor(np.array([1, 0, 1, 0])), Tensor(np.array([1, 0, 0, 1])))
    np.testing.assert_array_equal(cm.eval(), [[1.0, 1.0], [1.0, 1.0]])


def test_fbeta_and_confusion_matrix_against_numpy(rng):
    logits, labels = rng.standard_normal((40, 4)), rng.integers(0, 4, 40)
    pred = logits.argmax(-1)
    tp = np.array([np.sum((pred == c) & (labels == c)) for c in range(4)])
    npred, nlab = np.bincount(pred, minlength=4), np.bincount(labels, minlength=4)
    metric = nn.Fbeta(2.0)
    metric.update(Tensor(logits[:20]), Tensor(labels[:20]))
    metric.update(Tensor(logits[20:]), Tensor(np.eye(4)[labels[20:]]))  # one-hot labels
    np.testing.assert_allclose(metric.eval(), 5 * tp / (4 * nlab + npred), rtol=1e-12)
    want = np.zeros((4, 4))
    np.add.at(want, (labels, pred), 1)
    for normalize, norm in (("no_norm", 1.0), ("target", want.sum(1, keepdims=True)),
                            ("prediction", want.sum(0, keepdims=True)), ("all", want.sum())):  # fmt: skip
        cm = nn.ConfusionMatrix(4, normalize)
        cm.update(Tensor(logits), Tensor(labels))
        np.testing.assert_allclose(cm.eval(), np.nan_to_num(want / norm), rtol=1e-12)
    binary = nn.ConfusionMatrix(2, threshold=0.3)
    binary.update(Tensor(np.array([0.2, 0.3, 0.9], np.float32)), Tensor(np.array([0, 1, 0])))
    np.testing.assert_array_equal(binary.eval(), [[1, 1], [0, 1]])


def test_metric_errors():
    with pytest.raises(ValueError, match="'Fbeta'.*'beta'"):
        nn.Fbeta(0)
    with pytest.raises(RuntimeError, match="'F1'"):
        nn.F1().eval()
    with pytest.raises(ValueError, match="'ConfusionMatrix'.*'normalize'"):
        nn.ConfusionMatrix(2, "rows")
    with pytest.raises(TypeError, match="'ConfusionMatrix'.*'threshold'"):
        nn.ConfusionMatrix(2, threshold=1)
    with pytest.raises(ValueError, match="'Dice.update'"):
        nn.Dice().update(Tensor(np.ones((2, 3))), Tensor(np.ones((2, 2))))


# -- optimizers ------------------------------------------------------------------------------------------


def _np_adamax(w, grads, lr=0.01, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = g + wd * w
        m = b1 * m + (1 - b1) * g
        v = np.maximum(b2 * v, np.abs(g))
        w = w - lr / (1 - b1**t) * m / (v + eps)
    return w


def _np_adadelta(w, grads, lr=0.5, rho=0.9, eps=1e-6, wd=0.0):
    a, u = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        g = g + wd * w
        a = rho * a + (1 - rho) * g * g
        upd = np.sqrt(u + eps) * g / np.sqrt(a + eps)
        u = rho * u + (1 - rho) * upd * upd
        w = w - lr * upd
    return w


def _np_rprop(w, grads, lr=0.1, etas=(0.5, 1.2), sizes=(1e-6, 50.0), wd=0.0):
    prev, step = np.zeros_like(w), np.full_like(w, lr)
    for g in grads:
        g = g + wd * w
        s = np.sign(g * prev)
        step = np.clip(step * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)), *sizes)
        g = np.where(s < 0, 0.0, g)
        w = w - np.sign(g) * step
        prev = g
    return w


def _np_asgd(w, grads, lr=0.1, lambd=1e-4, alpha=0.75, t0=1e6, wd=0.0):
    eta, mu, ax = lr, 1.0, np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = g + wd * w
        w = w * (1 - lambd * eta) - eta * g
        ax = w.copy() if mu == 1 else ax + (w - ax) * mu
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return w, ax


def _np_proximal(w, grads, accum=0.1, lr=0.05, l1=0.01, l2=0.02, wd=0.0):
    h = np.full_like(w, accum)
    for g in grads:
        g = g + wd * w
        h = h + g * g
        v = w - lr * g / np.sqrt(h)
        w = np.sign(v) / (1 + lr * l2) * np.maximum(np.abs(v) - lr * l1, 0)
    return w


def _np_ftrl(w, grads, accum=0.1, lr=0.05, p=-0.5, l1=0.01, l2=0.02, wd=0.0):
    n, z = np.full_like(w, accum), np.zeros_like(w)
    for g in grads:
        g = g + wd * w
        n2 = n + g * g
        z = z + g - (n2 ** (-p) - n ** (-p)) / lr * w
        w = np.where(np.abs(z) > l1, (np.sign(z) * l1 - z) / (n2 ** (-p) / lr + 2 * l2), 0.0)
        n = n2
    return w


OPTIMIZERS = [
    ("AdaMax", lambda ps: nn.AdaMax(ps, learning_rate=0.01, weight_decay=0.1), lambda w, g: _np_adamax(w, g, wd=0.1)),
    ("Adadelta", lambda ps: nn.Adadelta(ps, learning_rate=0.5), _np_adadelta),
    ("Rprop", lambda ps: nn.Rprop(ps, weight_decay=0.05), lambda w, g: _np_rprop(w, g, wd=0.05)),
    ("ASGD", lambda ps: nn.ASGD(ps, lambd=0.01, t0=1.0), lambda w, g: _np_asgd(w, g, lambd=0.01, t0=1.0)[0]),
    ("ProximalAdagrad", lambda ps: nn.ProximalAdagrad(ps, learning_rate=0.05, l1=0.01, l2=0.02), _np_proximal),
    ("FTRL", lambda ps: nn.FTRL(ps, learning_rate=0.05, l1=0.01, l2=0.02), _np_ftrl),
]


def _grads(rng, shape, flip=True):
    g = [rng.standard_normal(shape) for _ in range(3)]
    if flip:
        g[1] = -g[0] * 0.5  # sign flips for Rprop
    return g


@pytest.mark.parametrize("name, make, ref", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizers_match_numpy_formula_over_three_steps(name, make, ref, rng):
    w0 = rng.standard_normal((3, 4))
    grads = _grads(rng, (3, 4))
    p = Parameter(Tensor(w0.copy()), "w")
    opt = make([p])
    for g in grads:
        opt((Tensor(g),))
    np.testing.assert_allclose(p.asnumpy(), ref(w0, grads), rtol=1e-6, atol=1e-9)  # lr: a float32 Parameter
    assert int(opt.global_step.asnumpy()) == 3


def test_asgd_averages_and_optimizers_run_in_a_jitted_training_step(rng):
    w0, grads = rng.standard_normal(5), _grads(rng, 5)
    p = Parameter(Tensor(w0.copy()), "w")
    opt = nn.ASGD([p], lambd=0.01, t0=1.0)
    for g in grads:
        opt((Tensor(g),))
    np.testing.assert_allclose(opt.ax[0].asnumpy(), _np_asgd(w0, grads, lambd=0.01, t0=1.0)[1], rtol=1e-6)

    def run(make, jit):
        net = nn.Dense(4, 3)
        net.weight.set_data(Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), make(net.trainable_params()))
        fn = opforge.jit(step) if jit else step
        x, y = Tensor(np.ones((2, 4), np.float32)), Tensor(np.zeros((2, 3), np.float32))
        return [float(fn(x, y).asnumpy()) for _ in range(3)], net.weight.asnumpy()

    for make in (lambda ps: nn.Rprop(ps), lambda ps: nn.AdaMax(ps, 0.05), lambda ps: nn.FTRL(ps, learning_rate=0.1)):
        (eager_losses, eager_w), (jit_losses, jit_w) = run(make, False), run(make, True)
        np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-5)
        np.testing.assert_allclose(jit_w, eager_w, rtol=1e-5, atol=1e-7)


def test_optimizer_dynamic_learning_rate(rng):
    w0, grads = rng.standard_normal(4), _grads(rng, 4, flip=False)
    p = Parameter(Tensor(w0.copy()), "w")
    opt = nn.Adadelta([p], learning_rate=[0.5, 0.2, 0.1])
    for g in grads:
        opt((Tensor(g),))
    w, a, u = w0, np.zeros(4), np.zeros(4)
    for lr, g in zip((0.5, 0.2, 0.1), grads):
        a = 0.9 * a + 0.1 * g * g
        upd = np.sqrt(u + 1e-6) * g / np.sqrt(a + 1e-6)
        u = 0.9 * u + 0.1 * upd * upd
        w = w - lr * upd
    np.testing.assert_allclose(p.asnumpy(), w, rtol=1e-6)


def test_lars_scales_gradients_of_the_wrapped_optimizer(rng):
    w0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(3)
    grads = [(rng.standard_normal((3, 4)), rng.standard_normal(3)) for _ in range(3)]
    w, b = Parameter(Tensor(w0.copy()), "weight"), Parameter(Tensor(b0.copy()), "bias")
    inner = nn.Momentum([w, b], learning_rate=0.1, momentum=0.9, weight_decay=0.01)
    lars = nn.LARS(inner, epsilon=1e-8, coefficient=0.02)
    assert lars.parameters == inner.parameters and inner.weight_decay == 0.0
    for gw, gb in grads:
        lars((Tensor(gw), Tensor(gb)))
    ww, bb, mw, mb = w0, b0, np.zeros_like(w0), np.zeros_like(b0)
    for gw, gb in grads:
        wn, gn = np.linalg.norm(ww), np.linalg.norm(gw)
        gw = 0.02 * wn / (gn + 0.01 * wn + 1e-8) * (gw + 0.01 * ww)  # the bias is filtered out: unchanged
        mw, mb = 0.9 * mw + gw, 0.9 * mb + gb
        ww, bb = ww - 0.1 * mw, bb - 0.1 * mb
    np.testing.assert_allclose(w.asnumpy(), ww, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(b.asnumpy(), bb, rtol=1e-6)
    clipped = nn.LARS(nn.SGD([Parameter(Tensor(w0.copy()), "w2")], learning_rate=0.1), coefficient=0.5, use_clip=True)
    clipped((Tensor(grads[0][0]),))
    ratio = min(0.5 * np.linalg.norm(w0) / (np.linalg.norm(grads[0][0]) + 1e-5) / 0.1, 1.0)
    np.testing.assert_allclose(clipped.parameters[0].asnumpy(), w0 - 0.1 * ratio * grads[0][0], rtol=1e-6, atol=1e-8)


def test_optimizer_bad_arguments_name_the_optimizer_and_argument():
    p = [Parameter(Tensor(np.ones(2)), "w")]
    with pytest.raises(ValueError, match="'AdaMax'.*'beta1'"):
        nn.AdaMax(p, beta1=1.0)
    with pytest.raises(ValueError, match="'Adadelta'.*'rho'"):
        nn.Adadelta(p, rho=1.5)
    with pytest.raises(TypeError, match="'Rprop'.*'etas'"):
        nn.Rprop(p, etas=[0.5, 1.2])
    with pytest.raises(ValueError, match="'Rprop'.*'etas'"):
        nn.Rprop(p, etas=(0.5, 0.9))
    with pytest.raises(ValueError, match="'Rprop'.*'step_sizes'"):
        nn.Rprop(p, step_sizes=(1.0, 0.1))
    with pytest.raises(TypeError, match="'ASGD'.*'t0'"):
        nn.ASGD(p, t0=10)
    with pytest.raises(ValueError, match="'ProximalAdagrad'.*'l1'"):
        nn.ProximalAdagrad(p, l1=-1.0)
    with pytest.raises(ValueError, match="'FTRL'.*'lr_power'"):
        nn.FTRL(p, lr_power=0.5)
    with pytest.raises(TypeError, match="'LARS'.*'optimizer'"):
        nn.LARS(p)
    with pytest.raises(TypeError, match="'LARS'.*'coefficient'"):
        nn.LARS(nn.SGD(p), coefficient=1)


def test_rrelu_draws_slopes_within_bounds_per_call():
    x = Tensor(np.array([[-1.0, 4.0], [2.0, 0.0]], np.float32))
    r = nn.RReLU()
    out = r(x).asnumpy()
    assert out[0, 1] == 4.0 and out[1, 0] == 2.0 and out[1, 1] == 0.0
    assert -1 / 3 <= out[0, 0] <= -1 / 8
    neg = Tensor(-np.ones(2000, np.float32))
    a, b = r(neg).asnumpy(), r(neg).asnumpy()
    assert not np.array_equal(a, b) and a.min() >= -1 / 3 and a.max() <= -1 / 8
    assert abs(a.mean() + (1 / 8 + 1 / 3) / 2) < 0.01
    opforge.set_seed(5)
    first = r(neg).asnumpy()
    opforge.set_seed(5)
    np.testing.assert_array_equal(r(neg).asnumpy(), first)
    with pytest.raises(ValueError, match="RReLU.*lower"):
        nn.RReLU(0.5, 0.1)
    with pytest.raises(TypeError, match="RReLU.*upper"):
        nn.RReLU(0.1, "a")
