"""Sweep records (see op_db.py) for the linear-algebra operators (primitives/linalg_ops.py): MatrixInverse,
MatrixDeterminant, LogMatrixDeterminant, Cholesky, Qr, Svd, Eigh, MatrixSolve, MatrixTriangularSolve. Kernels:
csrc/kernels/cpu/linalg.cc (LAPACK).
References: NumPy's linalg in float64 (LAPACK too, so Qr's and Svd's signs are the same conventions)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from op_db import Arg, ErrorInput, OpRecord, Sample, _t

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelError

# Matrices of a batch: square ones (a 0 x 0 and a 1 x 1 among them, an empty batch) and rectangular ones.
_SQUARE = [(3, 3), (2, 4, 4), (1, 1), (2, 2, 1, 5, 5), (0, 3, 3), (2, 0, 0), (17, 17)]
_RECTANGULAR = [(5, 3), (3, 5), (2, 4, 2), (1, 6), (0, 2, 3)]
# float32 LAPACK against float64 NumPy on well-conditioned matrices: a few hundred ulps at most.
_TOLS = {"Float32": (2e-4, 2e-4)}


def _conditioned(shape, rng) -> np.ndarray:
    """Random matrices with n on the diagonal: well conditioned (no 1e6 error amplification in float32)."""
    n = shape[-1]
    return rng.uniform(-1.0, 1.0, size=shape) + n * np.eye(n) if n else np.zeros(shape)


def _spd(shape, rng) -> np.ndarray:
    a = rng.uniform(-1.0, 1.0, size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _finite_rule(ref, nan_outputs=lambda prim: None):
    """The kernels' rule on top of a NumPy reference: a matrix holding a NaN or an infinity gives NaN outputs
    (``nan_outputs(prim)``: which outputs; None, all)."""

    def checked(prim, x):
        x = x.astype(np.float64)
        m, n = x.shape[-2:]
        bad = ~np.isfinite(x).all(axis=(-2, -1)) if x.size else np.zeros(x.shape[:-2], bool)
        outs = ref(prim, np.where(bad[..., None, None], np.eye(m, n) + m * np.eye(m, n), x))
        single = not isinstance(outs, tuple)
        outs = [np.array(o, np.float64) for o in ((outs,) if single else outs)]
        which = nan_outputs(prim)
        for i, o in enumerate(outs):
            if which is None or i in which:
                o[bad] = np.nan
        return outs[0] if single else tuple(outs)

    return checked


# Fresh inputs of a sample's shape (what vmap's and the campaign's other batch elements are made of).
_CONDITIONED = Arg(make=lambda shape, dtype, rng: _conditioned(shape, rng))


def _square_samples(make):
    def samples(record, prim, ins, outs, rng):
        for shape in _SQUARE:
            x = make(shape, rng)
            if prim.name == "MatrixDeterminant" or prim.name == "LogMatrixDeterminant":
                x = x * np.where(rng.uniform(size=shape[:-2] + (1, 1)) < 0.5, -1.0, 1.0)  # negative dets too
            yield Sample((x.astype(ins[0].np_dtype),), desc=f"x{list(shape)}")

    return samples


def _rectangular_samples(record, prim, ins, outs, rng):
    for shape in _RECTANGULAR + [(4, 4)]:
        yield Sample((rng.uniform(-2.0, 2.0, size=shape).astype(ins[0].np_dtype),), desc=f"x{list(shape)}")


def _inverse_ref(prim, x):
    y = np.linalg.inv(x.astype(np.float64)) if x.size else np.zeros(x.shape)
    return np.swapaxes(y, -1, -2) if prim.adjoint else y


def _det_ref(prim, x):
    return np.linalg.det(x.astype(np.float64)) if x.size else np.ones(x.shape[:-2])


def _slogdet_ref(prim, x):
    if not x.size:
        return np.ones(x.shape[:-2]), np.zeros(x.shape[:-2])
    return np.linalg.slogdet(x.astype(np.float64))


def _cholesky_ref(prim, x):
    """From x's lower triangle (NumPy's), or with ``upper`` its upper one: the lower factor of x^T, transposed."""
    x = np.swapaxes(x, -1, -2) if prim.upper else x
    lower = np.linalg.cholesky(x.astype(np.float64)) if x.size else np.zeros(x.shape)
    return np.swapaxes(lower, -1, -2) if prim.upper else lower


def _qr_ref(prim, x):
    m, n = x.shape[-2:]
    mode = "complete" if prim.full_matrices else "reduced"
    if not x.size:
        k = m if prim.full_matrices else min(m, n)
        return np.broadcast_to(np.eye(m, k), x.shape[:-2] + (m, k)).copy(), np.zeros(x.shape[:-2] + (k, n))
    return np.linalg.qr(x.astype(np.float64), mode=mode)


def _svd_ref(prim, x):
    m, n = x.shape[-2:]
    k = min(m, n)
    ushape, vshape = ((m, m), (n, n)) if prim.full_matrices else ((m, k), (n, k))
    batch = x.shape[:-2]
    if not x.size:
        eye = (lambda r, c: np.broadcast_to(np.eye(r, c), batch + (r, c)).copy()) if prim.compute_uv else None
        zeros = lambda r, c: np.zeros(batch + (r, c))  # noqa: E731
        make = eye or zeros
        return np.zeros(batch + (k,)), make(*ushape), make(*vshape)
    if not prim.compute_uv:
        return np.linalg.svd(x.astype(np.float64), compute_uv=False), np.zeros(batch + ushape), np.zeros(batch + vshape)
    u, s, vt = np.linalg.svd(x.astype(np.float64), full_matrices=prim.full_matrices)
    u, v = _signed(u, np.swapaxes(vt, -1, -2), k)
    return s, _completed(u, k), _completed(v, k)


def _completed(f, k):
    """The kernels' extra columns of a full factor: each column c >= k the first unit vector e_i whose part
    orthogonal to the columns before it has a squared norm above 1/4 (Gram-Schmidt, twice), normalised."""
    shape = f.shape
    f = f.copy().reshape((-1,) + shape[-2:])
    rows, cols = shape[-2:]
    for a in f:
        for c in range(k, cols):
            for e in range(rows):
                col = np.eye(rows)[:, e]
                for _ in range(2):
                    col = col - a[:, :c] @ (a[:, :c].T @ col)
                if col @ col > 0.25:
                    a[:, c] = col / np.sqrt(col @ col)
                    break
    return f.reshape(shape)


def _signed(u, v, k):
    """The kernels' sign of each pair (u_j, v_j), j < k: v_j's component of largest magnitude positive."""
    top = np.take_along_axis(v[..., :k], np.abs(v[..., :k]).argmax(axis=-2)[..., None, :], axis=-2)
    flip = np.where(top < 0, -1.0, 1.0)
    u, v = u.copy(), v.copy()
    u[..., :k] *= flip
    v[..., :k] *= flip
    return u, v


def _lu_ref(prim, x):
    """SciPy's lu_factor and lu (LAPACK's getrf too): (lu, 0-based pivots, P of x = P L U)."""
    x = x.astype(np.float64)
    n = x.shape[-1]
    flat = x.reshape((int(np.prod(x.shape[:-2])), n, n))
    lu, piv, perm = np.zeros(flat.shape), np.zeros(flat.shape[:2], np.int32), np.zeros(flat.shape, np.int32)
    for b, a in enumerate(flat):
        if not np.isfinite(a).all():
            lu[b], piv[b], perm[b] = np.nan, np.arange(n), np.eye(n)
            continue
        lu[b], piv[b] = scipy.linalg.lu_factor(a, check_finite=False)
        perm[b] = scipy.linalg.lu(a)[0]
    return lu.reshape(x.shape), piv.reshape(x.shape[:-1]), perm.reshape(x.shape)


def _matrix_errors(name, square=True):
    def errors():
        make = getattr(ops, name)
        out = [
            ErrorInput("1-d", lambda: make()(_t((3,))), ValueError, "at least 2 dims"),
            ErrorInput("int", lambda: make()(_t((2, 2), mstype.int32)), TypeError, "x"),
        ]
        if square:
            out.append(ErrorInput("not-square", lambda: make()(_t((2, 3))), ValueError, "square"))
        return out

    return errors


def _inverse_errors():
    singular = Tensor(np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]], np.float32))
    return _matrix_errors("MatrixInverse")() + [
        ErrorInput("singular", lambda: ops.MatrixInverse()(singular), KernelError, "batch index 1 is singular"),
        ErrorInput("adjoint-int", lambda: ops.MatrixInverse(1), TypeError, "adjoint"),
    ]


def _cholesky_errors():
    indefinite = Tensor(np.array([[1.0, 2.0], [2.0, 1.0]], np.float64))
    return [
        ErrorInput("1-d", lambda: ops.Cholesky()(_t((3,))), ValueError, "at least 2 dims"),
        ErrorInput("not-square", lambda: ops.Cholesky()(_t((2, 3))), ValueError, "square"),
        ErrorInput("indefinite", lambda: ops.Cholesky()(indefinite), KernelError, "not positive definite"),
        ErrorInput("upper-str", lambda: ops.Cholesky("yes"), TypeError, "upper"),
    ]


def _symmetric_of(x, lower: bool) -> np.ndarray:
    """The symmetric matrices a kernel reading x's lower (or upper) triangle sees."""
    tri = np.tril(x) if lower else np.triu(x)
    return tri + np.swapaxes(tri, -1, -2) - tri * np.eye(x.shape[-1])


