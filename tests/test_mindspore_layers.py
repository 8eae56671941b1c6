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


def _t(a):
    return opforge.Tensor(np.asarray(a))


def _numeric_grad(f, x, eps=1e-3):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


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
    np.testing.assert_allclose(
        g, _numeric_grad(lambda a: float((np.pad(a, paddings, np_mode) * w).sum()), x), atol=1e-6
    )


def test_ops_pad_modes_and_value():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(ops.pad(_t(x), (1, 2)).asnumpy(), np.pad(x, ((0, 0), (1, 2))))
    np.testing.assert_array_equal(
        ops.pad(_t(x), (1, 2, 0, 1), value=7.0).asnumpy(), np.pad(x, ((0, 1), (1, 2)), constant_values=7)
    )
    np.testing.assert_array_equal(
        ops.pad(_t(x), (2, 1), mode="replicate").asnumpy(), np.pad(x, ((0, 0), (2, 1)), "edge")
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
