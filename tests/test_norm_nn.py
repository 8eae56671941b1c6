"""The normalisation, dropout and loss Cells (nn.BatchNorm1d/2d, nn.LayerNorm, nn.Dropout,
nn.SmoothL1Loss) and the BatchNorm / Dropout primitives' stateful and seeded behaviour, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, nn, ops


def T(a):
    return Tensor(np.asarray(a, np.float32))


def _bn_numpy(x, gamma, beta, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) + beta.reshape(shape)


def test_batchnorm2d_train_eval_and_moving_statistics(rng):
    x = (rng.standard_normal((8, 3, 4, 4)) * 2 + 1).astype(np.float32)
    bn = nn.BatchNorm2d(3, momentum=0.8)
    ones, zeros = np.ones(3), np.zeros(3)
    np.testing.assert_allclose(bn(T(x)).asnumpy(), _bn_numpy(x, ones, zeros, zeros, ones, 1e-5), atol=1e-5)
    assert np.array_equal(bn.moving_mean.asnumpy(), zeros)  # evaluation mode: nothing updated
    bn.set_train()
    m, v = x.mean((0, 2, 3)), x.var((0, 2, 3))
    np.testing.assert_allclose(bn(T(x)).asnumpy(), _bn_numpy(x, ones, zeros, m, v, 1e-5), atol=1e-4)
    # MindSpore's nn momentum: moving = momentum * moving + (1 - momentum) * batch (unbiased variance).
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.2 * m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), 0.8 + 0.2 * v * 128 / 127, rtol=1e-5)
    bn.set_train(False)
    moving_m, moving_v = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    np.testing.assert_allclose(bn(T(x)).asnumpy(), _bn_numpy(x, ones, zeros, moving_m, moving_v, 1e-5), atol=1e-5)
    assert [p.name for p in bn.trainable_params()] == ["gamma", "beta"]


def test_batchnorm_use_batch_statistics_and_bad_input(rng):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    bn = nn.BatchNorm1d(4, use_batch_statistics=True)  # batch statistics even in evaluation mode
    np.testing.assert_allclose(
        bn(T(x)).asnumpy(), _bn_numpy(x, np.ones(4), np.zeros(4), x.mean(0), x.var(0), 1e-5), atol=1e-5
    )
    with pytest.raises(ValueError, match="BatchNorm1d.*rank 2 or 3"):
        bn(T(np.ones((2, 4, 3, 3))))
    with pytest.raises(ValueError, match="BatchNorm2d.*rank 4"):
        nn.BatchNorm2d(4)(T(x))
    with pytest.raises(ValueError, match="'scale' must have shape \\[4\\]"):
        nn.BatchNorm1d(3)(T(x))
    with pytest.raises(ValueError, match="num_features"):
        nn.BatchNorm2d(0)
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm2d(3, momentum=1.5)


def test_batchnorm_primitive_training_needs_parameters_and_updates_them(rng):
    x = rng.standard_normal((5, 2)).astype(np.float32)
    c = T(np.ones(2))
    with pytest.raises(TypeError, match="'mean' is updated in place.*must be a Parameter"):
        ops.BatchNorm(is_training=True)(T(x), c, c, T(np.zeros(2)), T(np.ones(2)))
    mean, var = Parameter(np.zeros(2, np.float32), "m"), Parameter(np.ones(2, np.float32), "v")
    y, bm, bv, r1, r2 = ops.BatchNorm(is_training=True, momentum=0.25)(T(x), c, c, mean, var)
    np.testing.assert_allclose(bm.asnumpy(), x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(r2.asnumpy(), x.var(0), rtol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), 0.25 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), 0.75 + 0.25 * x.var(0, ddof=1), rtol=1e-5)


def test_training_step_through_batchnorm_and_dropout(rng):
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    net = nn.SequentialCell(nn.BatchNorm1d(5), nn.Dense(5, 8), nn.ReLU(), nn.Dropout(0.9, seed=1), nn.Dense(8, 2))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.05))
    step.set_train()
    losses = [float(step(T(x), T(y)).asnumpy()) for _ in range(30)]
    assert losses[-1] < losses[0]
    assert not np.array_equal(net[0].moving_mean.asnumpy(), np.zeros(5))  # updated in each forward pass


def test_layernorm_cell(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ln = nn.LayerNorm((3, 4), begin_norm_axis=1, begin_params_axis=1)
    m, v = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(ln(T(x)).asnumpy(), (x - m) / np.sqrt(v + 1e-7), atol=1e-5)
    g = opforge.grad(lambda t: (ln(t) * T(x)).sum())(T(x))
    assert g.shape == x.shape
    with pytest.raises(ValueError, match="'gamma' must have shape"):
        nn.LayerNorm((5,))(T(x))


def test_dropout_primitive_is_seeded_and_cell_steps(rng):
    x = T(np.ones((64, 64)))
    a = ops.Dropout(0.6, 3, 4)(x)[1].asnumpy()
    b = ops.Dropout(0.6, 3, 4)(x)[1].asnumpy()
    c = ops.Dropout(0.6, 3, 5)(x)[1].asnumpy()
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert 0.55 < a.mean() < 0.65
    cell, twin = nn.Dropout(0.5, seed=9).set_train(), nn.Dropout(0.5, seed=9).set_train()
    first, second = cell(x).asnumpy(), cell(x).asnumpy()
    assert not np.array_equal(first, second)  # a new mask every step
    assert np.array_equal(twin(x).asnumpy(), first)  # the same seed, the same sequence


def test_smooth_l1_loss_cell():
    loss = nn.SmoothL1Loss(beta=1.0, reduction="mean")
    out = loss(T([0.0, 0.5, 3.0]), T([0.0, 0.0, 0.0]))
    np.testing.assert_allclose(out.asnumpy(), (0.0 + 0.125 + 2.5) / 3, rtol=1e-6)
    assert nn.SmoothL1Loss()(T([1.0, 4.0]), T([0.0, 0.0])).shape == (2,)


def test_bce_with_logits_and_nll_loss_cells(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = (rng.uniform(size=(4, 3)) < 0.5).astype(np.float32)
    expected = np.mean((1 - y) * x + np.logaddexp(0, -x))
    np.testing.assert_allclose(nn.BCEWithLogitsLoss()(T(x), T(y)).asnumpy(), expected, rtol=1e-5)
    pw = T([2.0, 1.0, 0.5])
    weighted = nn.BCEWithLogitsLoss(reduction="sum", pos_weight=pw)(T(x), T(y)).asnumpy()
    p = np.array([2.0, 1.0, 0.5])
    np.testing.assert_allclose(weighted, np.sum((1 - y) * x + (1 + (p - 1) * y) * np.logaddexp(0, -x)), rtol=1e-5)
    logp = np.log(np.full((4, 3), 1 / 3, np.float32))
    labels = Tensor(np.array([0, 2, 1, -100], np.int32))
    np.testing.assert_allclose(nn.NLLLoss()(T(logp), labels).asnumpy(), np.log(3), rtol=1e-5)
    g = opforge.grad(lambda t: nn.NLLLoss(reduction="sum")(t, labels))(T(logp)).asnumpy()
    want = np.zeros((4, 3))
    want[[0, 1, 2], [0, 2, 1]] = -1
    np.testing.assert_array_equal(g, want)
