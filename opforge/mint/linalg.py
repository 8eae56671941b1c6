"""MindSpore's ``mindspore.mint.linalg``: PyTorch's ``torch.linalg`` names and arguments (``norm``, ``vector_norm``,
``matrix_norm``, ``inv``, ``qr``, and ``det``), over opforge's reductions and its MatrixInverse, MatrixDeterminant,
Qr and Svd primitives, so their kernels, dtypes and gradients are those operators'."""

from __future__ import annotations

import builtins
import math

import numpy as np

from opforge import ops
from opforge.tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "qr", "det"]

_INF = float("inf")


def _check_tensor(name: str, arg: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{name}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")


def _axes(name: str, dim, ndim: int) -> tuple:
    """``dim`` (an int or a sequence of ints) as distinct non-negative axes of an ``ndim``-dim Tensor."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise TypeError(f"For '{name}', the 'dim' must be an int or a tuple of ints, but got {dim!r}.")
    bound = builtins.max(ndim, 1)
    if not all(-bound <= d < bound for d in dims):
        raise ValueError(f"For '{name}', the 'dim' {dim!r} is out of range for a Tensor of {ndim} dims.")
    axes = tuple(d % bound for d in dims)
    if len(set(axes)) != len(axes):
        raise ValueError(f"For '{name}', the 'dim' must not repeat a dim, but got {dim!r}.")
    return axes


def _floating(name: str, x, dtype) -> Tensor:
    """``x`` in ``dtype`` when given; else as it is, which must be a float Tensor."""
    if dtype is not None:
        return ops.cast(x, dtype)
    if x.dtype.kind != "f":
        raise TypeError(f"For '{name}', the input must be a float Tensor (or give 'dtype'), but got {x.dtype}.")
    return x


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    r"""The vector ``ord``-norm of ``x`` over ``dim`` (an int or a tuple of ints; every element when None):

    - ``inf``: :math:`\max |x_i|`; ``-inf``: :math:`\min |x_i|`;
    - ``0``: the number of nonzero elements (in ``x``'s dtype);
    - any other number p: :math:`(\sum |x_i|^p)^{1/p}` (``2``, the default, the Euclidean norm).

    ``x`` is cast to ``dtype`` first when given (float16, bfloat16, float32, float64, as the reductions'
    kernels). Raises TypeError for a non-Tensor ``x``, a non-float ``x`` without ``dtype``, or a ``dim`` that is
    not ints; ValueError for an ``ord`` that is not a number or a ``dim`` repeating or out of range."""
    name = "vector_norm"
    _check_tensor(name, "x", x)
    if isinstance(ord, str) or not isinstance(ord, (int, float, bool, np.integer, np.floating)):
        raise ValueError(f"For '{name}', the 'ord' must be a number, inf or -inf, but got {ord!r}.")
    ord = float(ord)
    x = _floating(name, x, dtype)
    axes = () if dim is None else _axes(name, dim, x.ndim)
    if math.isnan(ord):
        raise ValueError(f"For '{name}', the 'ord' must not be nan.")
    if ord == _INF:
        return ops.amax(ops.abs(x), axes or None, keepdim)
    if ord == -_INF:
        return ops.amin(ops.abs(x), axes or None, keepdim)
    if ord == 0:
        return ops.sum(ops.cast(ops.ne(x, 0), x.dtype), axes or None, keepdim)
    if ord == 1:
        return ops.sum(ops.abs(x), axes or None, keepdim)
    if ord == 2:
        return ops.sqrt(ops.sum(ops.square(x), axes or None, keepdim))
    return ops.pow(ops.sum(ops.pow(ops.abs(x), ord), axes or None, keepdim), 1.0 / ord)


def _singular_values(x, axes: tuple) -> Tensor:
    """The singular values of the matrices over ``axes`` (rows, columns) of ``x``: [batch..., k]."""
    rest = tuple(d for d in range(x.ndim) if d not in axes)
    return ops.svd(ops.permute(x, rest + axes), compute_uv=False)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor:
    r"""The matrix ``ord``-norm of the matrices of ``A`` over the two dims ``dim`` (rows, columns):

    - ``"fro"`` (the default): :math:`\sqrt{\sum |a_{ij}|^2}`; ``"nuc"``: the sum of the singular values;
    - ``inf`` / ``-inf``: the largest / smallest row sum :math:`\sum_j |a_{ij}|`;
    - ``1`` / ``-1``: the largest / smallest column sum :math:`\sum_i |a_{ij}|`;
    - ``2`` / ``-2``: the largest / smallest singular value (opforge's Svd).

    ``A`` (at least 2 dims) is cast to ``dtype`` first when given; float32 and float64 (the singular values'
    kernels), float16 and bfloat16 too for "fro", 1 and inf. Raises ValueError for another ``ord``, fewer than 2
    dims, or a ``dim`` that is not two distinct dims."""
    name = "matrix_norm"
    _check_tensor(name, "A", A)
    if A.ndim < 2:
        raise ValueError(f"For '{name}', the 'A' must have at least 2 dims, but got shape {list(A.shape)}.")
    axes = _axes(name, dim, A.ndim)
    if len(axes) != 2:
        raise ValueError(f"For '{name}', the 'dim' must be a pair of dims, but got {dim!r}.")
    if ord not in ("fro", "nuc", _INF, -_INF, 1, -1, 2, -2) or isinstance(ord, bool):
        raise ValueError(f"For '{name}', the 'ord' must be 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2, but got {ord!r}.")
    A = _floating(name, A, dtype)
    rows, cols = axes
    if ord == "fro":
        return ops.sqrt(ops.sum(ops.square(A), axes, keepdim))
    if ord in (_INF, -_INF, 1, -1):
        summed, over = (cols, rows) if ord in (_INF, -_INF) else (rows, cols)
        extreme = ops.amax if ord > 0 else ops.amin
        out = extreme(ops.sum(ops.abs(A), summed, True), over, True)
        return out if keepdim else ops.squeeze(out, axes)
    values = _singular_values(A, axes)
    out = ops.sum(values, -1) if ord == "nuc" else (ops.amax if ord == 2 else ops.amin)(values, -1)
    if keepdim:
        for d in sorted(axes):
            out = ops.unsqueeze(out, d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """A vector norm (``vector_norm``) or a matrix norm (``matrix_norm``) of ``A``, as PyTorch chooses: an int
    ``dim`` (or a 1-tuple) is a vector norm, a pair a matrix norm; without ``dim``, ``ord`` None is the 2-norm of
    every element, and any other ``ord`` needs ``A`` 1-D (a vector norm) or 2-D (a matrix norm). ``ord`` None is
    2 for vectors and "fro" for matrices."""
    name = "norm"
    _check_tensor(name, "A", A)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise ValueError(
                f"For '{name}', an 'ord' without 'dim' needs a 1-D or 2-D 'A', but got shape {list(A.shape)}."
            )
        dim = tuple(range(A.ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 1:
        if isinstance(ord, str):
            raise ValueError(f"For '{name}', the 'ord' {ord!r} is a matrix norm, but 'dim' names one dim.")
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if len(dims) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    raise ValueError(f"For '{name}', the 'dim' must be an int, or a tuple of 1 or 2 ints, but got {dim!r}.")


def _square(name: str, A) -> None:
    _check_tensor(name, "A", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"For '{name}', the 'A' must be square matrices [..., n, n], but got shape {list(A.shape)}.")


def inv(A) -> Tensor:
    """The inverse of each square matrix of ``A`` [..., n, n] (MatrixInverse; float32, float64)."""
    _square("inv", A)
    return ops.inverse(A)


def det(A) -> Tensor:
    """The determinant of each square matrix of ``A`` [..., n, n] -> [...] (MatrixDeterminant; float32,
    float64). PyTorch's ``torch.linalg.det``; MindSpore has it as ``ops.det``."""
    _square("det", A)
    return ops.det(A)


def qr(A, mode="reduced") -> tuple:
    """(Q, R) with A = Q R of each matrix of ``A`` [..., m, n], Q orthonormal columns and R upper triangular:
    ``mode`` "reduced" (Q [..., m, k], R [..., k, n], k = min(m, n)), "complete" (Q [..., m, m], R [..., m, n]) or
    "r" (R of "reduced", and an empty Q). The Qr primitive: float32, float64 (R's diagonal signs are LAPACK's,
    as NumPy's)."""
    _check_tensor("qr", "A", A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"For 'qr', the 'mode' must be 'reduced', 'complete' or 'r', but got {mode!r}.")
    if A.ndim < 2:
        raise ValueError(f"For 'qr', the 'A' must have at least 2 dims, but got shape {list(A.shape)}.")
    q, r = ops.qr(A, "complete" if mode == "complete" else "reduced")
    if mode == "r":
        return ops.zeros((0,), A.dtype), r
    return q, r
