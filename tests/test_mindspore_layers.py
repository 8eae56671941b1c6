"""The layers and APIs MindSpore model-zoo networks are written with: padding (nn.Pad, ops.pad), ReLU6,
Embedding, Identity, the initializers and their names, Parameter.data, Cell.init_parameters_data,
ops.broadcast_to and opforge.numpy (against NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
import opforge.numpy as mnp
from opforge import nn, ops
from opforge.common.initializer import (
    HeNormal,
    HeUniform,
    Normal,
    One,
    TruncatedNormal,
    Uniform,
    XavierNormal,
    XavierUniform,
    Zero,
    initializer,
)
from opforge.testing import numeric_grad


def _t(a):
    return opforge.Tensor(np.asarray(a))


@pytest.mark.parametrize(
    "mode, np_mode", [("CONSTANT", "constant"), ("REFLECT", "reflect"), ("SYMMETRIC", "symmetric")]
)
def test_nn_pad_matches_numpy_and_differentiates(mode, np_mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float64)
    paddings = ((0, 0), (1, 2), (2, 1))
    pad = nn.Pad(paddings, mode)
    np.testing.assert_array_equal(pad(_t(x)).asnumpy(), np.pad(x, paddings, np_mode))
    w = rng.standard_normal(np.pad(x, paddings).shape)
    g = opforge.grad(lambda a: (pad(a) * _t(w)).sum())(_t(x)).asnumpy()
    np.testing.assert_allclose(g, numeric_grad(lambda a: float((np.pad(a, paddings, np_mode) * w).sum()), x), atol=1e-6)


def test_ops_pad_modes_and_value():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(ops.pad(_t(x), (1, 2)).asnumpy(), np.pad(x, ((0, 0), (1, 2))))
    np.testing.assert_array_equal(
        ops.pad(_t(x), (1, 2, 0, 1), value=7.0).asnumpy(), np.pad(x, ((0, 1), (1, 2)), constant_values=7)
    )
    np.testing.assert_array_equal(
        ops.pad(_t(x), (2, 1), mode="replicate").asnumpy(), np.pad(x, ((0, 0), (2, 1)), "edge")
    )
    for value in (-np.inf, np.nan):  # (were NaN inside too: the fill was (1 - inside) * value)
        np.testing.assert_array_equal(
            ops.pad(_t(x), (1, 0, 1, 1), value=value).asnumpy(), np.pad(x, ((1, 1), (1, 0)), constant_values=value)
        )
    with pytest.raises(ValueError, match="'pad'.*mode 'reflect' pads dim 1 of size 4 by at most 3"):
        ops.pad(_t(x), (4, 0), mode="reflect")
    with pytest.raises(ValueError, match="'mode' must be one of"):
        ops.pad(_t(x), (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="For 'Pad', the 'mode'"):
        nn.Pad(((1, 1),), "EDGE")


def test_relu6_cell_and_activation_name():
    x = _t(np.array([-2.0, 0.5, 7.0], np.float32))
    np.testing.assert_array_equal(nn.ReLU6()(x).asnumpy(), [0.0, 0.5, 6.0])
    dense = nn.Dense(3, 2, activation="relu6")
    assert isinstance(dense.activation, nn.ReLU6)
    np.testing.assert_array_equal(ops.relu6(x).asnumpy(), [0.0, 0.5, 6.0])


def test_embedding_gathers_rows_and_trains_them():
    emb = nn.Embedding(10, 4, padding_idx=0)
    table = emb.embedding_table.asnumpy()
    assert np.all(table[0] == 0)
    ids = np.array([[1, 0], [3, 9]], np.int32)
    np.testing.assert_array_equal(emb(_t(ids)).asnumpy(), table[ids])
    onehot = nn.Embedding(10, 4, use_one_hot=True)
    np.testing.assert_allclose(onehot(_t(ids)).asnumpy(), onehot.embedding_table.asnumpy()[ids], rtol=1e-6)
    grad = opforge.grad(lambda: emb(_t(ids)).sum(), None, emb.trainable_params())()[0].asnumpy()
    expected = np.zeros((10, 4), np.float32)
    np.add.at(expected, ids.reshape(-1), 1.0)
    np.testing.assert_array_equal(grad, expected)
    with pytest.raises(TypeError, match="'Embedding'.*int32 or int64"):
        emb(_t(np.zeros((2,), np.float32)))
    with pytest.raises(ValueError, match="'vocab_size'"):
        nn.Embedding(0, 4)


def test_identity_parameter_data_and_init_parameters_data():
    x = _t(np.ones((2,), np.float32))
    assert nn.Identity()(x) is x
    net = nn.Dense(3, 2)
    assert net.weight.data is net.weight and net.weight.data.shape == (2, 3)
    assert set(net.init_parameters_data()) == {"weight", "bias"}


@pytest.mark.parametrize(
    "init, check",
    [
        (TruncatedNormal(0.02), lambda a: abs(a.std() - 0.02) < 0.003 and np.abs(a).max() <= 2.0),
        (TruncatedNormal(1.0, a=-0.5, b=0.5), lambda a: np.abs(a).max() <= 0.5),
        (Normal(0.5, 1.0), lambda a: abs(a.mean() - 1.0) < 0.05 and abs(a.std() - 0.5) < 0.05),
        (Uniform(0.3), lambda a: np.abs(a).max() <= 0.3 and a.std() > 0.15),
        (XavierUniform(), lambda a: np.abs(a).max() <= np.sqrt(6.0 / (200 + 100))),
        (XavierNormal(), lambda a: abs(a.std() - np.sqrt(2.0 / 300)) < 0.01),
        (HeUniform(), lambda a: np.abs(a).max() <= np.sqrt(6.0 / 100) * 1.0001),
        (HeNormal(), lambda a: abs(a.std() - np.sqrt(2.0 / 100)) < 0.01),
        (One(), lambda a: np.all(a == 1)),
        (Zero(), lambda a: np.all(a == 0)),
    ],
    ids=lambda v: type(v).__name__ if not callable(v) or isinstance(v, object) else "",
)
def test_initializers_draw_what_they_say(init, check):
    nn.set_seed(0)
    a = initializer(init, (200, 100), opforge.float32).asnumpy()
    assert a.shape == (200, 100) and a.dtype == np.float32
    assert check(a)


@pytest.mark.parametrize(
    "name", ["truncatedNormal", "truncated_normal", "xavier_normal", "XAVIER_UNIFORM", "he_normal"]
)
def test_initializer_names(name):
    assert initializer(name, (4, 3)).shape == (4, 3)
    assert nn.Dense(3, 4, weight_init=name).weight.shape == (4, 3)


def test_broadcast_to_keeps_minus_one_dims():
    x = _t(np.arange(3, dtype=np.float32).reshape(1, 1, 3))
    out = ops.broadcast_to(x, (4, -1, -1))
    assert out.shape == (4, 1, 3)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(x.asnumpy(), (4, 1, 3)))


def test_opforge_numpy_against_numpy():
    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)
    t = mnp.array(a)
    assert mnp.zeros((2, 3)).dtype == opforge.float32 and mnp.zeros((2,), "int32").dtype == opforge.int32
    np.testing.assert_array_equal(mnp.ones((2, 2)).asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(mnp.full((2,), 3.5).asnumpy(), [3.5, 3.5])
    np.testing.assert_array_equal(mnp.zeros_like(t).asnumpy(), np.zeros_like(a))
    np.testing.assert_array_equal(mnp.arange(1, 7, 2).asnumpy(), np.arange(1, 7, 2))
    checks = [
        (mnp.sum(t), a.sum()), (mnp.sum(t, axis=0, keepdims=True), a.sum(0, keepdims=True)),
        (mnp.mean(t, 1), a.mean(1)), (mnp.max(t), a.max()), (mnp.min(t, 0), a.min(0)),
        (mnp.argmax(t), a.argmax()), (mnp.argmin(t, 1), a.argmin(1)), (mnp.cumsum(t), a.cumsum()),
        (mnp.transpose(t), a.T), (mnp.reshape(t, (3, 2)), a.reshape(3, 2)), (mnp.expand_dims(t, 0), a[None]),
        (mnp.concatenate((t, t), 1), np.concatenate((a, a), 1)), (mnp.stack((t, t)), np.stack((a, a))),
        (mnp.tile(t, (2, 1)), np.tile(a, (2, 1))), (mnp.flip(t, 1), np.flip(a, 1)),
        (mnp.abs(t), np.abs(a)), (mnp.exp(t), np.exp(a)), (mnp.sqrt(mnp.abs(t)), np.sqrt(np.abs(a))),
        (mnp.clip(t, -1.0, 2.0), np.clip(a, -1, 2)), (mnp.where(t > 0, t, mnp.zeros_like(t)), np.where(a > 0, a, 0)),
        (mnp.matmul(t, mnp.transpose(t)), a @ a.T), (mnp.power(mnp.abs(t), 2.0), np.abs(a) ** 2),
        (mnp.maximum(t, 0.0), np.maximum(a, 0)), (mnp.isnan(t), np.isnan(a)),
    ]  # fmt: skip
    for got, want in checks:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


# -- the activations of MindSpore's nn list ------------------------------------------------------------

_SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
_ACTIVATION_REFS = [
    (lambda: nn.SeLU(), "selu", lambda x: _SELU[1] * np.where(x > 0, x, _SELU[0] * np.expm1(np.minimum(x, 0)))),
    (lambda: nn.CELU(0.5), None, lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0) / 0.5))),
    (lambda: nn.Softsign(), "softsign", lambda x: x / (1 + np.abs(x))),
    (lambda: nn.HShrink(1.0), None, lambda x: np.where(np.abs(x) > 1.0, x, 0.0)),
    (lambda: nn.SoftShrink(), "softshrink", lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0.0)),
    (lambda: nn.Mish(), "mish", lambda x: x * np.tanh(np.logaddexp(0, x))),
    (lambda: nn.SiLU(), "silu", lambda x: x / (1 + np.exp(-x))),
    (lambda: nn.LogSigmoid(), "logsigmoid", lambda x: -np.logaddexp(0, -x)),
    (lambda: nn.Hardtanh(-0.5, 2.0), None, lambda x: np.clip(x, -0.5, 2.0)),
    (lambda: nn.Tanhshrink(), "tanhshrink", lambda x: x - np.tanh(x)),
    (lambda: nn.PReLU(), "prelu", lambda x: np.where(x > 0, x, 0.25 * x)),
]


@pytest.mark.parametrize("make, name, ref", _ACTIVATION_REFS, ids=lambda v: v if isinstance(v, str) else "")
def test_activation_cells_match_numpy_and_their_gradients(make, name, ref):
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (2, 3, 4))
    x = x[np.abs(np.abs(x) - 1.0) > 0.05]  # away from the kinks at +-1, +-0.5, 0 (and 2 for Hardtanh)
    x = x[(np.abs(np.abs(x) - 0.5) > 0.05) & (np.abs(x) > 0.05) & (np.abs(x - 2.0) > 0.05)].reshape(1, -1)
    cell = make()
    np.testing.assert_allclose(cell(_t(x)).asnumpy(), ref(x), rtol=1e-10, atol=1e-12)
    got = opforge.grad(lambda a: cell(a).sum())(_t(x)).asnumpy()
    np.testing.assert_allclose(got, numeric_grad(lambda v: ref(v).sum(), x, 1e-6), rtol=1e-6, atol=1e-8)
    if name is not None:
        assert type(nn.get_activation(name)) is type(cell)
        assert type(nn.get_activation(name.upper())) is type(cell)


def test_dense_takes_activation_names_and_prelu_learns_per_channel_slopes():
    assert isinstance(nn.Dense(3, 2, activation="relu6").activation, nn.ReLU6)
    assert isinstance(nn.Dense(3, 2, activation="mish").activation, nn.Mish)
    with pytest.raises(ValueError, match="unknown activation"):
        nn.get_activation("nope")
    prelu = nn.PReLU(3, [0.1, 0.2, 0.3])
    x = np.array([[[-1.0, 2.0]], [[-2.0, -3.0]], [[4.0, -5.0]]], np.float32)[None]  # [1, 3, 1, 2]
    np.testing.assert_allclose(prelu(_t(x)).asnumpy(), np.where(x > 0, x, np.array([0.1, 0.2, 0.3])[:, None, None] * x))
    (dw,) = opforge.grad(lambda a: prelu(a).sum(), grad_position=None, weights=prelu.trainable_params())(_t(x))
    np.testing.assert_allclose(dw.asnumpy(), [-1.0, -5.0, -5.0])
    with pytest.raises(ValueError, match="For 'PReLU', the 'w'"):
        nn.PReLU(3, [0.1, 0.2])
    with pytest.raises(ValueError, match="For 'CeLU', the 'alpha' must not be 0"):
        nn.CELU(0.0)
    with pytest.raises(ValueError, match="For 'HShrink', the 'lambd' must be >= 0"):
        ops.HShrink(lambd=-1.0)


def test_mirror_pad_primitive_spelling_and_numpy_repeat():
    x = np.arange(12.0).reshape(3, 4)
    for mode in ("REFLECT", "SYMMETRIC"):
        out = ops.MirrorPad(mode)(_t(x), _t(np.array([[1, 2], [2, 1]], np.int32)))
        np.testing.assert_array_equal(out.asnumpy(), np.pad(x, ((1, 2), (2, 1)), mode=mode.lower()))
    with pytest.raises(ValueError, match="For 'MirrorPad', the 'paddings'"):
        ops.MirrorPad()(_t(x), _t(np.array([1, 2], np.int32)))
    np.testing.assert_array_equal(mnp.repeat(_t(x), 2).asnumpy(), np.repeat(x, 2))
    np.testing.assert_array_equal(mnp.repeat(_t(x), [2, 0, 1], axis=0).asnumpy(), np.repeat(x, [2, 0, 1], axis=0))
    g = opforge.grad(lambda a: (mnp.repeat(a, 3, axis=-1) * 1.0).sum())(_t(x)).asnumpy()
    np.testing.assert_array_equal(g, np.full_like(x, 3.0))


def test_orthogonal_identity_dirac_and_fans():
    nn.set_seed(1)
    w = initializer("orthogonal", (6, 2, 2)).asnumpy().reshape(6, 4)
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(initializer("identity", (2, 3)).asnumpy(), np.eye(2, 3))
    d = initializer("dirac", (4, 2, 3, 3)).asnumpy()
    assert d.sum() == 2 and d[0, 0, 1, 1] == 1 and d[1, 1, 1, 1] == 1
    x = np.random.default_rng(0).normal(size=(1, 2, 5, 5)).astype(np.float32)
    conv = nn.Conv2d(2, 2, 3, weight_init="dirac")
    np.testing.assert_allclose(conv(_t(x)).asnumpy(), x, rtol=1e-6)  # a "same" Dirac conv passes its input
    # HeNormal's fan_in of a conv weight [out, in, kh, kw] is in * kh * kw; fan_out out * kh * kw.
    a = initializer(HeNormal(mode="fan_out", nonlinearity="relu"), (64, 16, 3, 3)).asnumpy()
    assert abs(a.std() - np.sqrt(2.0 / (64 * 9))) < 0.003


# -- model-zoo blocks ---------------------------------------------------------------------------------


class _ConvBNReLU(nn.Cell):
    """MobileNetV2's ConvBNReLU as the model zoo writes it: an explicit nn.Pad, then a 'pad' conv."""

    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        super().__init__()
        padding = (kernel_size - 1) // 2
        self.features = nn.SequentialCell(
            nn.Pad(((0, 0), (0, 0), (padding, padding), (padding, padding))),
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, pad_mode="valid", group=groups),
            nn.BatchNorm2d(out_planes),
            nn.ReLU6(),
        )

    def construct(self, x):
        return self.features(x)


