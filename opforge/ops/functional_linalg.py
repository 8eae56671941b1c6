"""MindSpore's functional linear algebra over the linalg primitives (primitives/linalg_ops.py): ``inverse``,
``det``/``matrix_determinant``, ``slogdet``/``log_matrix_determinant``, ``cholesky``, ``qr``, ``svd``,
``matrix_solve``; and what composes them: ``pinv`` and ``ops.Lstsq`` (so they differentiate through the
primitives' bprops)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.ops.host_op import HostOp
from opforge.primitives import linalg_ops
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "inverse",
    "det",
    "matrix_determinant",
    "slogdet",
    "log_matrix_determinant",
    "cholesky",
    "qr",
    "svd",
    "matrix_solve",
    "pinv",
    "Lstsq",
]

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


def matrix_solve(matrix, rhs, adjoint=False):
    """x with ``matrix @ x = rhs`` (``matrix^T @ x = rhs`` with ``adjoint``): ``MatrixSolve(adjoint)``."""
    return linalg_ops.MatrixSolve(adjoint)(matrix, rhs)


def _cutoff(s_max, shape, dtype, atol, rtol):
    """The singular values kept by pinv: those above max(atol, rtol * s_max); rtol defaults to
    eps * max(M, N) when neither is given (0 when only atol is)."""
    if rtol is None:
        rtol = float(np.finfo(mstype.dtype_to_nptype(dtype)).eps) * max(shape[-2:]) if atol is None else 0.0
    return F.maximum(F.mul(s_max, rtol), 0.0 if atol is None else atol)


def pinv(x, *, atol=None, rtol=None, hermitian=False):
    r"""The Moore-Penrose pseudo-inverse of each matrix of x [..., M, N] -> [..., N, M]:
    :math:`v \operatorname{diag}(1 / s) u^T` over the singular values :math:`s > \max(atol, rtol \cdot s_{max})`
    (the others count as 0); with ``hermitian`` (x symmetric) from ``Eigh``, over :math:`|w|`. dtypes (CPU):
    float32, float64."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'pinv', the 'x' must be a Tensor, but got {type(x).__name__}.")
    validator.check_value_type("hermitian", hermitian, [bool], "pinv")
    if hermitian:
        w, v = linalg_ops.Eigh()(x)
        s, u = F.abs(w), F.mul(v, F.expand_dims(F.sign(w), -2))  # x = u diag(|w|) v^T
    else:
        s, u, v = linalg_ops.Svd()(x)
    if s.shape[-1] == 0:
        return F.zeros(tuple(x.shape[:-2]) + (x.shape[-1], x.shape[-2]), x.dtype)
    keep = F.greater(s, _cutoff(F.amax(s, -1, True), x.shape, x.dtype, atol, rtol))
    inv_s = F.select(keep, F.div(F.ones_like(s), F.select(keep, s, F.ones_like(s))), F.zeros_like(s))
    return F.matmul(F.mul(v, F.expand_dims(inv_s, -2)), FX.swapaxes(u, -1, -2))


class Lstsq(HostOp):
    r"""The least-squares or minimum-norm solution of ``x y = a`` (MindSpore's ``ops.Lstsq``):
    ``Lstsq(fast=True, l2_regularizer=0.0)(x, a)``, x [M, N], a [M, K] or [M] -> y [N, K] or [N].
    With ``fast`` (normal equations, Cholesky) and :math:`\lambda` = ``l2_regularizer``: for M >= N,
    :math:`y = (x^T x + \lambda I)^{-1} x^T a`; for M < N, :math:`y = x^T (x x^T + \lambda I)^{-1} a`.
    Without it, the minimum-norm least-squares solution :math:`y = x^+ a` (``pinv``; ``l2_regularizer`` must
    be 0, as a complete orthogonal decomposition gives). dtypes (CPU): float16 (computed in float32),
    float32, float64."""

    def __init__(self, fast=True, l2_regularizer=0.0):
        validator.check_value_type("fast", fast, [bool], "Lstsq")
        validator.check_value_type("l2_regularizer", l2_regularizer, [float], "Lstsq")
        if not fast and l2_regularizer != 0.0:
            raise ValueError(f"For 'Lstsq', 'l2_regularizer' must be 0.0 without 'fast', but got {l2_regularizer}.")
        self.fast, self.l2_regularizer = fast, l2_regularizer

    def __call__(self, x, a):
        self._check(x, a)
        work = mstype.float32 if x.dtype == mstype.float16 else x.dtype
        xw, aw = F.cast(x, work), F.cast(a, work)
        vector = len(a.shape) == 1
        if vector:
            aw = F.expand_dims(aw, -1)
        y = self._normal_equations(xw, aw) if self.fast else F.matmul(pinv(xw), aw)
        y = F.squeeze(y, -1) if vector else y
        return F.cast(y, x.dtype)

    def _normal_equations(self, x, a):
        m, n = x.shape
        tall = m >= n
        gram = F.matmul(FX.swapaxes(x, 0, 1), x) if tall else F.matmul(x, FX.swapaxes(x, 0, 1))
        if self.l2_regularizer:
            gram = F.add(gram, FX.eye(gram.shape[0], gram.shape[0], gram.dtype) * self.l2_regularizer)
        lower = linalg_ops.Cholesky()(gram)
        rhs = F.matmul(FX.swapaxes(x, 0, 1), a) if tall else a
        z = linalg_ops.MatrixTriangularSolve(lower=True, adjoint=True)(
            lower, linalg_ops.MatrixTriangularSolve(lower=True)(lower, rhs)
        )
        return z if tall else F.matmul(FX.swapaxes(x, 0, 1), z)

    @staticmethod
    def _check(x, a):
        for name, t in (("x", x), ("a", a)):
            if not isinstance(t, Tensor):
                raise TypeError(f"For 'Lstsq', the '{name}' must be a Tensor, but got {type(t).__name__}.")
        validator.check_tensors_dtypes_same_and_valid(
            {"x": x.dtype, "a": a.dtype}, (mstype.float16, mstype.float32, mstype.float64), "Lstsq"
        )
        if len(x.shape) != 2:
            raise ValueError(f"For 'Lstsq', the dimension of 'x' must be 2, but got {len(x.shape)}.")
        if len(a.shape) not in (1, 2):
            raise ValueError(f"For 'Lstsq', the dimension of 'a' must be 2 or 1, but got {len(a.shape)}.")
        if x.shape[0] != a.shape[0]:
            raise ValueError(f"For 'Lstsq', the length of x_dim[0]: {x.shape[0]} must equal a_dim[0]: {a.shape[0]}.")
