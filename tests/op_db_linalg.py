"""Sweep records (see op_db.py) for the linear-algebra operators (primitives/linalg_ops.py): MatrixInverse,
MatrixDeterminant, LogMatrixDeterminant, Cholesky, Qr, Svd. Kernels: csrc/kernels/cpu/linalg.cc (LAPACK).
References: NumPy's linalg in float64 (LAPACK too, so Qr's and Svd's signs are the same conventions)."""

from __future__ import annotations

import numpy as np
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
    return s, u, np.swapaxes(vt, -1, -2)


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
]