class _InvertedResidual(nn.Cell):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = inp * expand_ratio
        self.use_res_connect = stride == 1 and inp == oup
        self.conv = nn.SequentialCell(
            _ConvBNReLU(inp, hidden, kernel_size=1),
            _ConvBNReLU(hidden, hidden, stride=stride, groups=hidden),
            nn.Conv2d(hidden, oup, 1, has_bias=False, weight_init="he_uniform"),
            nn.BatchNorm2d(oup),
        )

    def construct(self, x):
        out = self.conv(x)
        return x + out if self.use_res_connect else out


class _BasicBlock(nn.Cell):
    """ResNet-18's BasicBlock with the zoo's pad_mode='pad' convs and a 1x1 downsample."""

    def __init__(self, in_channel, out_channel, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, out_channel, 3, stride, pad_mode="pad", padding=1, weight_init="he_normal")
        self.bn1 = nn.BatchNorm2d(out_channel)
        self.conv2 = nn.Conv2d(out_channel, out_channel, 3, 1, pad_mode="pad", padding=1, weight_init="he_normal")
        self.bn2 = nn.BatchNorm2d(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = None
        if stride != 1 or in_channel != out_channel:
            self.down_sample = nn.SequentialCell(
                nn.Conv2d(in_channel, out_channel, 1, stride, weight_init="xavier_uniform"), nn.BatchNorm2d(out_channel)
            )

    def construct(self, x):
        identity = x if self.down_sample is None else self.down_sample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


@pytest.mark.parametrize(
    "block, shape, out_shape",
    [
        (lambda: _InvertedResidual(8, 8, 1, 2), (2, 8, 6, 6), (2, 8, 6, 6)),
        (lambda: _InvertedResidual(8, 12, 2, 3), (2, 8, 6, 6), (2, 12, 3, 3)),
        (lambda: _BasicBlock(4, 4), (2, 4, 5, 5), (2, 4, 5, 5)),
        (lambda: _BasicBlock(4, 8, 2), (2, 4, 6, 6), (2, 8, 3, 3)),
    ],
    ids=["mbv2-residual", "mbv2-stride2", "basicblock", "basicblock-downsample"],
)
def test_model_zoo_blocks_run_forward_and_backward(block, shape, out_shape):
    nn.set_seed(0)
    net = block()
    net.set_train(True)
    x = _t(np.random.default_rng(0).normal(size=shape).astype(np.float32))
    out = net(x)
    assert out.shape == out_shape and np.isfinite(out.asnumpy()).all()
    params = net.trainable_params()
    grads = opforge.grad(lambda a: (net(a) * net(a)).mean(), grad_position=None, weights=params)(x)
    assert len(grads) == len(params)
    for p, g in zip(params, grads):
        assert g.shape == p.shape and np.isfinite(g.asnumpy()).all()
    assert any(np.abs(g.asnumpy()).sum() > 0 for g in grads)
