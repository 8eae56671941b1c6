"""GPU kernels of MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve, Eigh,
Qr, Svd, Lu and Cholesky: the block-per-matrix kernels of ``csrc/kernels/cuda/linalg.cu`` (LU with partial pivoting
as LAPACK's getrf, then the inverse, the solutions or the determinant from its factors; substitution; cyclic
Jacobi rotations; Householder reflections as LAPACK's geqrf and orgqr; one-sided Jacobi rotations; Cholesky
column by column), for every KernelAttr the CPU registers. A singular matrix (MatrixInverse, the solves) or one
not positive definite (Cholesky), or a decomposition that did not converge, is an error naming its batch
index, as on the CPU: the per-matrix ``info`` is checked on the device after the launches and the verdict read
back (``range_check.failure_steps``: one word, launched from C)."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.range_check import failure_steps
from opforge.kernels.gpu.support import StepPlan, device_launch, output_specs

_SOURCE = "linalg.cu"
MATRIX_BLOCK = 128  # threads per matrix (kBlock)
_MAX_GRID = 65535


def _matrices(spec) -> tuple:
    shape = list(spec.in_shapes[0])
    return math.prod(shape[:-2]), shape[-1]


def _failed(plan: StepPlan, spec, info: tuple, batch: int, what: str) -> None:
    """The first matrix whose factorization failed (info > 0: a zero pivot, no convergence): an error naming it,
    raised after the launches."""

    def error(position):
        return KernelError(f"For '{spec.op_name}', the matrix at batch index {position} {what}.")

    failure_steps(plan, info, batch, error)


def _matrix_kernel(plan: StepPlan, function, batch: int, params: list) -> None:
    """A launch of a block per matrix (``MATRIX_BLOCK`` threads)."""
    plan.steps.append((function, (min(batch, _MAX_GRID), 1, 1), (MATRIX_BLOCK, 1, 1), 0, params))


def _lu_steps(plan: StepPlan, spec, kernel, lu=None) -> tuple:
    """``LuFactorKernel<T, kBlock>(x, lu, piv, info, batch, n)``: the params of (lu, piv, info), temporaries (``lu``
    the given param where one is), not written for empty matrices."""
    batch, n = _matrices(spec)
    lu = plan.temp((batch, n, n)) if lu is None else lu
    piv, info = plan.temp((batch, n), np.int32), plan.temp((batch,), np.int32)
    if batch and n:
        factor = function_for(spec.device.runtime, kernel, kernel.helpers[0])
        _matrix_kernel(plan, factor, batch, [("in", 0), lu, piv, info, np.int64(batch), np.int64(n)])
    return lu, piv, info


def _plan(spec) -> StepPlan:
    return StepPlan(spec.device.runtime, spec.entry.attr.outputs[0].np_dtype)


def _inverse_loop(spec, function, kernel):
    """``InverseFromLuKernel<T, kBlock>(lu, piv, info, y, batch, n, adjoint)`` after the LU factors."""
    batch, n = _matrices(spec)
    adjoint = np.int32(bool(spec.attrs.get("adjoint", False)))
    plan = _plan(spec)
    if batch and n:
        lu, piv, info = _lu_steps(plan, spec, kernel)
        _matrix_kernel(plan, function, batch, [lu, piv, info, ("out", 0), np.int64(batch), np.int64(n), adjoint])
        _failed(plan, spec, info, batch, "is singular: it has no inverse")
    return plan.launch(spec, output_specs(spec))


def _determinant_loop(spec, function, kernel):
    """``DeterminantKernel<T, kLog>(lu, piv, info, first, second, batch, n)``: a thread per matrix (an empty one's
    determinant is 1)."""
    batch, n = _matrices(spec)
    log = spec.op_name == "LogMatrixDeterminant"
    plan = _plan(spec)
    lu, piv, info = _lu_steps(plan, spec, kernel)
    second = ("out", 1) if log else ("out", 0)
    plan.kernel(function, batch, [lu, piv, info, ("out", 0), second, np.int64(batch), np.int64(n)])
    outputs = output_specs(spec)
    return plan.launch(spec, outputs if log else outputs[:1])


def _solve_loop(spec, function, kernel):
    """``SolveFromLuKernel<T, kBlock>(lu, piv, info, rhs, y, batch, n, k, adjoint)`` after the LU factors."""
    batch, n = _matrices(spec)
    k = spec.in_shapes[1][-1]
    adjoint = np.int32(bool(spec.attrs.get("adjoint", False)))
    plan = _plan(spec)
    if batch and n and k:
        lu, piv, info = _lu_steps(plan, spec, kernel)
        sizes = (np.int64(batch), np.int64(n), np.int64(k), adjoint)
        _matrix_kernel(plan, function, batch, [lu, piv, info, ("in", 1), ("out", 0), *sizes])
        _failed(plan, spec, info, batch, "is singular: the system has no unique solution")
    return plan.launch(spec, output_specs(spec))


def _triangular_solve_loop(spec, function, kernel):
    """``TriangularSolveKernel<T, kBlock>(x, rhs, y, info, batch, n, k, lower, adjoint)``."""
    batch, n = _matrices(spec)
    k = spec.in_shapes[1][-1]
    flags = (np.int32(bool(spec.attrs.get("lower", True))), np.int32(bool(spec.attrs.get("adjoint", False))))
    plan = _plan(spec)
    if batch and n and k:
        info = plan.temp((batch,), np.int32)
        sizes = (np.int64(batch), np.int64(n), np.int64(k), *flags)
        _matrix_kernel(plan, function, batch, [("in", 0), ("in", 1), ("out", 0), info, *sizes])
        _failed(plan, spec, info, batch, "has a zero on its diagonal: it is singular")
    return plan.launch(spec, output_specs(spec))


def _eigh_loop(spec, function, kernel):
    """``EighJacobiKernel<T, kBlock>(x, work, order, w, v, info, batch, n, lower, vectors)``."""
    batch, n = _matrices(spec)
    flags = (
        np.int32(bool(spec.attrs.get("lower", True))),
        np.int32(bool(spec.attrs.get("compute_eigenvectors", True))),
    )
    plan = _plan(spec)
    if batch and n:
        work, order, info = plan.temp((batch, n, n)), plan.temp((batch, n), np.int32), plan.temp((batch,), np.int32)
        params = [("in", 0), work, order, ("out", 0), ("out", 1), info, np.int64(batch), np.int64(n), *flags]
        _matrix_kernel(plan, function, batch, params)
        _failed(plan, spec, info, batch, "did not converge: its eigendecomposition failed")
    return plan.launch(spec, output_specs(spec))


def _qr_loop(spec, function, kernel):
    """``QrKernel<T, kBlock>(x, work, tau, q, r, batch, m, n, full)``."""
    shape = list(spec.in_shapes[0])
    batch, m, n = math.prod(shape[:-2]), shape[-2], shape[-1]
    full = np.int32(bool(spec.attrs.get("full_matrices", False)))
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    outputs = [(s, np_dtype) for s in spec.out_shapes]
    temps, steps = [], []
    if batch and sum(math.prod(s) for s, _ in outputs):
        temps = [((batch, m, n), np_dtype), ((batch, max(min(m, n), 1)), np_dtype)]
        params = [("in", 0), ("tmp", 0), ("tmp", 1), ("out", 0), ("out", 1), np.int64(batch), np.int64(m), np.int64(n)]
        steps = [(function, (min(batch, _MAX_GRID), 1, 1), (MATRIX_BLOCK, 1, 1), 0, [*params, full])]
    return device_launch(spec, outputs, steps, temps)


def _svd_loop(spec, function, kernel):
    """``SvdJacobiKernel<T, kBlock>(x, work, vp, order, s, u, v, info, batch, m, n, full, compute_uv)``."""
    shape = list(spec.in_shapes[0])
    batch, m, n = math.prod(shape[:-2]), shape[-2], shape[-1]
    k = min(m, n)
    full, compute_uv = bool(spec.attrs.get("full_matrices", False)), bool(spec.attrs.get("compute_uv", True))
    plan = _plan(spec)
    if not (batch and k):
        return _no_singular_values(plan, spec, kernel, compute_uv)
    work, vp = plan.temp((batch, max(m, n), k)), plan.temp((batch, k, k))
    order, info = plan.temp((batch, k), np.int32), plan.temp((batch,), np.int32)
    sizes = (np.int64(batch), np.int64(m), np.int64(n), np.int32(full), np.int32(compute_uv))
    params = [("in", 0), work, vp, order, ("out", 0), ("out", 1), ("out", 2), info, *sizes]
    _matrix_kernel(plan, function, batch, params)
    _failed(plan, spec, info, batch, "did not converge: its SVD failed")
    return plan.launch(spec, output_specs(spec))


def _no_singular_values(plan: StepPlan, spec, kernel, compute_uv: bool):
    """An SVD without singular values: u and v the identity's first columns (zeros without compute_uv), as the
    CPU's (``EyeKernel<T>(y, total, rows, cols, ones)``)."""
    eye = function_for(plan.runtime, kernel, kernel.helpers[0])
    for j, shape in enumerate(spec.out_shapes[1:], start=1):
        total, rows, cols = math.prod(shape), shape[-2], shape[-1]
        plan.kernel(eye, total, [("out", j), np.int64(total), np.int64(rows), np.int64(cols), np.int32(compute_uv)])
    return plan.launch(spec, output_specs(spec))


