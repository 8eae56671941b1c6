"""bprops of the linear-algebra operators (primitives/linalg_ops.py). Qr and Svd have none yet."""

from __future__ import annotations

from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.primitives import linalg_ops as L
from opforge.primitives import math_ops as M

_mm = M.BatchMatMul()
_mm_ta = M.BatchMatMul(transpose_a=True)
_mm_tb = M.BatchMatMul(transpose_b=True)
_inverse_t = L.MatrixInverse(adjoint=True)


def _as_matrices(t):
    """``t`` of shape batch, as batch + (1, 1): a factor of each matrix."""
    return F.reshape(t, tuple(t.shape) + (1, 1))


@bprop_getters.register(L.MatrixInverse)
def get_bprop_matrix_inverse(self):
    # y = x^-1: dx = -y^T dy y^T; with adjoint, y = x^-T: dx = -y dy^T y.
    adjoint = self.adjoint

    def bprop(x, out, dout):
        if adjoint:
            return (F.neg(_mm(_mm_tb(out, dout), out)),)
        return (F.neg(_mm_tb(_mm_ta(out, dout), out)),)

    return bprop


@bprop_getters.register(L.MatrixDeterminant)
def get_bprop_matrix_determinant(self):
    # d det(x) / dx = det(x) x^-T.
    def bprop(x, out, dout):
        return (F.mul(_as_matrices(F.mul(dout, out)), _inverse_t(x)),)

    return bprop


@bprop_getters.register(L.LogMatrixDeterminant)
def get_bprop_log_matrix_determinant(self):
    # d log|det(x)| / dx = x^-T; the sign is piecewise constant.
    def bprop(x, out, dout):
        return (F.mul(_as_matrices(dout[1]), _inverse_t(x)),)

    return bprop


def _phi(t):
    """The lower triangle of each matrix with its diagonal halved."""
    n = t.shape[-1]
    return F.sub(FX.tril(t), F.mul(F.mul(t, FX.eye(n, n, t.dtype)), 0.5))


@bprop_getters.register(L.Cholesky)
def get_bprop_cholesky(self):
    # x = L L^T: dx = sym(L^-T phi(L^T dL) L^-1), sym(a) = (a + a^T) / 2 (Murray, 2016); upper: L = U^T.
    upper = self.upper

    def bprop(x, out, dout):
        lower, dlower = (FX.swapaxes(out, -1, -2), FX.swapaxes(dout, -1, -2)) if upper else (out, dout)
        inv = L.MatrixInverse()(lower)
        s = _mm(_mm_ta(inv, _phi(_mm_ta(lower, dlower))), inv)
        return (F.mul(F.add(s, FX.swapaxes(s, -1, -2)), 0.5),)

    return bprop
