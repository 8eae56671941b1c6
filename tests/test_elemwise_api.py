"""The MindSpore surface of the second batch of elementwise operators: functional names (ops.abs,
ops.pow, ops.div, ...), Tensor methods and Python operators, the ops built from primitives
(leaky_relu, clip_by_value, gelu(approximate="none"), softplus(beta)), and integer division by zero.
The kernels themselves are swept by test_op_sweep.py (records in op_db_elemwise.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge import dtype as mstype


def _np(t):
    return t.asnumpy()


X = np.array([[-2.5, -0.5, 0.0], [0.5, 1.5, 3.0]], np.float32)
Y = np.array([[2.0, -1.5, 1.0], [-2.0, 0.75, 2.0]], np.float32)


def test_functional_names():
    x, y = Tensor(X), Tensor(Y)
    assert np.array_equal(_np(ops.abs(x)), np.abs(X))
    assert np.array_equal(_np(ops.floor(x)), np.floor(X))
    assert np.array_equal(_np(ops.ceil(x)), np.ceil(X))
    assert np.array_equal(_np(ops.round(x)), np.rint(X))
    assert np.array_equal(_np(ops.sign(x)), np.sign(X))
    np.testing.assert_allclose(_np(ops.erf(x)), [[math.erf(v) for v in row] for row in X], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_np(ops.pow(ops.abs(x), y)), np.abs(X) ** Y, rtol=1e-6)
    np.testing.assert_allclose(_np(ops.atan2(x, y)), np.arctan2(X, Y), rtol=1e-6)
    np.testing.assert_allclose(_np(ops.div(x, y)), X / Y, rtol=1e-6)
    assert np.array_equal(_np(ops.floor_div(x, y)), np.floor(X / Y))
    assert np.array_equal(_np(ops.floor_divide(x, y)), np.floor(X / Y))
    np.testing.assert_allclose(_np(ops.floor_mod(x, y)), np.mod(X, Y), atol=1e-6)
    np.testing.assert_allclose(_np(ops.remainder(x, y)), np.mod(X, Y), atol=1e-6)
    np.testing.assert_allclose(_np(ops.fmod(x, y)), np.fmod(X, Y), atol=1e-6)
    for name, ref in (
        ("greater", np.greater), ("gt", np.greater), ("greater_equal", np.greater_equal), ("ge", np.greater_equal),
        ("less", np.less), ("lt", np.less), ("less_equal", np.less_equal), ("le", np.less_equal),
        ("not_equal", np.not_equal), ("ne", np.not_equal),
    ):  # fmt: skip
        out = getattr(ops, name)(x, y)
        assert out.dtype is mstype.bool_ and np.array_equal(_np(out), ref(X, Y)), name
    b = Tensor(X > 0)
    assert np.array_equal(_np(ops.logical_not(b)), ~(X > 0))
    assert np.array_equal(_np(ops.logical_and(b, Tensor(Y > 0))), (X > 0) & (Y > 0))
    assert np.array_equal(_np(ops.logical_or(b, False)), X > 0)
    nan = Tensor(np.array([np.nan, np.inf, 1.0], np.float32))
    assert _np(ops.isnan(nan)).tolist() == [True, False, False]
    assert _np(ops.isfinite(nan)).tolist() == [False, False, True]
    hs = np.clip((X + 3) / 6, 0, 1)
    np.testing.assert_allclose(_np(ops.hardsigmoid(x)), hs, rtol=1e-6)
    np.testing.assert_allclose(_np(ops.hardswish(x)), X * hs, rtol=1e-6)


def test_gelu_softplus_leaky_relu():
    x = Tensor(X)
    tanh_gelu = 0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X**3)))
    np.testing.assert_allclose(_np(ops.gelu(x)), tanh_gelu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(ops.GeLU()(x)), tanh_gelu, rtol=1e-5, atol=1e-6)
    exact = np.array([[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in row] for row in X])
    np.testing.assert_allclose(_np(ops.gelu(x, approximate="none")), exact, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="For 'gelu', the 'approximate'"):
        ops.gelu(x, approximate="erf")
    np.testing.assert_allclose(_np(ops.softplus(x)), np.logaddexp(0, X), rtol=1e-6)
    np.testing.assert_allclose(_np(ops.softplus(x, beta=2)), np.logaddexp(0, 2 * X) / 2, rtol=1e-6)
    big = Tensor(np.array([100.0, -100.0], np.float32))
    assert _np(ops.softplus(big)).tolist() == [100.0, pytest.approx(math.exp(-100), rel=1e-5)]
    with pytest.raises(ValueError, match="For 'softplus', the 'beta'"):
        ops.softplus(x, beta=0)
    np.testing.assert_allclose(_np(ops.leaky_relu(x)), np.where(X > 0, X, 0.2 * X), rtol=1e-6)
    np.testing.assert_allclose(_np(ops.leaky_relu(x, alpha=2.0)), np.minimum(2 * X, X), rtol=1e-6)
    with pytest.raises(TypeError, match="For 'leaky_relu', the 'alpha'"):
        ops.leaky_relu(x, alpha="0.1")


def test_leaky_relu_gradient():
    x = Tensor(np.array([-2.0, -0.5, 0.5, 3.0], np.float64))
    g = opforge.grad(lambda t: ops.ReduceSum()(ops.leaky_relu(t, 0.1)))(x)
    assert _np(g).tolist() == [0.1, 0.1, 1.0, 1.0]


def test_clip_by_value():
    x = Tensor(X)
    assert np.array_equal(_np(ops.clip_by_value(x, -1.0, 1.0)), np.clip(X, -1, 1))
    assert np.array_equal(_np(ops.clip_by_value(x, clip_value_max=0.5)), np.minimum(X, 0.5))
    assert np.array_equal(_np(ops.clip_by_value(x, Tensor(np.float32(0.0)))), np.maximum(X, 0))
    assert np.array_equal(_np(ops.clamp(x, 1.0, 0.0)), np.zeros_like(X))  # min > max: max, as MindSpore
    i = Tensor(np.array([-5, 0, 5], np.int32))
    out = ops.clip_by_value(i, -1.5, 2.5)  # float bounds promote; the result keeps x's dtype
    assert out.dtype is mstype.int32 and _np(out).tolist() == [-1, 0, 2]
    a, b = ops.clip_by_value([x, i], -1, 1)
    assert np.array_equal(_np(a), np.clip(X, -1, 1)) and _np(b).tolist() == [-1, 0, 1]
    with pytest.raises(TypeError, match="For 'clip_by_value', the 'x'"):
        ops.clip_by_value(Tensor(np.array([True])), 0, 1)
    assert np.array_equal(_np(x.clip(-1.0, 1.0)), np.clip(X, -1, 1))
    with pytest.raises(ValueError, match="For 'clip_by_value'"):
        ops.clip_by_value(x)


def test_div_rounding_modes():
    a = Tensor(np.array([7, -7, 7, -7], np.int32))
    b = Tensor(np.array([2, 2, -2, -2], np.int32))
    assert _np(ops.div(a, b)).tolist() == [3, -3, -3, 3]  # integer Div truncates (MindSpore's CPU)
    assert _np(ops.div(a, b, rounding_mode="floor")).tolist() == [3, -4, -4, 3]
    assert _np(ops.divide(a, b, rounding_mode="trunc")).tolist() == [3, -3, -3, 3]
    x = Tensor(np.array([7.0, -7.0, 7.0, -7.0], np.float32))
    y = Tensor(np.array([2.0, 2.0, -2.0, -2.0], np.float32))
    assert _np(ops.div(x, y, rounding_mode="trunc")).tolist() == [3.0, -3.0, -3.0, 3.0]
    assert _np(ops.div(x, y, rounding_mode="floor")).tolist() == [3.0, -4.0, -4.0, 3.0]
    assert _np(x.div(y, rounding_mode="floor")).tolist() == [3.0, -4.0, -4.0, 3.0]
    assert _np(a.div(b)).tolist() == [3, -3, -3, 3]
    with pytest.raises(ValueError, match="For 'div', the 'rounding_mode'"):
        ops.div(x, y, rounding_mode="round")


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_integer_division_by_zero_does_not_crash(dtype):
    info = np.iinfo(dtype)
    x = Tensor(np.array([5, 0, info.max, info.min], dtype))
    zero = Tensor(np.zeros(4, dtype))
    lo, hi = int(info.min), int(info.max)
    expected_div = [hi, 0, hi, 0 if lo == 0 else lo]
    assert _np(ops.Div()(x, zero)).tolist() == expected_div
    assert _np(ops.FloorDiv()(x, zero)).tolist() == expected_div
    assert _np(ops.Mod()(x, zero)).tolist() == [0, 0, 0, 0]
    assert _np(ops.FloorMod()(x, zero)).tolist() == [0, 0, 0, 0]
    if lo < 0:  # INT_MIN / -1 overflows: it wraps to INT_MIN (C would trap)
        m, neg = Tensor(np.array([lo], dtype)), Tensor(np.array([-1], dtype))
        assert _np(ops.Div()(m, neg)).tolist() == [lo]
        assert _np(ops.FloorDiv()(m, neg)).tolist() == [lo]
        assert _np(ops.Mod()(m, neg)).tolist() == [0]
        assert _np(ops.FloorMod()(m, neg)).tolist() == [0]


def test_integer_pow():
    x = Tensor(np.array([2, -2, 1, -1, -1, 3, 0], np.int32))
    y = Tensor(np.array([10, 3, -5, -3, -2, -1, 0], np.int32))
    assert _np(ops.pow(x, y)).tolist() == [1024, -8, 1, -1, 1, 0, 1]
    assert _np(ops.pow(Tensor(np.array([2], np.int8)), 7)).tolist() == [-128]  # wraps like NumPy


def test_tensor_operators():
    x, y = Tensor(X), Tensor(Y)
    np.testing.assert_allclose(_np(abs(x) ** y), np.abs(X) ** Y, rtol=1e-6)
    np.testing.assert_allclose(_np(x**2), X**2)
    np.testing.assert_allclose(_np(2.0**x), 2.0**X, rtol=1e-6)
    assert np.array_equal(_np(x // y), np.floor(X / Y))
    assert np.array_equal(_np(7.0 // y), np.floor(7.0 / Y))
    np.testing.assert_allclose(_np(x % y), np.mod(X, Y), atol=1e-6)  # Python's %: the divisor's sign
    np.testing.assert_allclose(_np(5.0 % y), np.mod(5.0, Y), atol=1e-6)
    np.testing.assert_allclose(_np(x / y), X / Y, rtol=1e-6)
    assert np.array_equal(_np(x < y), X < Y) and np.array_equal(_np(x <= y), X <= Y)
    assert np.array_equal(_np(x > y), X > Y) and np.array_equal(_np(x >= y), X >= Y)
    assert np.array_equal(_np(x != y), X != Y)
    assert np.array_equal(_np(x > 0), X > 0) and np.array_equal(_np(0 < x), X > 0)
    assert np.array_equal(_np(x < np.zeros(3, np.float32)), X < 0)
    i = Tensor(np.array([7, -7], np.int32))
    assert _np(i // 2).tolist() == [3, -4] and _np(i % 3).tolist() == [1, 2]
    # Not an operand: Python's own rule, no error.
    assert (x != None) is True  # noqa: E711
    assert (x != "a") is True
    with pytest.raises(TypeError):
        _ = x < None


def test_tensor_methods():
    x, y = Tensor(X), Tensor(Y)
    assert np.array_equal(_np(x.abs()), np.abs(X))
    np.testing.assert_allclose(_np(x.abs().pow(y)), np.abs(X) ** Y, rtol=1e-6)
    for name, ref in (("floor", np.floor), ("ceil", np.ceil), ("round", np.rint), ("sign", np.sign)):
        assert np.array_equal(_np(getattr(x, name)()), ref(X)), name
    assert _np(x.isnan()).sum() == 0 and _np(x.isfinite()).all()
    for name, ref in (
        ("greater", np.greater), ("greater_equal", np.greater_equal), ("less", np.less),
        ("less_equal", np.less_equal), ("not_equal", np.not_equal), ("gt", np.greater), ("ge", np.greater_equal),
        ("lt", np.less), ("le", np.less_equal), ("ne", np.not_equal),
    ):  # fmt: skip
        assert np.array_equal(_np(getattr(x, name)(y)), ref(X, Y)), name
    np.testing.assert_allclose(_np(x.atan2(y)), np.arctan2(X, Y), rtol=1e-6)
    assert np.array_equal(_np(x.floor_divide(y)), np.floor(X / Y))
    np.testing.assert_allclose(_np(x.remainder(y)), np.mod(X, Y), atol=1e-6)
    np.testing.assert_allclose(_np(x.fmod(y)), np.fmod(X, Y), atol=1e-6)
    np.testing.assert_allclose(_np(x.erf()), [[math.erf(v) for v in row] for row in X], rtol=1e-6, atol=1e-7)
    b = x > 0
    assert np.array_equal(_np(b.logical_not()), X <= 0)
    assert np.array_equal(_np(b.logical_and(y > 0)), (X > 0) & (Y > 0))
    assert np.array_equal(_np(b.logical_or(y > 0)), (X > 0) | (Y > 0))


def test_gradients_through_operators():
    x = Tensor(np.array([0.5, 1.5, 2.0], np.float64))
    g = opforge.grad(lambda t: ops.ReduceSum()(t**3))(x)
    np.testing.assert_allclose(_np(g), 3 * _np(x) ** 2)
    g = opforge.grad(lambda t: ops.ReduceSum()(abs(t - 1.0)))(x)
    assert _np(g).tolist() == [-1.0, 1.0, 1.0]


def test_nn_cells():
    from opforge import nn

    x = Tensor(X)
    hs = np.clip((X + 3) / 6, 0, 1)
    np.testing.assert_allclose(_np(nn.HSigmoid()(x)), hs, rtol=1e-6)
    np.testing.assert_allclose(_np(nn.HSwish()(x)), X * hs, rtol=1e-6)
    np.testing.assert_allclose(_np(nn.LeakyReLU(0.1)(x)), np.where(X > 0, X, 0.1 * X), rtol=1e-6)
    np.testing.assert_allclose(_np(nn.Softplus()(x)), np.logaddexp(0, X), rtol=1e-6)
    np.testing.assert_allclose(_np(nn.GELU()(x)), _np(ops.GeLU()(x)))
    np.testing.assert_allclose(_np(nn.GELU(approximate=False)(x)), _np(ops.gelu(x, "none")))
    assert isinstance(nn.get_activation("gelu"), nn.GELU) and isinstance(nn.get_activation("hswish"), nn.HSwish)
    assert "alpha=0.1" in repr(nn.LeakyReLU(0.1))
    with pytest.raises(TypeError, match="For 'LeakyReLU', the 'alpha'"):
        nn.LeakyReLU("0.1")
    with pytest.raises(TypeError, match="For 'GELU', the 'approximate'"):
        nn.GELU(approximate="tanh")


def test_comparison_with_numpy_scalar():
    x = Tensor(X)
    assert np.array_equal(_np(x < np.float32(0.5)), X < 0.5)
    assert np.array_equal(_np(x != np.int64(0)), X != 0)


def test_pow_by_a_scalar_two_squares_as_numpy():
    """Pow(x, 2) with one exponent for the whole tensor runs as x * x (NumPy's shortcut too): equal to
    np.power bit for bit, specials included; other exponents and tensor exponents take the general path."""
    import numpy as np

    from opforge import Tensor, ops

    for dtype in (np.float32, np.float64):
        x = np.concatenate(
            [np.random.default_rng(1).standard_normal(1001) * 10, [np.nan, np.inf, -np.inf, -0.0, 1e300]]
        )
        with np.errstate(over="ignore", invalid="ignore"):
            x = x.astype(dtype)  # 1e300 becomes inf in float32
            want = np.power(x, dtype(2.0))
            np.testing.assert_array_equal(ops.Pow()(Tensor(x), 2.0).asnumpy(), want)
            np.testing.assert_array_equal(ops.Pow()(Tensor(x), Tensor(np.array(2.0, dtype))).asnumpy(), want)
            general = ops.Pow()(Tensor(x), Tensor(np.full(x.shape, 2.0, dtype))).asnumpy()
        np.testing.assert_allclose(general, want, rtol=1e-6)
