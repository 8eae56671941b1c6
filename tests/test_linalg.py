"""The functional linear algebra (ops.inverse, det, slogdet, cholesky, qr, svd) as MindSpore spells it, the
gradients' limits (full factorizations of non-square matrices), and jit against eager. The kernels are swept
against NumPy by tests/op_db_linalg.py; the gradients by tests/grad_db.py."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops


def test_functional_forms_follow_mindspore(rng):
    a = rng.uniform(-1, 1, size=(2, 4, 3))
    q, r = ops.qr(Tensor(a))
    assert q.shape == (2, 4, 3) and r.shape == (2, 3, 3)
    q, r = ops.qr(Tensor(a), mode="complete")
    assert q.shape == (2, 4, 4) and r.shape == (2, 4, 3)
    np.testing.assert_allclose((q @ r).asnumpy(), a, atol=1e-12)
    s = ops.svd(Tensor(a), compute_uv=False)
    np.testing.assert_allclose(s.asnumpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    square = rng.uniform(-1, 1, size=(3, 3)) + 3 * np.eye(3)
    sign, logdet = ops.slogdet(Tensor(square))
    np.testing.assert_allclose(sign.asnumpy() * np.exp(logdet.asnumpy()), np.linalg.det(square), rtol=1e-12)
    np.testing.assert_allclose(ops.det(Tensor(square)).asnumpy(), np.linalg.det(square), rtol=1e-12)
    np.testing.assert_allclose(ops.inverse(Tensor(square)).asnumpy(), np.linalg.inv(square), rtol=1e-12)
    with pytest.raises(ValueError, match="For 'qr', the 'mode' must be 'reduced' or 'complete', but got 'r'"):
        ops.qr(Tensor(a), mode="r")


def test_full_factorizations_of_non_square_matrices_have_no_gradient(rng):
    x = Tensor(rng.uniform(-1, 1, size=(4, 3)))
    with pytest.raises(ValueError, match="For 'Svd', the gradient needs full_matrices=False"):
        opforge.grad(lambda t: ops.Svd(True)(t)[1].sum())(x)
    with pytest.raises(ValueError, match="For 'Qr', the gradient needs full_matrices=False"):
        opforge.grad(lambda t: ops.Qr(True)(t)[0].sum())(x)
    with pytest.raises(ValueError, match="For 'Qr', the gradient needs M >= N"):
        opforge.grad(lambda t: ops.Qr()(t)[1].sum())(Tensor(rng.uniform(-1, 1, size=(2, 3))))


def test_jit_matches_eager(rng):
    def f(x):
        spd = ops.matmul(x, ops.swapaxes(x, -1, -2)) + Tensor(4 * np.eye(3))
        chol = ops.cholesky(spd)
        s = ops.svd(x, compute_uv=False)
        return ops.inverse(chol).sum() + ops.det(spd) + s.sum()

    x = Tensor(rng.uniform(-1, 1, size=(3, 3)))
    eager, jitted = f(x), opforge.jit(f)(x)
    np.testing.assert_allclose(jitted.asnumpy(), eager.asnumpy(), rtol=1e-12)
    grad_eager = opforge.grad(f)(x).asnumpy()
    np.testing.assert_allclose(opforge.jit(opforge.grad(f))(x).asnumpy(), grad_eager, rtol=1e-10)
