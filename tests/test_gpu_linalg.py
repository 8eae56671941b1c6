"""MatrixInverse, the determinants and Cholesky on the GPU (a block per matrix, csrc/kernels/cuda/linalg.cu)
against the CPU's LAPACK: matrices larger than the block, pivoting rows, singular and indefinite matrices (an
error naming the batch index, as on the CPU), NaN matrices (NaN outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from opforge import Tensor, ops
from opforge.errors import KernelError
from opforge.kernels.gpu.linalg import MATRIX_BLOCK


def _both(op, x: np.ndarray) -> tuple:
    cpu, gpu = op(Tensor(x)), op(Tensor(x, device="GPU"))
    wrap = (lambda v: v) if isinstance(cpu, tuple) else (lambda v: (v,))
    return [c.asnumpy() for c in wrap(cpu)], [g.asnumpy() for g in wrap(gpu)], wrap(gpu)


@pytest.mark.parametrize("n", [1, 5, MATRIX_BLOCK + 3])
@pytest.mark.parametrize(
    "op", [ops.MatrixInverse(), ops.MatrixInverse(True), ops.MatrixDeterminant(), ops.LogMatrixDeterminant()]
)
def test_lu_operators_match_the_cpu(op, n, rng):
    # Small diagonals: the pivots come from other rows, so the row swaps are exercised.
    x = rng.uniform(-1, 1, size=(2, n, n)) + 0.01 * np.eye(n)
    cpu, gpu, outs = _both(op, x)
    assert all(o.device == "GPU" for o in outs)
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(c).max()))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", [1, 6, MATRIX_BLOCK + 3])
def test_cholesky_matches_the_cpu(upper, n, rng):
    a = rng.uniform(-1, 1, size=(3, n, n))
    x = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    x[..., 0, -1] = 7.0  # the triangle not read may hold anything
    cpu, gpu, _ = _both(ops.Cholesky(upper), x if not upper else np.swapaxes(x, -1, -2))
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-10, atol=1e-10)


def test_singular_and_indefinite_matrices_raise_naming_the_batch_index():
    singular = np.stack([np.eye(3), np.ones((3, 3))])
    with pytest.raises(KernelError, match="For 'MatrixInverse', the matrix at batch index 1 is singular"):
        ops.MatrixInverse()(Tensor(singular, device="GPU"))
    assert ops.MatrixDeterminant()(Tensor(singular, device="GPU")).asnumpy().tolist() == [1.0, 0.0]
    sign, logdet = ops.LogMatrixDeterminant()(Tensor(singular, device="GPU"))
    assert sign.asnumpy().tolist() == [1.0, 0.0] and logdet.asnumpy()[1] == -np.inf
    indefinite = np.stack([np.eye(2), np.array([[1.0, 2.0], [2.0, 1.0]])])
    with pytest.raises(KernelError, match="For 'Cholesky', the matrix at batch index 1 is not positive definite"):
        ops.Cholesky()(Tensor(indefinite, device="GPU"))


def test_a_nan_matrix_gives_nan_outputs_on_both_backends():
    x = np.stack([np.eye(2) * 2, np.array([[1.0, np.nan], [0.0, 1.0]])])
    for device in ("CPU", "GPU"):
        inverse = ops.MatrixInverse()(Tensor(x, device=device)).asnumpy()
        assert np.allclose(inverse[0], np.eye(2) / 2) and np.isnan(inverse[1]).all()
        assert np.isnan(ops.MatrixDeterminant()(Tensor(x, device=device)).asnumpy()[1])
        assert np.isnan(ops.Cholesky()(Tensor(x, device=device)).asnumpy()[1]).all()