def _eigh_samples(record, prim, ins, outs, rng):
    """Matrices whose two triangles differ (the kernel reads one), eigenvalues well apart."""
    for shape in _SQUARE:
        n = shape[-1]
        spread = np.diag(np.arange(n) * 2.0 * n) if n else np.zeros((0, 0))
        x = rng.uniform(-1.0, 1.0, size=shape) + spread
        yield Sample((x.astype(ins[0].np_dtype),), desc=f"x{list(shape)}")
    nan = np.eye(3)[None].repeat(2, 0)
    nan[1, 2, 0] = nan[1, 0, 2] = np.nan
    yield Sample((nan.astype(ins[0].np_dtype),), desc="a NaN in the second matrix")


def _eigh_ref(prim, x):
    n = x.shape[-1]
    if not x.size:
        return np.zeros(x.shape[:-1]), np.zeros(x.shape)
    w, v = np.linalg.eigh(_symmetric_of(x.astype(np.float64), prim.lower))
    top = np.take_along_axis(v, np.abs(v).argmax(axis=-2)[..., None, :], axis=-2)  # each column's largest
    v = v * np.where(top < 0, -1.0, 1.0)
    return w, v if prim.compute_eigenvectors else np.zeros(x.shape[:-2] + (n, n))


_RHS_COLUMNS = {(3, 3): 2, (2, 4, 4): 3, (1, 1): 1, (2, 2, 1, 5, 5): 2, (0, 3, 3): 2, (2, 0, 0): 2, (17, 17): 5}


