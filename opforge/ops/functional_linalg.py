"""MindSpore's functional linear algebra over the linalg primitives (primitives/linalg_ops.py): ``inverse``,
``det``/``matrix_determinant``, ``slogdet``/``log_matrix_determinant``, ``cholesky``, ``qr`` and ``svd``."""

from __future__ import annotations

from opforge.primitives import linalg_ops

__all__ = ["inverse", "det", "matrix_determinant", "slogdet", "log_matrix_determinant", "cholesky", "qr", "svd"]

_inverse = linalg_ops.MatrixInverse()
_determinant = linalg_ops.MatrixDeterminant()
_log_determinant = linalg_ops.LogMatrixDeterminant()


def inverse(input):  # noqa: A002 (MindSpore's argument name)
    """The inverse of each square matrix in the last two dims: ``MatrixInverse()(input)``."""
    return _inverse(input)


def matrix_determinant(input):  # noqa: A002
    """The determinant of each square matrix in the last two dims: ``MatrixDeterminant()(input)``."""
    return _determinant(input)


det = matrix_determinant


def log_matrix_determinant(input):  # noqa: A002
    """``(sign, log|det|)`` of each square matrix in the last two dims: ``LogMatrixDeterminant()(input)``."""
    return _log_determinant(input)


slogdet = log_matrix_determinant


def cholesky(input_x, upper=False):
    """The Cholesky factor of each symmetric positive-definite matrix: ``Cholesky(upper)(input_x)``."""
    return linalg_ops.Cholesky(upper)(input_x)


def qr(input, mode="reduced"):  # noqa: A002
    """``(Q, R)`` of each matrix: ``mode`` "reduced" (Q [M, K], R [K, N]) or "complete" (Q [M, M], R [M, N])."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"For 'qr', the 'mode' must be 'reduced' or 'complete', but got {mode!r}.")
    return linalg_ops.Qr(mode == "complete")(input)


def svd(input, full_matrices=False, compute_uv=True):  # noqa: A002
    """``(s, u, v)`` of each matrix, :math:`input = u \\operatorname{diag}(s) v^T`; only ``s`` without
    ``compute_uv``."""
    s, u, v = linalg_ops.Svd(full_matrices, compute_uv)(input)
    return (s, u, v) if compute_uv else s
