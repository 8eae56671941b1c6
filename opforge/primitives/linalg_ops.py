"""Linear algebra of the matrices in an input's last two dims, the leading dims a batch (MindSpore's names,
attributes and outputs): MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, Cholesky, Qr, Svd, Eigh,
MatrixSolve, MatrixTriangularSolve, Lu. CPU kernels: csrc/kernels/cpu/linalg.cc, through LAPACK
(scipy-openblas32's LAPACKE); GPU kernels: csrc/kernels/cuda/linalg.cu, a block per
matrix. dtypes: float32, float64."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _Operator, merge_dim, same_dim
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = [
    "MatrixInverse",
    "MatrixDeterminant",
    "LogMatrixDeterminant",
    "Cholesky",
    "Qr",
    "Svd",
    "Eigh",
    "MatrixSolve",
    "MatrixTriangularSolve",
    "Lu",
]

_LINALG_TYPES = (mstype.float32, mstype.float64)


def _min_dim(m, n):
    """min(M, N), unknown (-1) unless both are known."""
    return -1 if m < 0 or n < 0 else min(m, n)


class _MatrixOp(_Operator):
    """``Prim(...)(x)`` on x [..., M, N]; ``square``: M must equal N."""

    __mindspore_signature__ = (sig.make_sig("x"),)
    square = True

    def _matrix_dims(self, x_shape) -> tuple:
        if len(x_shape) < 2:
            raise ValueError(
                f"For '{self.name}', the input must have at least 2 dims (a matrix), but got shape {list(x_shape)}."
            )
        m, n = x_shape[-2], x_shape[-1]
        if self.square and not same_dim(m, n):
            raise ValueError(f"For '{self.name}', the matrices must be square, but got shape {list(x_shape)}.")
        return list(x_shape[:-2]), m, n

    def infer_dtype(self, x_dtype):
        t = validator.check_tensor_dtype_valid("x", x_dtype, _LINALG_TYPES, self.name)
        return (t,) * len(self.output_names) if len(self.output_names) > 1 else t


class MatrixInverse(_MatrixOp):
    r"""The inverse of each square matrix: ``MatrixInverse(adjoint=False)(x)``, :math:`y = x^{-1}`, or with
    ``adjoint`` :math:`y = (x^{-1})^T`. A singular matrix is an error naming its batch index.
    dtypes (CPU, GPU): float32, float64."""

    @prim_attr_register
    def __init__(self, adjoint=False):
        validator.check_value_type("adjoint", adjoint, [bool], self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        self._matrix_dims(x_shape)
        return list(x_shape)


class MatrixDeterminant(_MatrixOp):
    r"""The determinant of each square matrix: ``MatrixDeterminant()(x)`` -> :math:`\det x` of shape
    ``x.shape[:-2]`` (from the LU factors; 1 for a 0 x 0 matrix). dtypes (CPU, GPU): float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        return self._matrix_dims(x_shape)[0]