def _lu_loop(spec, function, kernel):
    """``LuPermutationKernel(piv, info, pivots, perm, rows, batch, n)`` after the LU factors (into output 0)."""
    batch, n = _matrices(spec)
    plan = _plan(spec)
    if batch and n:
        _, piv, info = _lu_steps(plan, spec, kernel, lu=("out", 0))
        rows = plan.temp((batch, n), np.int32)
        plan.kernel(function, batch, [piv, info, ("out", 1), ("out", 2), rows, np.int64(batch), np.int64(n)])
    return plan.launch(spec, output_specs(spec))


def _cholesky_loop(spec, function, kernel):
    """``CholeskyKernel<T, kBlock>(x, y, info, batch, n, upper)``."""
    batch, n = _matrices(spec)
    upper = np.int32(bool(spec.attrs.get("upper", False)))
    plan = _plan(spec)
    if batch and n:
        info = plan.temp((batch,), np.int32)
        _matrix_kernel(plan, function, batch, [("in", 0), ("out", 0), info, np.int64(batch), np.int64(n), upper])
        _failed(plan, spec, info, batch, "is not positive definite: it has no Cholesky factor")
    return plan.launch(spec, output_specs(spec))


def _lu_helper(t: str) -> tuple:
    return (f"opforge::cuda::LuFactorKernel<{t}, {MATRIX_BLOCK}>",)