def _solve_samples(record, prim, ins, outs, rng):
    """Well-conditioned matrices (triangles too) and right-hand sides, one of no columns, one holding a NaN."""
    t = ins[0].np_dtype
    for shape, k in _RHS_COLUMNS.items():
        a, b = _conditioned(shape, rng), rng.uniform(-2.0, 2.0, size=shape[:-1] + (k,))
        yield Sample((a.astype(t), b.astype(t)), desc=f"matrix{list(shape)} rhs K={k}")
    yield Sample((_conditioned((4, 4), rng).astype(t), np.zeros((4, 0), t)), desc="rhs of no columns")
    a, b = _conditioned((2, 3, 3), rng), rng.uniform(size=(2, 3, 2))
    b[1, 0, 1] = np.nan
    yield Sample((a.astype(t), b.astype(t)), desc="a NaN in the second rhs")


def _solve_ref(solve):
    """A reference over np.linalg.solve with the kernels' rule: a batch whose matrix or rhs is not finite
    gives NaN."""

    def ref(prim, a, b):
        a, b = a.astype(np.float64), b.astype(np.float64)
        if not b.size:
            return np.zeros(b.shape)
        a = solve(prim, a)
        bad = ~(np.isfinite(a).all(axis=(-2, -1)) & np.isfinite(b).all(axis=(-2, -1)))
        safe = np.where(bad[..., None, None], np.eye(a.shape[-1]), a)
        x = np.linalg.solve(safe, np.where(bad[..., None, None], 0.0, b))
        x[bad] = np.nan
        return x

    return ref


def _solve_matrix(prim, a):
    return np.swapaxes(a, -1, -2) if prim.adjoint else a


def _triangular_matrix(prim, a):
    tri = np.tril(a) if prim.lower else np.triu(a)
    return np.swapaxes(tri, -1, -2) if prim.adjoint else tri


def _solve_errors(name):
    def errors():
        make = getattr(ops, name)
        singular = Tensor(np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [0.0, 0.0]]], np.float64))
        rhs = Tensor(np.ones((2, 2, 1)))
        return [
            ErrorInput("1-d", lambda: make()(_t((3,)), _t((3, 1))), ValueError, "at least 2 dims"),
            ErrorInput("not-square", lambda: make()(_t((2, 3)), _t((2, 1))), ValueError, "square"),
            ErrorInput("rhs-rows", lambda: make()(_t((3, 3)), _t((2, 1))), ValueError, "'rhs' must have shape"),
            ErrorInput("rhs-batch", lambda: make()(_t((2, 3, 3)), _t((3, 3, 1))), ValueError, "'rhs'"),
            ErrorInput("rhs-rank", lambda: make()(_t((3, 3)), _t((3,))), ValueError, "'rhs'"),
            ErrorInput("int", lambda: make()(_t((2, 2), mstype.int32), _t((2, 1), mstype.int32)), TypeError, "matrix"),
            ErrorInput("dtypes-differ", lambda: make()(_t((2, 2)), _t((2, 1), mstype.float64)), TypeError, "rhs"),
            ErrorInput("adjoint-int", lambda: make(adjoint=1), TypeError, "adjoint"),
            ErrorInput("singular", lambda: make()(singular, rhs), KernelError, "batch index 1"),
        ]

    return errors


