"""The nn operators beyond the sweep: optimizer updates over several steps against NumPy (the
Parameters, accumulation, m and v included, are updated in place), and the softmax losses'
gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from opforge import Parameter, Tensor, ops
from opforge import dtype as opforge_dtype
from opforge.errors import KernelError

STEPS = 5


def _param(values, name="w"):
    return Parameter(np.array(values), name=name)


def _assert_in_place(param: Parameter, buffer: np.ndarray, expected: np.ndarray, rtol=1e-6, atol=1e-7) -> None:
    """``param`` still holds ``buffer`` (updated in place, not replaced) and it holds ``expected``."""
    assert param._data is buffer
    np.testing.assert_allclose(buffer, expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# ApplyGradientDescent


@pytest.mark.parametrize("alpha_kind", ["float", "0-d tensor", "[1] tensor"])
def test_apply_gradient_descent_steps(alpha_kind):
    rng = np.random.default_rng(0)
    var_np = rng.standard_normal((3, 4))
    var = _param(var_np)
    buffer = var._data
    alpha = {"float": 0.3, "0-d tensor": Tensor(np.array(0.3)), "[1] tensor": Tensor(np.array([0.3]))}[alpha_kind]
    op = ops.ApplyGradientDescent()
    for _ in range(STEPS):
        delta = rng.standard_normal((3, 4))
        out = op(var, alpha, Tensor(delta))
        var_np = var_np - 0.3 * delta
        assert out is var
        _assert_in_place(var, buffer, var_np, rtol=1e-12, atol=1e-12)


def test_apply_gradient_descent_widens_delta_and_keeps_var_dtype():
    var = Parameter(np.ones(4, np.float32))
    delta = np.array([1.0, 2.0, 3.0, 4.0], np.float16)
    ops.ApplyGradientDescent()(var, 0.5, Tensor(delta))
    assert var.dtype.name == "Float32"
    np.testing.assert_array_equal(var.asnumpy(), 1.0 - 0.5 * delta.astype(np.float32))


# ---------------------------------------------------------------------------------------------
# ApplyMomentum


@pytest.mark.parametrize("use_nesterov", [False, True])
@pytest.mark.parametrize("gradient_scale", [1.0, 0.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apply_momentum_steps(use_nesterov, gradient_scale, dtype):
    rng = np.random.default_rng(1)
    shape = (5, 3)
    var_np, acc_np = rng.standard_normal(shape), rng.standard_normal(shape)
    var, acc = Parameter(var_np.astype(dtype), name="var"), Parameter(acc_np.astype(dtype), name="acc")
    var_np, acc_np = var.asnumpy().astype(np.float64), acc.asnumpy().astype(np.float64)
    var_buf, acc_buf = var._data, acc._data
    lr, momentum = 0.1, 0.9
    op = ops.ApplyMomentum(use_nesterov=use_nesterov, gradient_scale=gradient_scale)
    for step in range(STEPS):
        grad = rng.standard_normal(shape).astype(dtype)
        # The scalars as Python floats on even steps, 0-d tensors on odd ones.
        lr_arg = lr if step % 2 == 0 else Tensor(np.array(lr, dtype))
        out = op(var, acc, lr_arg, Tensor(grad), momentum)
        g = grad.astype(np.float64) * gradient_scale
        acc_np = acc_np * momentum + g
        var_np = var_np - lr * (g + momentum * acc_np if use_nesterov else acc_np)
        assert out is var
        tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
        _assert_in_place(acc, acc_buf, acc_np, **tol)
        _assert_in_place(var, var_buf, var_np, **tol)


def test_apply_momentum_float16_updates_accumulation():
    var = Parameter(np.ones(8, np.float16))
    acc = Parameter(np.full(8, 0.5, np.float16))
    grad = np.linspace(-1, 1, 8).astype(np.float16)
    ops.ApplyMomentum()(var, acc, 0.125, Tensor(grad), 0.5)
    acc_ref = 0.5 * 0.5 + grad.astype(np.float64)
    np.testing.assert_allclose(acc.asnumpy(), acc_ref.astype(np.float16), rtol=1e-3)
    np.testing.assert_allclose(var.asnumpy(), (1.0 - 0.125 * acc_ref).astype(np.float16), rtol=1e-3)


def test_apply_momentum_keywords_and_widened_gradient():
    var, acc = Parameter(np.zeros(3, np.float32)), Parameter(np.zeros(3, np.float32))
    grad = Tensor(np.array([1.0, 2.0, 4.0], np.float16))  # cast to float32 losslessly
    ops.ApplyMomentum()(variable=var, accumulation=acc, learning_rate=0.5, gradient=grad, momentum=0.9)
    np.testing.assert_array_equal(acc.asnumpy(), [1.0, 2.0, 4.0])
    np.testing.assert_array_equal(var.asnumpy(), [-0.5, -1.0, -2.0])


def test_apply_momentum_accumulation_of_another_dtype_raises():
    # Promotion would cast it to the variable's dtype, and the update would land in a copy.
    var, acc = Parameter(np.zeros(3, np.float32)), Parameter(np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="For 'ApplyMomentum', the 'accumulation' must have the dtype of 'variable'"):
        ops.ApplyMomentum()(var, acc, 0.1, Tensor(np.ones(3, np.float32)), 0.9)
    np.testing.assert_array_equal(acc.asnumpy(), 0.0)


# ---------------------------------------------------------------------------------------------
# Adam


@pytest.mark.parametrize("use_nesterov", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_steps(use_nesterov, dtype):
    rng = np.random.default_rng(2)
    shape = (4, 6)
    var_np = rng.standard_normal(shape)
    var = Parameter(var_np.astype(dtype), name="var")
    m, v = Parameter(np.zeros(shape, dtype), name="m"), Parameter(np.zeros(shape, dtype), name="v")
    var_np = var.asnumpy().astype(np.float64)
    m_np, v_np = np.zeros(shape), np.zeros(shape)
    buffers = [p._data for p in (var, m, v)]
    lr, beta1, beta2, eps = 0.01, 0.9, 0.999, 1e-8
    op = ops.Adam(use_nesterov=use_nesterov)
    for t in range(1, STEPS + 1):
        grad = rng.standard_normal(shape).astype(dtype)
        b1p, b2p = beta1**t, beta2**t
        # Mix Python floats and 0-d tensors for the scalars.
        b1p_arg, beta2_arg = Tensor(np.array(b1p, dtype)), Tensor(np.array(beta2, dtype))
        out = op(var, m, v, b1p_arg, b2p, lr, beta1, beta2_arg, eps, Tensor(grad))
        assert out[0] is var and out[1] is m and out[2] is v
        g = grad.astype(np.float64)
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        m_np = m_np + (g - m_np) * (1 - beta1)
        v_np = v_np + (g * g - v_np) * (1 - beta2)
        step = m_np * beta1 + (1 - beta1) * g if use_nesterov else m_np
        var_np = var_np - lr_t * step / (np.sqrt(v_np) + eps)
        tol = {"rtol": 2e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
        for p, buf, want in zip((var, m, v), buffers, (var_np, m_np, v_np)):
            _assert_in_place(p, buf, want, **tol)


def test_adam_float16_parameters():
    var = Parameter(np.ones(6, np.float16))
    m, v = Parameter(np.zeros(6, np.float16)), Parameter(np.zeros(6, np.float16))
    grad = np.linspace(-2, 2, 6).astype(np.float16)
    ops.Adam()(var, m, v, 0.875, 0.96875, 0.0625, 0.875, 0.96875, 2.0**-20, Tensor(grad))
    g = grad.astype(np.float64)
    m_ref, v_ref = g * 0.125, g * g * 0.03125
    lr_t = 0.0625 * np.sqrt(1 - 0.96875) / (1 - 0.875)
    var_ref = 1.0 - lr_t * m_ref / (np.sqrt(v_ref) + 2.0**-20)
    for p, want in ((var, var_ref), (m, m_ref), (v, v_ref)):
        assert p.dtype.name == "Float16"
        np.testing.assert_allclose(p.asnumpy(), want.astype(np.float16), rtol=2e-3, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# Non-Parameters and bad arguments are refused before anything is written


def _f32(shape, value=1.0):
    return Tensor(np.full(shape, value, np.float32))


def _pf32(shape, value=1.0):
    return Parameter(np.full(shape, value, np.float32))


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda t: ops.ApplyGradientDescent()(t, 0.1, _f32((3,))), "var"),
        (lambda t: ops.ApplyMomentum()(t, _pf32((3,)), 0.1, _f32((3,)), 0.9), "variable"),
        (lambda t: ops.ApplyMomentum()(_pf32((3,)), t, 0.1, _f32((3,)), 0.9), "accumulation"),
        (lambda t: ops.Adam()(t, _pf32((3,)), _pf32((3,)), 0.9, 0.99, 0.1, 0.9, 0.99, 1e-8, _f32((3,))), "var"),
        (lambda t: ops.Adam()(_pf32((3,)), t, _pf32((3,)), 0.9, 0.99, 0.1, 0.9, 0.99, 1e-8, _f32((3,))), "m"),
        (lambda t: ops.Adam()(_pf32((3,)), _pf32((3,)), t, 0.9, 0.99, 0.1, 0.9, 0.99, 1e-8, _f32((3,))), "v"),
    ],
)
def test_non_parameter_variables_raise(call, arg):
    t = _f32((3,), 2.0)
    with pytest.raises(TypeError, match=rf"the '{arg}' is written in place, so it must be a Parameter, but got Tensor"):
        call(t)
    np.testing.assert_array_equal(t.asnumpy(), 2.0)


def test_adam_m_of_another_dtype_raises():
    var, m, v = _pf32((2,)), Parameter(np.zeros(2, np.float64)), _pf32((2,))
    with pytest.raises(TypeError, match="For 'Adam', the 'm' must have the dtype of 'var'"):
        ops.Adam()(var, m, v, 0.9, 0.99, 0.1, 0.9, 0.99, 1e-8, _f32((2,)))


def test_optimizer_scalar_must_be_a_scalar():
    with pytest.raises(ValueError, match=r"For 'ApplyMomentum', the 'momentum' must be a scalar"):
        ops.ApplyMomentum()(_pf32((2,)), _pf32((2,)), 0.1, _f32((2,)), _f32((2,)))


# ---------------------------------------------------------------------------------------------
# Softmax and the losses: consistency and gradients


def test_log_softmax_is_log_of_softmax_along_each_axis():
    x = np.random.default_rng(3).standard_normal((3, 4, 5))
    for axis in (0, 1, 2, -1, (1,)):
        s = ops.Softmax(axis=axis)(Tensor(x)).asnumpy()
        ls = ops.LogSoftmax(axis=axis)(Tensor(x)).asnumpy()
        np.testing.assert_allclose(np.exp(ls), s, rtol=1e-12)
        a = axis[0] if isinstance(axis, tuple) else axis
        np.testing.assert_allclose(s.sum(axis=a), 1.0, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("c", [1, 10, 15, 16, 17, 511, 512, 4097])
def test_softmax_rows_across_the_cpu_blocks(dtype, c):
    """The CPU kernels vectorise exp over blocks of 4,096 elements (short rows several to a block, rows of
    512 or more one by one, longer ones alone): row counts that split blocks unevenly, and specials."""
    rows = 4096 // c + 5
    x = np.random.default_rng(c).standard_normal((rows, c)).astype(dtype) * 4
    x[1, 0] = np.nan
    if c > 1:
        x[2, -1] = np.inf
        x[3, :] = -np.inf
        x[4, 0] = -np.inf
    ref = x.astype(np.float64)
    tol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}[dtype]
    with np.errstate(invalid="ignore"):
        m = ref.max(axis=1, keepdims=True)
        e = np.exp(ref - m)
        want_log = (ref - m) - np.log(e.sum(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ops.Softmax()(Tensor(x)).asnumpy(), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(ops.LogSoftmax()(Tensor(x)).asnumpy(), want_log, rtol=tol, atol=tol * 10)
    labels = np.random.default_rng(0).integers(0, c, rows).astype(np.int32)
    finite = np.isfinite(want_log).all(axis=1)
    grad = ops.SparseSoftmaxCrossEntropyWithLogits(is_grad=True)(Tensor(x[finite]), Tensor(labels[finite]))
    onehot = np.eye(c)[labels[finite]]
    np.testing.assert_allclose(grad.asnumpy(), (want[finite] - onehot) / finite.sum(), rtol=tol, atol=tol)
    loss = ops.SparseSoftmaxCrossEntropyWithLogits()(Tensor(x[finite]), Tensor(labels[finite]))
    want_loss = -want_log[finite][np.arange(finite.sum()), labels[finite]].mean()
    np.testing.assert_allclose(loss.asnumpy(), want_loss, rtol=tol * 10)


def test_softmax_attr_forms():
    assert ops.Softmax().axis == (-1,)
    assert ops.Softmax(axis=1).axis == (1,)
    assert ops.LogSoftmax(axis=(0,)).axis == 0


def _numerical_grad(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        grad[idx] = (f(plus) - f(minus)) / (2 * eps)
    return grad


def test_sparse_is_grad_is_the_gradient_of_the_mean_loss():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((4, 6))
    labels = Tensor(np.array([0, 5, 2, 2], np.int64))
    loss = ops.SparseSoftmaxCrossEntropyWithLogits()
    grad = ops.SparseSoftmaxCrossEntropyWithLogits(is_grad=True)(Tensor(logits), labels).asnumpy()
    expected = _numerical_grad(lambda x: float(loss(Tensor(x), labels).asnumpy()), logits)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)


def test_dense_backprop_is_the_gradient_of_the_summed_loss():
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((3, 5))
    labels = rng.random((3, 5))
    labels /= labels.sum(axis=1, keepdims=True)
    op = ops.SoftmaxCrossEntropyWithLogits()
    loss, backprop = op(Tensor(logits), Tensor(labels))
    assert loss.shape == (3,) and backprop.shape == (3, 5)
    expected = _numerical_grad(lambda x: float(op(Tensor(x), Tensor(labels))[0].asnumpy().sum()), logits)
    np.testing.assert_allclose(backprop.asnumpy(), expected, rtol=1e-6, atol=1e-9)


def test_sparse_bad_label_raises_every_launch():
    op = ops.SparseSoftmaxCrossEntropyWithLogits()
    logits = Tensor(np.zeros((2, 3), np.float32))
    assert float(op(logits, Tensor(np.array([0, 2], np.int32))).asnumpy()) == pytest.approx(np.log(3.0))
    for bad in ([0, 3], [-1, 0], [0, 2**31 - 1]):  # the same plan, new label values
        with pytest.raises(KernelError, match=r"For 'SparseSoftmaxCrossEntropyWithLogits'.*\[0, 3\)"):
            op(logits, Tensor(np.array(bad, np.int32)))


def test_float_dtypes_without_a_kernel_run_widened():
    """Softmax and the optimizers are defined for every float; bfloat16 has no CPU kernel, so it runs
    on the float32 kernel and the results (and every written Parameter) come back as bfloat16."""
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    logits = np.array([[1.0, 2.0, 3.0]], bf16)
    got = ops.Softmax()(Tensor(logits))
    want = ops.Softmax()(Tensor(logits.astype(np.float32))).asnumpy().astype(bf16)
    assert got.dtype == opforge_dtype.bfloat16
    np.testing.assert_array_equal(got.asnumpy(), want)
    var, acc = Parameter(np.ones(3, bf16), name="var"), Parameter(np.zeros(3, bf16), name="acc")
    out = ops.ApplyMomentum()(var, acc, 0.5, Tensor(np.ones(3, bf16)), 0.9)
    assert out is var
    np.testing.assert_array_equal(acc.asnumpy().astype(np.float32), [1.0, 1.0, 1.0])  # written back too
    np.testing.assert_array_equal(var.asnumpy().astype(np.float32), [0.5, 0.5, 0.5])
