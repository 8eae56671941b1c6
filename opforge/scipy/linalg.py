"""``mindspore.scipy.linalg``: SciPy's linear-algebra functions over opforge's linalg primitives
(primitives/linalg_ops.py), so they differentiate through the primitives' bprops. dtypes (CPU): float32,
float64; ``inv``, ``det`` and ``cholesky`` also on the GPU."""

from __future__ import annotations

import numpy as np

from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.primitives import linalg_ops
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "solve_triangular",
]


def _tensor(where: str, name: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{where}', the '{name}' must be a Tensor, but got {type(value).__name__}.")
    return value


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix of ``a``."""
    return linalg_ops.MatrixInverse()(_tensor("inv", "a", a))


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix of ``a``."""
    return linalg_ops.MatrixDeterminant()(_tensor("det", "a", a))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of each symmetric positive-definite matrix: upper (:math:`a = U^T U`, SciPy's
    default) or ``lower`` (:math:`a = L L^T`)."""
    validator.check_value_type("lower", lower, [bool], "cholesky")
    return linalg_ops.Cholesky(upper=not lower)(_tensor("cholesky", "a", a))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)``: the Cholesky factor of ``a`` (its other triangle zero) and which triangle it is."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with ``a x = b`` from ``cho_factor(a)``'s ``(c, lower)``: two triangular solves."""
    c, lower = c_and_lower
    first = solve_triangular(c, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(c, first, trans=1 if lower else 0, lower=lower)


_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):  # fmt: skip
    """x with ``a x = b`` (``trans`` 0 / "N"), or ``a^T x = b`` (1 / "T", 2 / "C"), reading the ``lower`` (or
    upper) triangle of ``a`` [..., M, M]; ``unit_diagonal``: the diagonal is taken as ones. ``b`` [..., M]
    or [..., M, N]: ``MatrixTriangularSolve``."""
    a, b = _tensor("solve_triangular", "a", a), _tensor("solve_triangular", "b", b)
    if trans not in _TRANS:
        raise ValueError(f"For 'solve_triangular', the 'trans' must be 0, 1, 2, 'N', 'T' or 'C', but got {trans!r}.")
    validator.check_value_type("lower", lower, [bool], "solve_triangular")
    validator.check_value_type("unit_diagonal", unit_diagonal, [bool], "solve_triangular")
    if unit_diagonal:
        eye = FX.eye(a.shape[-1], a.shape[-1], a.dtype)
        a = F.add(F.mul(a, F.sub(F.ones_like(eye), eye)), eye)
    vector = len(b.shape) == len(a.shape) - 1
    rhs = F.expand_dims(b, -1) if vector else b
    x = linalg_ops.MatrixTriangularSolve(lower=lower, adjoint=_TRANS[trans])(a, rhs)
    return F.squeeze(x, -1) if vector else x


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True, eigvals=None,
         _type=1, check_finite=True):  # fmt: skip
    """The eigenvalues w (ascending) and eigenvectors v (columns) of each symmetric matrix of ``a``, read from
    its ``lower`` (or upper) triangle: ``(w, v)``, or ``w`` with ``eigvals_only``. Only the standard problem
    (``b`` None), as MindSpore's."""
    a = _tensor("eigh", "a", a)
    if b is not None:
        raise ValueError("For 'eigh', only the standard problem is implemented: 'b' must be None.")
    w, v = linalg_ops.Eigh(compute_eigenvectors=not eigvals_only, lower=lower)(a)
    return w if eigvals_only else (w, v)


def block_diag(*arrs):
    """The matrices (or 1-D rows, 0-d scalars) of ``arrs`` along the diagonal of one matrix, zeros elsewhere."""
    if not arrs:
        raise ValueError("For 'block_diag', at least one input is needed.")
    mats = []
    for i, t in enumerate(arrs):
        t = _tensor("block_diag", f"arrs[{i}]", t)
        if len(t.shape) > 2:
            raise ValueError(f"For 'block_diag', each input must have at most 2 dims, but arrs[{i}] has {t.shape}.")
        mats.append(F.reshape(t, (1, -1) if len(t.shape) < 2 else t.shape))
    cols = sum(m.shape[1] for m in mats)
    rows, before = [], 0
    for m in mats:
        after = cols - before - m.shape[1]
        rows.append(F.pad(m, (before, after)) if cols else m)
        before += m.shape[1]
    return F.concat(rows, 0)


def _unit_lower(packed):
    n = packed.shape[-1]
    return F.add(FX.tril(packed, -1), FX.eye(n, n, packed.dtype))


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` of ``a = P L U`` (the ``Lu`` primitive): U on and above the diagonal of ``lu``, L's strict
    lower part below it; ``piv`` (int32) the 0-based row swaps, row i swapped with row ``piv[i]``, in order."""
    lu_, piv, _ = linalg_ops.Lu()(_tensor("lu_factor", "a", a))
    return lu_, piv


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (l unit lower triangular, u upper triangular, p a permutation in
    a's dtype), or with ``permute_l`` ``(p @ l, u)``."""
    validator.check_value_type("permute_l", permute_l, [bool], "lu")
    packed, _, perm = linalg_ops.Lu()(_tensor("lu", "a", a))
    p, lower, upper = F.cast(perm, packed.dtype), _unit_lower(packed), FX.triu(packed)
    return (F.matmul(p, lower), upper) if permute_l else (p, lower, upper)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with ``a x = b`` (``trans`` 0 / "N") or ``a^T x = b`` (1 / "T", 2 / "C") from ``lu_factor(a)``'s
    ``(lu, piv)`` ([M, M], [M]); ``b`` [M] or [M, K]. The pivots are read on the host (the row order)."""
    packed, piv = lu_and_piv
    packed, piv, b = _tensor("lu_solve", "lu", packed), _tensor("lu_solve", "piv", piv), _tensor("lu_solve", "b", b)
    if trans not in _TRANS:
        raise ValueError(f"For 'lu_solve', the 'trans' must be 0, 1, 2, 'N', 'T' or 'C', but got {trans!r}.")
    if len(packed.shape) != 2 or len(b.shape) not in (1, 2) or b.shape[0] != packed.shape[0]:
        raise ValueError(
            f"For 'lu_solve', 'lu' must be [M, M] and 'b' [M] or [M, K], but got {list(packed.shape)} and "
            f"{list(b.shape)}."
        )
    rows = np.arange(packed.shape[0])
    for k, p in enumerate(piv.asnumpy().tolist()):  # the swaps in order: L U = (P^T a)[rows]
        rows[[k, p]] = rows[[p, k]]
    vector = len(b.shape) == 1
    rhs = F.expand_dims(b, -1) if vector else b
    lower, upper = _unit_lower(packed), FX.triu(packed)
    if not _TRANS[trans]:  # L U x = b[rows]
        y = linalg_ops.MatrixTriangularSolve(lower=True)(lower, F.gather(rhs, Tensor(rows.astype(np.int32)), 0))
        x = linalg_ops.MatrixTriangularSolve(lower=False)(upper, y)
    else:  # U^T L^T (P^T x) = b: w = L^-T U^-T b, x[rows] = w
        z = linalg_ops.MatrixTriangularSolve(lower=False, adjoint=True)(upper, rhs)
        w = linalg_ops.MatrixTriangularSolve(lower=True, adjoint=True)(lower, z)
        x = F.gather(w, Tensor(np.argsort(rows).astype(np.int32)), 0)
    return F.squeeze(x, -1) if vector else x