def _eigh_errors():
    return _matrix_errors("Eigh")() + [
        ErrorInput("lower-int", lambda: ops.Eigh(lower=1), TypeError, "lower"),
        ErrorInput("compute_eigenvectors-str", lambda: ops.Eigh("yes"), TypeError, "compute_eigenvectors"),
    ]


RECORDS = [
    OpRecord(
        "MatrixInverse",
        {"adjoint=False": ops.MatrixInverse, "adjoint=True": lambda: ops.MatrixInverse(True)},
        _square_samples(_conditioned),
        _finite_rule(_inverse_ref),
        args=(_CONDITIONED,),
        tols=_TOLS,
        error_inputs=_inverse_errors,
    ),
    OpRecord(
        "MatrixDeterminant",
        {"": ops.MatrixDeterminant},
        _square_samples(_conditioned),
        _finite_rule(_det_ref),
        args=(_CONDITIONED,),
        tols=_TOLS,
        error_inputs=_matrix_errors("MatrixDeterminant"),
    ),
    OpRecord(
        "LogMatrixDeterminant",
        {"": ops.LogMatrixDeterminant},
        _square_samples(_conditioned),
        _finite_rule(_slogdet_ref),
        args=(_CONDITIONED,),
        tols=_TOLS,
        error_inputs=_matrix_errors("LogMatrixDeterminant"),
    ),
    OpRecord(
        "Cholesky",
        {"upper=False": ops.Cholesky, "upper=True": lambda: ops.Cholesky(True)},
        _square_samples(_spd),
        _finite_rule(_cholesky_ref),
        args=(Arg(make=lambda shape, dtype, rng: _spd(shape, rng)),),
        tols=_TOLS,
        error_inputs=_cholesky_errors,
    ),
    OpRecord(
        "Qr",
        {"reduced": ops.Qr, "full_matrices": lambda: ops.Qr(True)},
        _rectangular_samples,
        _finite_rule(_qr_ref),
        tols=_TOLS,
        error_inputs=_matrix_errors("Qr", square=False),
    ),
    OpRecord(
        "Svd",
        {
            "": ops.Svd,
            "full_matrices": lambda: ops.Svd(True),
            "compute_uv=False": lambda: ops.Svd(compute_uv=False),
        },
        _rectangular_samples,
        _finite_rule(_svd_ref, lambda prim: None if prim.compute_uv else (0,)),
        tols=_TOLS,
        error_inputs=_matrix_errors("Svd", square=False),
    ),
    OpRecord(
        "Eigh",
        {
            "": ops.Eigh,
            "lower=False": lambda: ops.Eigh(lower=False),
            "compute_eigenvectors=False": lambda: ops.Eigh(compute_eigenvectors=False),
        },
        _eigh_samples,
        _finite_rule(_eigh_ref),
        args=(_CONDITIONED,),
        tols=_TOLS,
        error_inputs=_eigh_errors,
    ),
    OpRecord(
        "MatrixSolve",
        {"adjoint=False": ops.MatrixSolve, "adjoint=True": lambda: ops.MatrixSolve(True)},
        _solve_samples,
        _solve_ref(_solve_matrix),
        args=(_CONDITIONED, Arg()),
        tols=_TOLS,
        error_inputs=_solve_errors("MatrixSolve"),
    ),
    OpRecord(
        "MatrixTriangularSolve",
        {
            "lower": ops.MatrixTriangularSolve,
            "upper": lambda: ops.MatrixTriangularSolve(lower=False),
            "lower adjoint": lambda: ops.MatrixTriangularSolve(adjoint=True),
            "upper adjoint": lambda: ops.MatrixTriangularSolve(lower=False, adjoint=True),
        },
        _solve_samples,
        _solve_ref(_triangular_matrix),
        args=(_CONDITIONED, Arg()),
        tols=_TOLS,
        error_inputs=_solve_errors("MatrixTriangularSolve"),
    ),
    OpRecord(
        "Lu",
        {"": ops.Lu},
        _square_samples(_conditioned),
        _lu_ref,
        args=(_CONDITIONED,),
        tols=_TOLS,
        error_inputs=_matrix_errors("Lu"),
    ),
]
