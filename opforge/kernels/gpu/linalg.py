"""GPU kernels of MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve, Eigh,
Qr, Svd, Lu and Cholesky: the block-per-matrix kernels of ``csrc/kernels/cuda/linalg.cu`` (LU with partial pivoting
as LAPACK's getrf, then the inverse, the solutions or the determinant from its factors; substitution; cyclic
Jacobi rotations; Householder reflections as LAPACK's geqrf and orgqr; one-sided Jacobi rotations; Cholesky
column by column), for every KernelAttr the CPU registers. A singular matrix (MatrixInverse, the solves) or one
not positive definite (Cholesky) is an error naming its batch index, as on the CPU: the per-matrix ``info`` is
read back to the host after the launch (a synchronisation)."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, launch_1d, step_1d

_SOURCE = "linalg.cu"
MATRIX_BLOCK = 128  # threads per matrix (kBlock)
_MAX_GRID = 65535


def _matrices(spec) -> tuple:
    shape = list(spec.in_shapes[0])
    return math.prod(shape[:-2]), shape[-1]


def _check_info(op_name: str, runtime, info, what: str) -> None:
    """The first matrix whose factorization stopped at a pivot (info > 0): an error naming it."""
    host = runtime.to_host(info)
    failed = np.flatnonzero(host > 0)
    if failed.size:
        raise KernelError(f"For '{op_name}', the matrix at batch index {int(failed[0])} {what}.")


def _lu_plan(spec, kernel) -> tuple:
    """``_lu`` as a ``device_launch``'s data: its temporaries (lu, piv, info: ``("tmp", 0)`` to ``("tmp", 2)``) and
    its steps (none for empty matrices)."""
    batch, n = _matrices(spec)
    temps = [((batch, n, n), spec.entry.attr.inputs[0].np_dtype), ((batch, n), np.int32), ((batch,), np.int32)]
    if not (batch and n):
        return temps, []
    factor = function_for(spec.device.runtime, kernel, kernel.helpers[0])
    params = [("in", 0), ("tmp", 0), ("tmp", 1), ("tmp", 2), np.int64(batch), np.int64(n)]
    return temps, [(factor, (min(batch, _MAX_GRID), 1, 1), (MATRIX_BLOCK, 1, 1), 0, params)]


def _lu(spec, kernel, arrays):
    """``LuFactorKernel<T, kBlock>(x, lu, piv, info, batch, n)``: (lu, piv, info) on the device."""
    device = spec.device
    temps, steps = _lu_plan(spec, kernel)
    lu, piv, info = (device.empty(shape, dtype) for shape, dtype in temps)
    for factor, grid, block, _, params in steps:
        device.runtime.launch(factor, grid, block, (arrays[0], lu, piv, info, *params[4:]))
    return lu, piv, info


def _inverse_loop(spec, function, kernel):
    """``InverseFromLuKernel<T, kBlock>(lu, piv, info, y, batch, n, adjoint)`` after the LU factors."""
    device, runtime = spec.device, spec.device.runtime
    batch, n = _matrices(spec)
    adjoint = np.int32(bool(spec.attrs.get("adjoint", False)))

    def run(arrays):
        y = device.empty(spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype)
        if batch and n:
            lu, piv, info = _lu(spec, kernel, arrays)
            _check_info(spec.op_name, runtime, info, "is singular: it has no inverse")
            grid = (min(batch, _MAX_GRID), 1, 1)
            runtime.launch(
                function, grid, (MATRIX_BLOCK, 1, 1), (lu, piv, info, y, np.int64(batch), np.int64(n), adjoint)
            )
        return y

    return run


def _determinant_loop(spec, function, kernel):
    """``DeterminantKernel<T, kLog>(lu, piv, info, first, second, batch, n)``: a thread per matrix."""
    batch, n = _matrices(spec)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    log = spec.op_name == "LogMatrixDeterminant"
    outputs = [(shape, np_dtype) for shape in (spec.out_shapes if log else spec.out_shapes[:1])]
    temps, steps = _lu_plan(spec, kernel)
    second = ("out", 1) if log else ("out", 0)
    params = [("tmp", 0), ("tmp", 1), ("tmp", 2), ("out", 0), second, np.int64(batch), np.int64(n)]
    steps += step_1d(spec.device.runtime, function, batch, params)
    return device_launch(spec, outputs, steps, temps)


def _solve_loop(spec, function, kernel):
    """``SolveFromLuKernel<T, kBlock>(lu, piv, info, rhs, y, batch, n, k, adjoint)`` after the LU factors."""
    device, runtime = spec.device, spec.device.runtime
    batch, n = _matrices(spec)
    k = spec.in_shapes[1][-1]
    adjoint = np.int32(bool(spec.attrs.get("adjoint", False)))

    def run(arrays):
        y = device.empty(spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype)
        if batch and n and k:
            lu, piv, info = _lu(spec, kernel, arrays)
            _check_info(spec.op_name, runtime, info, "is singular: the system has no unique solution")
            grid = (min(batch, _MAX_GRID), 1, 1)
            args = (lu, piv, info, arrays[1], y, np.int64(batch), np.int64(n), np.int64(k), adjoint)
            runtime.launch(function, grid, (MATRIX_BLOCK, 1, 1), args)
        return y

    return run


def _triangular_solve_loop(spec, function, kernel):
    """``TriangularSolveKernel<T, kBlock>(x, rhs, y, info, batch, n, k, lower, adjoint)``."""
    device, runtime = spec.device, spec.device.runtime
    batch, n = _matrices(spec)
    k = spec.in_shapes[1][-1]
    flags = (np.int32(bool(spec.attrs.get("lower", True))), np.int32(bool(spec.attrs.get("adjoint", False))))

    def run(arrays):
        y = device.empty(spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype)
        if batch and n and k:
            info = device.empty((batch,), np.int32)
            grid = (min(batch, _MAX_GRID), 1, 1)
            args = (arrays[0], arrays[1], y, info, np.int64(batch), np.int64(n), np.int64(k), *flags)
            runtime.launch(function, grid, (MATRIX_BLOCK, 1, 1), args)
            _check_info(spec.op_name, runtime, info, "has a zero on its diagonal: it is singular")
        return y

    return run


def _eigh_loop(spec, function, kernel):
    """``EighJacobiKernel<T, kBlock>(x, work, order, w, v, info, batch, n, lower, vectors)``."""
    device, runtime = spec.device, spec.device.runtime
    batch, n = _matrices(spec)
    flags = (
        np.int32(bool(spec.attrs.get("lower", True))),
        np.int32(bool(spec.attrs.get("compute_eigenvectors", True))),
    )
    np_dtype = spec.entry.attr.outputs[0].np_dtype

    def run(arrays):
        w, v = (device.empty(shape, np_dtype) for shape in spec.out_shapes)
        if batch and n:
            work = device.empty((batch, n, n), np_dtype)
            order, info = device.empty((batch, n), np.int32), device.empty((batch,), np.int32)
            grid = (min(batch, _MAX_GRID), 1, 1)
            args = (arrays[0], work, order, w, v, info, np.int64(batch), np.int64(n), *flags)
            runtime.launch(function, grid, (MATRIX_BLOCK, 1, 1), args)
            _check_info(spec.op_name, runtime, info, "did not converge: its eigendecomposition failed")
        return w, v

    return run


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
    device, runtime = spec.device, spec.device.runtime
    shape = list(spec.in_shapes[0])
    batch, m, n = math.prod(shape[:-2]), shape[-2], shape[-1]
    k = min(m, n)
    full, compute_uv = bool(spec.attrs.get("full_matrices", False)), bool(spec.attrs.get("compute_uv", True))
    np_dtype = spec.entry.attr.outputs[0].np_dtype

    def run(arrays):
        s, u, v = (device.empty(shape, np_dtype) for shape in spec.out_shapes)
        if batch and k:
            work, vp = device.empty((batch, max(m, n), k), np_dtype), device.empty((batch, k, k), np_dtype)
            order, info = device.empty((batch, k), np.int32), device.empty((batch,), np.int32)
            grid = (min(batch, _MAX_GRID), 1, 1)
            flags = (np.int32(full), np.int32(compute_uv))
            args = (arrays[0], work, vp, order, s, u, v, info, np.int64(batch), np.int64(m), np.int64(n), *flags)
            runtime.launch(function, grid, (MATRIX_BLOCK, 1, 1), args)
            _check_info(spec.op_name, runtime, info, "did not converge: its SVD failed")
        else:  # no singular values: u and v the identity's first columns (zeros without compute_uv), as the CPU's
            u, v = (
                device.asarray(np.broadcast_to(np.eye(*t.shape[-2:]) * compute_uv, t.shape), np_dtype) for t in (u, v)
            )
        return s, u, v

    return run


def _lu_loop(spec, function, kernel):
    """``LuPermutationKernel(piv, info, pivots, perm, rows, batch, n)`` after the LU factors."""
    device = spec.device
    batch, n = _matrices(spec)

    def run(arrays):
        shapes = spec.out_shapes
        pivots, perm = device.empty(shapes[1], np.int32), device.empty(shapes[2], np.int32)
        if not (batch and n):
            return device.empty(shapes[0], spec.entry.attr.outputs[0].np_dtype), pivots, perm
        lu, piv, info = _lu(spec, kernel, arrays)
        rows = device.empty((batch, n), np.int32)
        launch_1d(device.runtime, function, batch, (piv, info, pivots, perm, rows, np.int64(batch), np.int64(n)))
        return lu.reshape(shapes[0]), pivots, perm

    return run


def _cholesky_loop(spec, function, kernel):
    """``CholeskyKernel<T, kBlock>(x, y, info, batch, n, upper)``."""
    device, runtime = spec.device, spec.device.runtime
    batch, n = _matrices(spec)
    upper = np.int32(bool(spec.attrs.get("upper", False)))

    def run(arrays):
        y = device.empty(spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype)
        if batch and n:
            info = device.empty((batch,), np.int32)
            grid = (min(batch, _MAX_GRID), 1, 1)
            runtime.launch(
                function, grid, (MATRIX_BLOCK, 1, 1), (arrays[0], y, info, np.int64(batch), np.int64(n), upper)
            )
            _check_info(spec.op_name, runtime, info, "is not positive definite: it has no Cholesky factor")
        return y

    return run


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
    return CudaKernel(_SOURCE, f"opforge::cuda::SvdJacobiKernel<{t}, {MATRIX_BLOCK}>", _svd_loop)


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
