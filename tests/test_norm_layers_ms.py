"""nn.GroupNorm and nn.InstanceNorm2d against NumPy: MindSpore's defaults, parameter names and checks, the
moving statistics of InstanceNorm2d, and gradients (input and parameters) against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn


def _norm_ref(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def _group_norm_ref(x, groups, gamma, beta, eps=1e-5):
    n, c = x.shape[:2]
    y = _norm_ref(x.reshape(n, groups, -1), 2, eps).reshape(x.shape)
    shape = (-1,) + (1,) * (x.ndim - 2)
    return y * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("shape", [(2, 6, 3, 4), (3, 6, 5), (2, 6)])
def test_group_norm_matches_numpy_on_any_rank(rng, shape):
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    gn = nn.GroupNorm(3, 6, gamma_init="normal", beta_init="normal")
    want = _group_norm_ref(x, 3, gn.gamma.asnumpy(), gn.beta.asnumpy())
    np.testing.assert_allclose(gn(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert [p.name for p in gn.trainable_params()] == ["gamma", "beta"]


def test_group_norm_defaults_affine_and_checks(rng):
    gn = nn.GroupNorm(2, 2)  # MindSpore's example: ones normalise to zeros
    assert gn.eps == 1e-5 and gn.affine
    assert np.array_equal(gn(Tensor(np.ones((1, 2, 4, 4), np.float32))).asnumpy(), np.zeros((1, 2, 4, 4)))
    fixed = nn.GroupNorm(1, 4, affine=False)
    assert fixed.trainable_params() == [] and not isinstance(fixed.gamma, opforge.Parameter)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(TypeError, match="'eps' must be a float"):
        nn.GroupNorm(2, 4, eps=1)
    with pytest.raises(TypeError, match="'affine' must be bool"):
        nn.GroupNorm(2, 4, affine=1)
    with pytest.raises(ValueError, match="'num_groups' must be at least 1"):
        nn.GroupNorm(0, 4)
    with pytest.raises(ValueError, match=r"shape \(N, 4, \*\)"):
        nn.GroupNorm(2, 4)(Tensor(np.ones((2, 3, 2), np.float32)))


def test_instance_norm2d_matches_numpy_in_train_and_eval(rng):
    x = (rng.standard_normal((4, 3, 5, 6)) * 2 - 1).astype(np.float32)
    inorm = nn.InstanceNorm2d(3, gamma_init="normal", beta_init="normal")
    g, b = inorm.gamma.asnumpy().reshape(-1, 1, 1), inorm.beta.asnumpy().reshape(-1, 1, 1)
    want = _norm_ref(x, (2, 3), 1e-5) * g + b
    np.testing.assert_allclose(inorm(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(inorm.moving_mean.asnumpy(), np.zeros(3))  # evaluation: statistics kept
    inorm.set_train()
    np.testing.assert_allclose(inorm(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    mean = x.mean((2, 3)).mean(0)
    var = x.var((2, 3), ddof=1).mean(0)
    np.testing.assert_allclose(inorm.moving_mean.asnumpy(), 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(inorm.moving_variance.asnumpy(), 0.9 + 0.1 * var, rtol=1e-5)
    assert [p.name for p in inorm.get_parameters()] == ["mean", "variance", "gamma", "beta"]
    assert [p.name for p in inorm.trainable_params()] == ["gamma", "beta"]
    assert nn.InstanceNorm2d(3, affine=False).trainable_params() == []


def test_instance_norm2d_checks():
    with pytest.raises(TypeError, match="'momentum' must be a float"):
        nn.InstanceNorm2d(3, momentum=1)
    with pytest.raises(ValueError, match="'momentum' must be in"):
        nn.InstanceNorm2d(3, momentum=1.5)
    with pytest.raises(TypeError, match="'num_features' must be an int"):
        nn.InstanceNorm2d(3.0)
    with pytest.raises(ValueError, match=r"\(N, 3, H, W\)"):
        nn.InstanceNorm2d(3)(Tensor(np.ones((2, 3, 4), np.float32)))


def _check_gradients(cell, x, rng):
    """The gradients of sum(cell(x) * w) for x and every trainable parameter against central differences."""
    w = Tensor(rng.standard_normal(x.shape))
    loss = lambda t: (cell(t) * w).sum()  # noqa: E731
    params = cell.trainable_params()
    gx, gparams = opforge.grad(loss, grad_position=0, weights=params)(Tensor(x))
    eps = 1e-6
    for name, base, got, setter in [("x", x, gx, None)] + [
        (p.name, p.asnumpy(), g, p.set_data) for p, g in zip(params, gparams)
    ]:
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                if setter is None:
                    value = loss(Tensor(shifted))
                else:
                    setter(shifted)
                    value = loss(Tensor(x))
                numeric[idx] += sign * float(value.asnumpy()) / (2 * eps)
        if setter is not None:
            setter(base)
        np.testing.assert_allclose(got.asnumpy(), numeric, rtol=1e-5, atol=1e-7, err_msg=name)


def test_group_norm_gradients_match_finite_differences(rng):
    cell = nn.GroupNorm(2, 4, gamma_init="normal", beta_init="normal", dtype=opforge.float64)
    _check_gradients(cell, rng.standard_normal((2, 4, 3)), rng)


def test_instance_norm2d_gradients_match_finite_differences(rng):
    cell = nn.InstanceNorm2d(2, gamma_init="normal", beta_init="normal", dtype=opforge.float64)
    _check_gradients(cell, rng.standard_normal((2, 2, 2, 3)), rng)