class LogMatrixDeterminant(_MatrixOp):
    r"""``LogMatrixDeterminant()(x)`` -> ``(sign, log_abs_determinant)``, each of shape ``x.shape[:-2]``:
    :math:`\det x = sign \cdot e^{\log|\det x|}` (sign 0 and :math:`-\infty` for a singular matrix).
    dtypes (CPU, GPU): float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["sign", "y"])

    def infer_shape(self, x_shape):
        batch = self._matrix_dims(x_shape)[0]
        return batch, list(batch)


class Cholesky(_MatrixOp):
    r"""The Cholesky factor of each symmetric positive-definite matrix: ``Cholesky(upper=False)(input_x)``,
    :math:`x = L L^T` with L lower triangular, or :math:`x = U^T U` with ``upper``. Only the named triangle
    of x is read; a matrix that is not positive definite is an error naming its batch index.
    dtypes (CPU, GPU): float32, float64."""

    @prim_attr_register
    def __init__(self, upper=False):
        validator.check_value_type("upper", upper, [bool], self.name)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])

    def infer_shape(self, x_shape):
        self._matrix_dims(x_shape)
        return list(x_shape)


class Qr(_MatrixOp):
    r"""The QR decomposition of each matrix: ``Qr(full_matrices=False)(x)`` -> ``(q, r)``, :math:`x = q r`
    with q orthonormal and r upper triangular; for x [M, N] and K = min(M, N), q [M, K] and r [K, N], or with
    ``full_matrices`` q [M, M] and r [M, N]. dtypes (CPU, GPU): float32, float64."""

    square = False

    @prim_attr_register
    def __init__(self, full_matrices=False):
        validator.check_value_type("full_matrices", full_matrices, [bool], self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["q", "r"])

    def infer_shape(self, x_shape):
        batch, m, n = self._matrix_dims(x_shape)
        k = m if self.full_matrices else _min_dim(m, n)
        return batch + [m, k], batch + [k, n]


class Svd(_MatrixOp):
    r"""The singular value decomposition of each matrix: ``Svd(full_matrices=False, compute_uv=True)(input)``
    -> ``(s, u, v)``, :math:`x = u \operatorname{diag}(s) v^T` with s descending; for x [M, N] and
    K = min(M, N): s [K], u [M, K], v [N, K], or with ``full_matrices`` u [M, M] and v [N, N]. Without
    ``compute_uv``, u and v are zeros (MindSpore's outputs). Each pair (u_j, v_j) is signed so that v_j's component
    of largest magnitude is positive. dtypes (CPU, GPU): float32, float64."""

    square = False

    @prim_attr_register
    def __init__(self, full_matrices=False, compute_uv=True):
        validator.check_value_type("full_matrices", full_matrices, [bool], self.name)
        validator.check_value_type("compute_uv", compute_uv, [bool], self.name)
        self.init_prim_io_names(inputs=["input"], outputs=["s", "u", "v"])

    def infer_shape(self, x_shape):
        batch, m, n = self._matrix_dims(x_shape)
        k = _min_dim(m, n)
        if self.full_matrices:
            return batch + [k], batch + [m, m], batch + [n, n]
        return batch + [k], batch + [m, k], batch + [n, k]


class Eigh(_MatrixOp):
    r"""The eigendecomposition of each symmetric matrix: ``Eigh(compute_eigenvectors=True, lower=True)(A)`` ->
    ``(w, v)``, :math:`A = v \operatorname{diag}(w) v^T` with w ascending [..., N] and the eigenvectors the
    columns of v [..., N, N], each signed so that its component of largest magnitude is positive. Only the
    lower (or, ``lower=False``, upper) triangle of A is read. Without
    ``compute_eigenvectors`` v is zeros (MindSpore's ``mindspore.scipy.ops.Eigh`` then gives w alone;
    ``opforge.scipy.linalg.eigh(a, eigvals_only=True)`` does). dtypes (CPU, GPU): float32, float64."""

    __mindspore_signature__ = (sig.make_sig("A"),)

    @prim_attr_register
    def __init__(self, compute_eigenvectors=True, lower=True):
        validator.check_value_type("compute_eigenvectors", compute_eigenvectors, [bool], self.name)
        validator.check_value_type("lower", lower, [bool], self.name)
        self.init_prim_io_names(inputs=["A"], outputs=["output_w", "output_v"])

    def infer_shape(self, a_shape):
        batch, m, n = self._matrix_dims(a_shape)
        return batch + [merge_dim(m, n)], list(a_shape)


class _SolveOp(_MatrixOp):
    """``Prim(...)(matrix, rhs)``: matrix [..., M, M], rhs [..., M, K] with the same batch; out like rhs."""

    __mindspore_signature__ = (sig.make_sig("matrix"), sig.make_sig("rhs"))

    def infer_shape(self, matrix_shape, rhs_shape):
        batch, m, _ = self._matrix_dims(matrix_shape)
        rhs = list(rhs_shape)
        if (
            len(rhs) != len(matrix_shape)
            or not all(same_dim(a, b) for a, b in zip(batch, rhs[:-2]))
            or not same_dim(m, rhs[-2])
        ):
            raise ValueError(
                f"For '{self.name}', the 'rhs' must have shape [..., M, K] with the batch and M of 'matrix' "
                f"{list(matrix_shape)}, but got {rhs}."
            )
        return rhs

    def infer_dtype(self, matrix_dtype, rhs_dtype):
        return validator.check_tensors_dtypes_same_and_valid(
            {"matrix": matrix_dtype, "rhs": rhs_dtype}, _LINALG_TYPES, self.name
        )


class MatrixSolve(_SolveOp):
    r"""The solution x of the linear systems ``MatrixSolve(adjoint=False)(matrix, rhs)``:
    :math:`matrix \cdot x = rhs`, or :math:`matrix^T x = rhs` with ``adjoint``; matrix [..., M, M], rhs and x
    [..., M, K]. By LU with partial pivoting; a singular matrix is an error naming its batch index.
    dtypes (CPU, GPU): float32, float64."""

    @prim_attr_register
    def __init__(self, adjoint=False):
        validator.check_value_type("adjoint", adjoint, [bool], self.name)
        self.init_prim_io_names(inputs=["matrix", "rhs"], outputs=["y"])


class MatrixTriangularSolve(_SolveOp):
    r"""The solution x of the triangular systems ``MatrixTriangularSolve(lower=True, adjoint=False)(matrix,
    rhs)``: :math:`matrix \cdot x = rhs`, or :math:`matrix^T x = rhs` with ``adjoint``, reading the lower
    (or, ``lower=False``, upper) triangle of matrix [..., M, M] and ignoring the other; rhs and x [..., M, K].
    By substitution; a zero on the diagonal is an error naming its batch index. dtypes (CPU, GPU): float32,
    float64."""

    @prim_attr_register
    def __init__(self, lower=True, adjoint=False):
        validator.check_value_type("lower", lower, [bool], self.name)
        validator.check_value_type("adjoint", adjoint, [bool], self.name)
        self.init_prim_io_names(inputs=["matrix", "rhs"], outputs=["y"])


class Lu(_MatrixOp):
    r"""The LU decomposition with partial pivoting of each square matrix (``mindspore.scipy.ops.LU``):
    ``Lu()(x)`` -> ``(lu, pivots, permutation)``, :math:`x = P L U` with L unit lower triangular and U upper
    triangular: ``lu`` [..., M, M] holds U on and above the diagonal and L below it (L's unit diagonal not
    stored), ``pivots`` [..., M] int32 the 0-based row swaps (row k was swapped with row ``pivots[k]``, in
    order), ``permutation`` [..., M, M] int32 the matrix P. A singular matrix has one too (a zero on U's
    diagonal); a matrix holding a NaN or an infinity gives a NaN ``lu`` and no swaps. dtypes (CPU, GPU):
    float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["lu", "pivots", "permutation"])

    def infer_shape(self, x_shape):
        batch, m, n = self._matrix_dims(x_shape)
        return list(x_shape), batch + [m], list(x_shape)

    def infer_dtype(self, x_dtype):
        t = validator.check_tensor_dtype_valid("x", x_dtype, _LINALG_TYPES, self.name)
        return t, mstype.int32, mstype.int32
