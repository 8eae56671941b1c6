"""bprops of the linear-algebra operators (primitives/linalg_ops.py)."""

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


def _tall_only(name: str, what: str, m: int, n: int, full_matrices: bool) -> None:
    """The closed forms below hold for the reduced factors (and square matrices); the extra columns of a full
    factorization have no unique gradient (as PyTorch refuses, so do these)."""
    if full_matrices and m != n:
        raise ValueError(
            f"For '{name}', the gradient needs full_matrices=False (or a square input): the extra columns of the "
            f"full {what} are not unique, but got an input of {m} x {n} matrices."
        )


@bprop_getters.register(L.Qr)
def get_bprop_qr(self):
    # x = q r, x [M, N] with M >= N (Walter and Lehmann, as TensorFlow's): with s = tril(q^T dq - dq^T q +
    # r dr^T - dr r^T), dx = q (dr + s r^-T) + (dq - q q^T dq) r^-T.
    full = self.full_matrices

    def bprop(x, out, dout):
        m, n = x.shape[-2], x.shape[-1]
        _tall_only("Qr", "q", m, n, full)
        if m < n:
            raise ValueError(f"For 'Qr', the gradient needs M >= N, but got an input of {m} x {n} matrices.")
        q, r = out
        dq, dr = dout
        qdq = _mm_ta(q, dq)
        rdr = _mm_tb(r, dr)
        s = FX.tril(F.add(F.sub(qdq, FX.swapaxes(qdq, -1, -2)), F.sub(rdr, FX.swapaxes(rdr, -1, -2))))
        r_inv_t = _inverse_t(r)
        dx = F.add(_mm(q, F.add(dr, _mm(s, r_inv_t))), _mm(F.sub(dq, _mm(q, qdq)), r_inv_t))
        return (dx,)

    return bprop


def _svd_dx(u, s, v, ds, du, dv, m: int, n: int):
    """Townsend's gradient of x = u diag(s) v^T (reduced factors, K = min(M, N)):
    u [(F o (u^T du - du^T u)) S + diag(ds) + S (F o (v^T dv - dv^T v))] v^T, F_ij = 1 / (s_j^2 - s_i^2)
    (0 on the diagonal), plus (I - u u^T) du S^-1 v^T when M > K and u S^-1 dv^T (I - v v^T) when N > K."""
    k = s.shape[-1]
    eye = FX.eye(k, k, s.dtype)
    s_row = F.expand_dims(s, -2)  # [..., 1, K]: s_j along a row
    s_col = F.expand_dims(s, -1)  # [..., K, 1]: s_i down a column
    gap = F.sub(F.mul(s_row, s_row), F.mul(s_col, s_col))
    f = F.mul(F.div(F.ones_like(gap), F.add(gap, eye)), F.sub(F.ones_like(eye), eye))
    utdu, vtdv = _mm_ta(u, du), _mm_ta(v, dv)
    j = F.mul(f, F.sub(utdu, FX.swapaxes(utdu, -1, -2)))
    kk = F.mul(f, F.sub(vtdv, FX.swapaxes(vtdv, -1, -2)))
    inner = F.add(F.add(F.mul(j, s_row), F.mul(eye, F.expand_dims(ds, -2))), F.mul(s_col, kk))
    dx = _mm_tb(_mm(u, inner), v)
    s_inv = F.div(F.ones_like(s_row), s_row)  # [..., 1, K]
    if m > k:  # (I - u u^T) du S^-1 v^T
        proj = F.sub(du, _mm(u, utdu))
        dx = F.add(dx, _mm_tb(F.mul(proj, s_inv), v))
    if n > k:  # u S^-1 dv^T (I - v v^T)
        proj = F.sub(dv, _mm(v, vtdv))
        dx = F.add(dx, _mm_tb(F.mul(u, s_inv), proj))
    return dx


