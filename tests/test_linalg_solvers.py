"""The solvers and decompositions composed over the linalg primitives: ops.matrix_solve, ops.pinv, ops.Lstsq
and opforge.scipy.linalg (eigh, solve_triangular, cho_factor / cho_solve, inv, det, cholesky, block_diag),
against NumPy and SciPy, with their gradients against central differences and jit against eager. The
primitives themselves (Eigh, MatrixSolve, MatrixTriangularSolve) are swept by tests/op_db_linalg.py and
tests/grad_db.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import opforge
import opforge.scipy.linalg as sl
from opforge import Tensor, ops
from opforge.testing import numeric_grad


def _spd(n, rng):
    a = rng.uniform(-1, 1, size=(n, n))
    return a @ a.T + n * np.eye(n)


def test_matrix_solve_as_mindspore(rng):
    matrix = Tensor(np.array([[5.0, 4.0], [3.0, 1.0]], np.float32))
    rhs = Tensor(np.array([[7.0], [2.0]], np.float32))
    np.testing.assert_allclose(ops.matrix_solve(matrix, rhs).asnumpy(), [[0.14285707], [1.5714287]], rtol=1e-5)
    a, b = rng.uniform(-1, 1, size=(2, 3, 3)) + 3 * np.eye(3), rng.uniform(size=(2, 3, 4))
    got = ops.matrix_solve(Tensor(a), Tensor(b), adjoint=True).asnumpy()
    np.testing.assert_allclose(got, np.linalg.solve(np.swapaxes(a, -1, -2), b), rtol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 2)])
def test_pinv_matches_numpy(shape, rng):
    x = rng.uniform(-1, 1, size=shape)
    np.testing.assert_allclose(ops.pinv(Tensor(x)).asnumpy(), np.linalg.pinv(x), atol=1e-12)


def test_pinv_cuts_small_singular_values_and_takes_hermitian_matrices(rng):
    u, _ = np.linalg.qr(rng.uniform(size=(4, 4)))
    x = u @ np.diag([3.0, 1.0, 0.0, 0.0]) @ u.T  # rank 2, symmetric: its rounding noise is cut
    expected = u @ np.diag([1 / 3.0, 1.0, 0.0, 0.0]) @ u.T
    np.testing.assert_allclose(ops.pinv(Tensor(x)).asnumpy(), expected, atol=1e-8)
    np.testing.assert_allclose(ops.pinv(Tensor(x), hermitian=True).asnumpy(), expected, atol=1e-8)
    small = u @ np.diag([3.0, 1.0, 1e-9, 0.0]) @ u.T
    assert np.abs(ops.pinv(Tensor(small)).asnumpy()).max() > 1e8  # 1e-9 is above eps * 4 * 3
    np.testing.assert_allclose(ops.pinv(Tensor(small), rtol=1e-6).asnumpy(), expected, atol=1e-6)
    only_top = u @ np.diag([1 / 3.0, 0, 0, 0]) @ u.T
    np.testing.assert_allclose(ops.pinv(Tensor(x), atol=2.0).asnumpy(), only_top, atol=1e-8)
    indefinite = np.diag([2.0, -4.0])
    np.testing.assert_allclose(ops.pinv(Tensor(indefinite), hermitian=True).asnumpy(), np.diag([0.5, -0.25]))


def test_pinv_gradient(rng):
    x = rng.uniform(-1, 1, size=(4, 3))
    w = rng.uniform(size=(3, 4))
    got = opforge.grad(lambda t: (ops.pinv(t) * Tensor(w)).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, numeric_grad(lambda a: (np.linalg.pinv(a) * w).sum(), x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shape, k", [((6, 3), 2), ((3, 5), 2), ((4, 4), None)])
@pytest.mark.parametrize("fast", [True, False])
def test_lstsq_matches_numpy(shape, k, fast, rng):
    x = rng.uniform(-1, 1, size=shape)
    a = rng.uniform(-1, 1, size=(shape[0],) if k is None else (shape[0], k))
    expected = np.linalg.lstsq(x, a, rcond=None)[0]  # least squares, or the minimum norm solution
    got = ops.Lstsq(fast=fast)(Tensor(x), Tensor(a)).asnumpy()
    np.testing.assert_allclose(got, expected, atol=1e-10)


def test_lstsq_regularized_and_float16(rng):
    x, a = rng.uniform(-1, 1, size=(6, 3)), rng.uniform(-1, 1, size=(6, 2))
    expected = np.linalg.solve(x.T @ x + 0.5 * np.eye(3), x.T @ a)
    np.testing.assert_allclose(ops.Lstsq(l2_regularizer=0.5)(Tensor(x), Tensor(a)).asnumpy(), expected, rtol=1e-10)
    # MindSpore's example, float32
    x = Tensor(np.array([[2, 1, 5], [3, 5, 1], [1, 1, 1]], np.float32))
    a = Tensor(np.array([[10, 5], [15, 8], [7, 4]], np.float32))
    np.testing.assert_allclose(ops.Lstsq()(x, a).asnumpy(), [[17, 11], [-6.5, -4.5], [-3.5, -2.5]], atol=1e-3)
    half = ops.Lstsq()(Tensor(x.asnumpy().astype(np.float16)), Tensor(a.asnumpy().astype(np.float16)))
    assert half.dtype == opforge.float16
    np.testing.assert_allclose(half.asnumpy(), [[17, 11], [-6.5, -4.5], [-3.5, -2.5]], atol=0.05)


def test_lstsq_gradient_and_jit(rng):
    x, a = rng.uniform(-1, 1, size=(5, 3)), rng.uniform(-1, 1, size=(5, 2))

    def loss(t):
        return ops.Lstsq()(t, Tensor(a)).sum()

    got = opforge.grad(loss)(Tensor(x)).asnumpy()
    expected = numeric_grad(lambda v: np.linalg.lstsq(v, a, rcond=None)[0].sum(), x)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    jitted = opforge.jit(lambda t, b: ops.Lstsq()(t, b))
    for _ in range(2):
        np.testing.assert_allclose(
            jitted(Tensor(x), Tensor(a)).asnumpy(), ops.Lstsq()(Tensor(x), Tensor(a)).asnumpy(), rtol=1e-12
        )


def test_lstsq_errors():
    x, a = Tensor(np.ones((3, 2), np.float32)), Tensor(np.ones((3, 1), np.float32))
    with pytest.raises(TypeError, match="For 'Lstsq', the 'x' must be a Tensor"):
        ops.Lstsq()(np.ones((3, 2)), a)
    with pytest.raises(TypeError, match="a"):
        ops.Lstsq()(x, Tensor(np.ones((3, 1), np.float64)))
    with pytest.raises(ValueError, match="the dimension of 'x' must be 2"):
        ops.Lstsq()(Tensor(np.ones((2, 3, 2), np.float32)), a)
    with pytest.raises(ValueError, match="the dimension of 'a' must be 2 or 1"):
        ops.Lstsq()(x, Tensor(np.ones((3, 1, 1), np.float32)))
    with pytest.raises(ValueError, match="x_dim\\[0\\]: 3 must equal a_dim\\[0\\]: 2"):
        ops.Lstsq()(x, Tensor(np.ones((2, 1), np.float32)))
    with pytest.raises(TypeError, match="fast"):
        ops.Lstsq(fast=1)
    with pytest.raises(TypeError, match="l2_regularizer"):
        ops.Lstsq(l2_regularizer=1)
    with pytest.raises(ValueError, match="'l2_regularizer' must be 0.0 without 'fast'"):
        ops.Lstsq(fast=False, l2_regularizer=0.5)


def test_scipy_eigh(rng):
    a = rng.uniform(-1, 1, size=(4, 4))
    s = a + a.T
    w, v = sl.eigh(Tensor(s))
    np.testing.assert_allclose(w.asnumpy(), scipy.linalg.eigh(s, eigvals_only=True), atol=1e-12)
    np.testing.assert_allclose(v.asnumpy() @ np.diag(w.asnumpy()) @ v.asnumpy().T, s, atol=1e-12)
    # only one triangle is read: the upper one of a, as SciPy's lower=False
    upper = sl.eigh(Tensor(a), lower=False, eigvals_only=True).asnumpy()
    np.testing.assert_allclose(upper, scipy.linalg.eigh(a, lower=False, eigvals_only=True), atol=1e-12)
    with pytest.raises(ValueError, match="'b' must be None"):
        sl.eigh(Tensor(s), Tensor(np.eye(4)))


@pytest.mark.parametrize("trans", [0, 1, "T", "N"])
@pytest.mark.parametrize("lower", [True, False])
def test_scipy_solve_triangular(trans, lower, rng):
    a = rng.uniform(-1, 1, size=(4, 4)) + 4 * np.eye(4)
    for b in (rng.uniform(size=4), rng.uniform(size=(4, 2))):
        got = sl.solve_triangular(Tensor(a), Tensor(b), trans=trans, lower=lower).asnumpy()
        np.testing.assert_allclose(got, scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower), rtol=1e-12)
    got = sl.solve_triangular(Tensor(a), Tensor(b), lower=lower, unit_diagonal=True).asnumpy()
    np.testing.assert_allclose(got, scipy.linalg.solve_triangular(a, b, lower=lower, unit_diagonal=True), rtol=1e-12)
    with pytest.raises(ValueError, match="'trans' must be 0, 1, 2"):
        sl.solve_triangular(Tensor(a), Tensor(b), trans=3)


def test_scipy_cholesky_family(rng):
    a = _spd(4, rng)
    b = rng.uniform(size=(4, 3))
    np.testing.assert_allclose(sl.cholesky(Tensor(a)).asnumpy(), scipy.linalg.cholesky(a), rtol=1e-12)
    np.testing.assert_allclose(sl.cholesky(Tensor(a), lower=True).asnumpy(), np.linalg.cholesky(a), rtol=1e-12)
    for lower in (False, True):
        c = sl.cho_factor(Tensor(a), lower=lower)
        assert c[1] is lower
        np.testing.assert_allclose(sl.cho_solve(c, Tensor(b)).asnumpy(), np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(sl.inv(Tensor(a)).asnumpy(), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(sl.det(Tensor(a)).asnumpy(), np.linalg.det(a), rtol=1e-12)


def test_scipy_block_diag():
    parts = [np.ones((2, 2)), np.array([3.0, 4.0]), np.array(5.0), np.zeros((1, 0))]
    got = sl.block_diag(*(Tensor(p) for p in parts)).asnumpy()
    np.testing.assert_array_equal(got, scipy.linalg.block_diag(*parts))
    with pytest.raises(ValueError, match="at least one input"):
        sl.block_diag()


def test_cho_solve_gradient(rng):
    a, b = _spd(3, rng), rng.uniform(size=(3, 2))

    def loss(t):
        return sl.cho_solve(sl.cho_factor(t, lower=True), Tensor(b)).sum()

    got = opforge.grad(loss)(Tensor(a)).asnumpy()
    # Cholesky's gradient is the symmetric one (as MindSpore's and PyTorch's): that of a's symmetric part
    expected = numeric_grad(lambda v: np.linalg.solve((v + v.T) / 2, b).sum(), a)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", ["CPU", "GPU"])
@pytest.mark.parametrize("shape, full", [((5, 3), False), ((3, 5), True), ((4, 4), True)])
def test_svd_of_a_rank_deficient_matrix(device, shape, full, rng):
    """Singular values of 0: their singular vectors complete an orthonormal basis (any one), on both backends."""
    m, n = shape
    x = rng.uniform(-1, 1, size=(m, 1)) @ rng.uniform(-1, 1, size=(1, n))  # rank 1
    s, u, v = (t.to("CPU").asnumpy() for t in ops.Svd(full)(Tensor(x, device=device)))
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), atol=1e-12)
    k = min(m, n)
    np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-12)
    np.testing.assert_allclose(v.T @ v, np.eye(v.shape[1]), atol=1e-12)
    np.testing.assert_allclose(u[:, :k] @ np.diag(s) @ v[:, :k].T, x, atol=1e-12)


def test_scipy_lu_family(rng):
    a = rng.uniform(-1, 1, size=(5, 5))[::-1].copy()  # rows that need swapping
    b = rng.uniform(size=(5, 2))
    packed, piv = sl.lu_factor(Tensor(a))
    ref_lu, ref_piv = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(packed.asnumpy(), ref_lu, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(piv.asnumpy(), ref_piv)
    for trans in (0, 1, "T"):
        got = sl.lu_solve((packed, piv), Tensor(b), trans=trans).asnumpy()
        want = scipy.linalg.lu_solve((ref_lu, ref_piv), b, trans=1 if trans == "T" else trans)
        np.testing.assert_allclose(got, want, rtol=1e-10)
    got = sl.lu_solve((packed, piv), Tensor(b[:, 0])).asnumpy()
    np.testing.assert_allclose(got, np.linalg.solve(a, b[:, 0]), rtol=1e-10)
    p, lower, upper = (t.asnumpy() for t in sl.lu(Tensor(a)))
    for got, want in zip((p, lower, upper), scipy.linalg.lu(a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    pl, _ = sl.lu(Tensor(a), permute_l=True)
    np.testing.assert_allclose(pl.asnumpy(), p @ lower, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="For 'lu_solve', 'lu' must be"):
        sl.lu_solve((packed, piv), Tensor(np.ones(4)))
    with pytest.raises(ValueError, match="the 'trans' must be"):
        sl.lu_solve((packed, piv), Tensor(b), trans=5)


def test_lu_solve_gradient(rng):
    a = rng.uniform(-1, 1, size=(4, 4))[::-1].copy() + 4 * np.eye(4)[::-1]
    b = rng.uniform(size=(4, 2))

    def loss(t):
        return sl.lu_solve(sl.lu_factor(t), Tensor(b)).sum()

    got = opforge.grad(loss)(Tensor(a)).asnumpy()
    np.testing.assert_allclose(got, numeric_grad(lambda v: np.linalg.solve(v, b).sum(), a), rtol=1e-6, atol=1e-8)