def _make_inverse(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    name = f"opforge::cuda::InverseFromLuKernel<{t}, {MATRIX_BLOCK}>"
    return CudaKernel(_SOURCE, name, _inverse_loop, helpers=_lu_helper(t))


def _make_determinant(log: bool):
    def make(attr) -> CudaKernel:
        t = ctype(attr.inputs[0])
        name = f"opforge::cuda::DeterminantKernel<{t}, {'true' if log else 'false'}>"
        return CudaKernel(_SOURCE, name, _determinant_loop, helpers=_lu_helper(t))

    return make


def _make_solve(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    name = f"opforge::cuda::SolveFromLuKernel<{t}, {MATRIX_BLOCK}>"
    return CudaKernel(_SOURCE, name, _solve_loop, helpers=_lu_helper(t))


def _make_triangular_solve(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::TriangularSolveKernel<{t}, {MATRIX_BLOCK}>", _triangular_solve_loop)


def _make_eigh(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::EighJacobiKernel<{t}, {MATRIX_BLOCK}>", _eigh_loop)


def _make_qr(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::QrKernel<{t}, {MATRIX_BLOCK}>", _qr_loop)


def _make_svd(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    name = f"opforge::cuda::SvdJacobiKernel<{t}, {MATRIX_BLOCK}>"
    return CudaKernel(_SOURCE, name, _svd_loop, helpers=(f"opforge::cuda::EyeKernel<{t}>",))


def _make_lu(attr) -> CudaKernel:
    return CudaKernel(
        _SOURCE, "opforge::cuda::LuPermutationKernel", _lu_loop, helpers=_lu_helper(ctype(attr.inputs[0]))
    )


def _make_cholesky(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::CholeskyKernel<{t}, {MATRIX_BLOCK}>", _cholesky_loop)


mirror_cpu_kernels("MatrixInverse", _make_inverse)
mirror_cpu_kernels("MatrixDeterminant", _make_determinant(False))
mirror_cpu_kernels("LogMatrixDeterminant", _make_determinant(True))
mirror_cpu_kernels("MatrixSolve", _make_solve)
mirror_cpu_kernels("MatrixTriangularSolve", _make_triangular_solve)
mirror_cpu_kernels("Eigh", _make_eigh)
mirror_cpu_kernels("Qr", _make_qr)
mirror_cpu_kernels("Svd", _make_svd)
mirror_cpu_kernels("Lu", _make_lu)
mirror_cpu_kernels("Cholesky", _make_cholesky)