@bprop_getters.register(L.Svd)
def get_bprop_svd(self):
    full, compute_uv = self.full_matrices, self.compute_uv

    def bprop(x, out, dout):
        m, n = x.shape[-2], x.shape[-1]
        ds, du, dv = dout
        if not compute_uv:  # u and v are zeros here: the singular vectors again, for u diag(ds) v^T
            _, u, v = L.Svd(False, True)(x)
            return (_mm_tb(F.mul(u, F.expand_dims(ds, -2)), v),)
        _tall_only("Svd", "u and v", m, n, full)
        s, u, v = out
        return (_svd_dx(u, s, v, ds, du, dv, m, n),)

    return bprop


@bprop_getters.register(L.MatrixSolve)
def get_bprop_matrix_solve(self):
    # x = a^-1 b: db = a^-T dx, da = -db x^T; with adjoint, x = a^-T b: db = a^-1 dx, da = -x db^T.
    adjoint = self.adjoint
    solve_other = L.MatrixSolve(adjoint=not adjoint)

    def bprop(a, b, out, dout):
        db = solve_other(a, dout)
        da = _mm_tb(out, db) if adjoint else _mm_tb(db, out)
        return F.neg(da), db

    return bprop


@bprop_getters.register(L.MatrixTriangularSolve)
def get_bprop_matrix_triangular_solve(self):
    # MatrixSolve's gradient, da kept to the triangle the kernel reads (the other has none).
    lower, adjoint = self.lower, self.adjoint
    solve_other = L.MatrixTriangularSolve(lower=lower, adjoint=not adjoint)
    triangle = FX.tril if lower else FX.triu

    def bprop(a, b, out, dout):
        db = solve_other(a, dout)
        da = _mm_tb(out, db) if adjoint else _mm_tb(db, out)
        return F.neg(triangle(da)), db

    return bprop


@bprop_getters.register(L.Eigh)
def get_bprop_eigh(self):
    # s = v diag(w) v^T, s the symmetric matrix of a's lower (or upper) triangle: ds = v (diag(dw) +
    # F o (v^T dv)) v^T, F_ij = 1 / (w_j - w_i) off the diagonal (distinct eigenvalues); a's entry (i, j) of
    # the triangle read is s_ij and s_ji, so da = tri(ds + ds^T) - diag(ds).
    lower, vectors = self.lower, self.compute_eigenvectors
    triangle = FX.tril if lower else FX.triu
    eigh_vectors = L.Eigh(True, lower)

    def bprop(a, out, dout):
        dw, dv = dout
        w, v = out if vectors else eigh_vectors(a)
        n = w.shape[-1]
        eye = FX.eye(n, n, w.dtype)
        inner = F.mul(eye, F.expand_dims(dw, -2))
        if vectors:
            gap = F.sub(F.expand_dims(w, -2), F.expand_dims(w, -1))  # w_j - w_i
            f = F.mul(F.div(F.ones_like(gap), F.add(gap, eye)), F.sub(F.ones_like(eye), eye))
            inner = F.add(inner, F.mul(f, _mm_ta(v, dv)))
        ds = _mm_tb(_mm(v, inner), v)
        return (F.sub(triangle(F.add(ds, FX.swapaxes(ds, -1, -2))), F.mul(ds, eye)),)

    return bprop


@bprop_getters.register(L.Lu)
def get_bprop_lu(self):
    # x = P L U (square, U nonsingular): dx = P L^-T (tril(L^T dL, -1) + triu(dU U^T)) U^-T, dL and dU the
    # parts of d(lu) below and on/above the diagonal; the integer outputs carry no gradient.
    lower_t = L.MatrixTriangularSolve(lower=True, adjoint=True)
    upper = L.MatrixTriangularSolve(lower=False)

    def bprop(x, out, dout):
        lu, _, perm = out
        dlu = dout[0]
        n = x.shape[-1]
        eye = FX.eye(n, n, x.dtype)
        lower, up = F.add(FX.tril(lu, -1), eye), FX.triu(lu)
        phi = F.add(FX.tril(_mm_ta(lower, FX.tril(dlu, -1)), -1), FX.triu(_mm_tb(FX.triu(dlu), up)))
        left = lower_t(lower, phi)  # L^-T phi
        right = FX.swapaxes(upper(up, FX.swapaxes(left, -1, -2)), -1, -2)  # (L^-T phi) U^-T
        return (_mm(F.cast(perm, x.dtype), right),)

    return bprop
