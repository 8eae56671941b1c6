"""cuBLAS's GEMM called directly (ctypes), for the GEMMs of a CUDA graph being captured.

CuPy refuses its cuBLAS calls while a stream captures ("calling cuBLAS API during stream capture is
currently unsupported"), though cuBLAS itself records into graphs. So while ``CupyRuntime`` captures,
MatMul, BatchMatMul and the convolutions' GEMMs call ``cublasGemmEx`` / ``cublasGemmStridedBatchedEx``
here, on CuPy's cuBLAS handle (the library CuPy loaded, the handle's stream set to the capturing one
for the call and restored after), with the arguments CuPy's own call uses for the same product, so the
graph's results are the eager ones. Outside a capture, CuPy's ``matmul`` runs as always, or, for a call
launched from C (``_C.DeviceLaunch``), the same two cuBLAS functions with the same arguments (``plan_gemm``,
``native_entries``).

Row-major ``out = op(a) @ op(b)`` is column-major ``out^T = op(b)^T @ op(a)^T``: b is cuBLAS's first
operand. Floating types only (float16 and bfloat16 summed in float32, as CuPy's); batch dims equal on
both sides or absent on one (a stride of 0). Anything else raises ``GraphCaptureError``.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np

from opforge.device.gpu import GraphCaptureError

__all__ = ["GemmPlan", "call_gemm", "gemm", "native_entries", "plan_gemm"]

_OP_N, _OP_T = 0, 1
_GEMM_DEFAULT = -1
# numpy dtype -> (cudaDataType, cublasComputeType, the C type of alpha and beta)
_TYPES = {
    np.dtype(np.float32): (0, 68, ctypes.c_float),  # CUDA_R_32F, CUBLAS_COMPUTE_32F
    np.dtype(np.float64): (1, 70, ctypes.c_double),  # CUDA_R_64F, CUBLAS_COMPUTE_64F
    np.dtype(np.float16): (2, 68, ctypes.c_float),  # CUDA_R_16F, summed in float32
}
try:
    import ml_dtypes

    _TYPES[np.dtype(ml_dtypes.bfloat16)] = (14, 68, ctypes.c_float)  # CUDA_R_16BF
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    pass

_library = None


def _cublas():
    """The cuBLAS library CuPy loaded into this process (found by its path in the process's maps)."""
    global _library
    if _library is None:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libcublas.so" in line and "Lt" not in line}
        if not paths:
            raise GraphCaptureError("a GEMM while capturing, but cuBLAS is not loaded")
        lib = ctypes.CDLL(sorted(paths)[0])
        lib.cublasGetStream_v2.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.cublasSetStream_v2.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        _library = lib
    return _library


@dataclass(frozen=True)
class GemmPlan:
    """The arguments of ``cublasGemmEx`` (``batch`` 1) or ``cublasGemmStridedBatchedEx`` for one row-major
    product, in cuBLAS's order: ``b`` is the first operand. ``alpha`` and ``beta`` are 1 and 0 as the bytes
    of ``compute``'s scalar type."""

    op_b: int
    op_a: int
    n: int
    m: int
    k: int
    ldb: int
    stride_b: int
    lda: int
    stride_a: int
    ldc: int
    stride_c: int
    batch: int
    data_type: int
    compute: int
    alpha: bytes
    beta: bytes


def _batch_stride(shape: tuple, rows: int, cols: int, batch: int):
    """The element stride between an operand's matrices in a batch of ``batch`` (0: one matrix for all), or
    None where its batch dims broadcast partly."""
    own = math.prod(shape[:-2])
    if own == batch:
        return rows * cols
    return 0 if own == 1 else None


def plan_gemm(dtype, a_shape: tuple, b_shape: tuple, out_shape: tuple, transpose_a: bool, transpose_b: bool):
    """The GemmPlan of ``out = op(a) @ op(b)`` for C-contiguous operands of these shapes, or None where cuBLAS
    cannot take it as one call: a dtype other than the floating ones, batch dims that broadcast partly."""
    dtype = np.dtype(dtype)
    if dtype not in _TYPES:
        return None
    data_type, compute, scalar = _TYPES[dtype]
    m, n = out_shape[-2], out_shape[-1]
    k = a_shape[-2] if transpose_a else a_shape[-1]
    batch = math.prod(out_shape[:-2])
    stride_a = _batch_stride(a_shape, m, k, batch)
    stride_b = _batch_stride(b_shape, k, n, batch)
    if stride_a is None or stride_b is None:
        return None
    return GemmPlan(
        op_b=_OP_T if transpose_b else _OP_N, op_a=_OP_T if transpose_a else _OP_N, n=n, m=m, k=k,
        ldb=k if transpose_b else n, stride_b=stride_b, lda=m if transpose_a else k, stride_a=stride_a,
        ldc=n, stride_c=m * n, batch=batch, data_type=data_type, compute=compute,
        alpha=bytes(scalar(1)), beta=bytes(scalar(0)),
    )  # fmt: skip


def gemm(handle: int, stream: int, a, b, out, transpose_a: bool, transpose_b: bool) -> None:
    """``out = op(a) @ op(b)`` for C-contiguous CuPy arrays (see the module docstring), on ``stream``."""
    dtype = np.dtype(out.dtype)
    if a.dtype != dtype or b.dtype != dtype:
        raise GraphCaptureError(f"a GEMM of {a.dtype} and {b.dtype} into {dtype} while a CUDA graph was being captured")
    plan = plan_gemm(dtype, a.shape, b.shape, out.shape, transpose_a, transpose_b)
    if plan is None:
        raise GraphCaptureError(
            f"a {dtype} GEMM of shapes {a.shape} and {b.shape} while a CUDA graph was being captured (floating "
            f"types only, batch dims equal or absent on one side)"
        )
    if out.size == 0:
        return
    lib = _cublas()
    previous = ctypes.c_void_p()
    lib.cublasGetStream_v2(ctypes.c_void_p(handle), ctypes.byref(previous))
    lib.cublasSetStream_v2(ctypes.c_void_p(handle), ctypes.c_void_p(stream))
    try:
        status = call_gemm(lib.cublasGemmEx, lib.cublasGemmStridedBatchedEx, handle, plan, a.data.ptr, b.data.ptr,
                           out.data.ptr)  # fmt: skip
    finally:
        lib.cublasSetStream_v2(ctypes.c_void_p(handle), previous)
    if status != 0:
        raise GraphCaptureError(f"cuBLAS's GEMM returned status {status} while a CUDA graph was being captured")


def call_gemm(gemm, strided, handle, plan: GemmPlan, a: int, b: int, out: int) -> int:
    """``gemm`` (cublasGemmEx's signature, batch 1) or ``strided`` (cublasGemmStridedBatchedEx's) through ctypes
    with ``plan`` on the addresses ``a``, ``b``, ``out``: the arguments _C.DeviceLaunch passes from C. Returns
    cuBLAS's status."""
    p, ptr = plan, ctypes.c_void_p
    common = (
        ptr(handle), ctypes.c_int(p.op_b), ctypes.c_int(p.op_a),
        ctypes.c_int(p.n), ctypes.c_int(p.m), ctypes.c_int(p.k), ctypes.c_char_p(p.alpha),
    )  # fmt: skip
    if p.batch == 1:
        return gemm(
            *common,
            ptr(b), ctypes.c_int(p.data_type), ctypes.c_int(p.ldb),
            ptr(a), ctypes.c_int(p.data_type), ctypes.c_int(p.lda),
            ctypes.c_char_p(p.beta),
            ptr(out), ctypes.c_int(p.data_type), ctypes.c_int(p.ldc),
            ctypes.c_int(p.compute), ctypes.c_int(_GEMM_DEFAULT),
        )  # fmt: skip
    return strided(
        *common,
        ptr(b), ctypes.c_int(p.data_type), ctypes.c_int(p.ldb), ctypes.c_longlong(p.stride_b),
        ptr(a), ctypes.c_int(p.data_type), ctypes.c_int(p.lda), ctypes.c_longlong(p.stride_a),
        ctypes.c_char_p(p.beta),
        ptr(out), ctypes.c_int(p.data_type), ctypes.c_int(p.ldc), ctypes.c_longlong(p.stride_c),
        ctypes.c_int(p.batch), ctypes.c_int(p.compute), ctypes.c_int(_GEMM_DEFAULT),
    )  # fmt: skip


def native_entries(load_handle) -> tuple:
    """``GpuRuntime.native_gemm`` for CuPy: the addresses of ``cublasGemmEx``, ``cublasGemmStridedBatchedEx``
    and ``cublasSetStream_v2`` in the cuBLAS CuPy loaded (``load_handle()``, CuPy's handle, loads it)."""
    load_handle()
    lib = _cublas()
    address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value  # noqa: E731
    return ("cublas", address(lib.cublasGemmEx), address(lib.cublasGemmStridedBatchedEx), load_handle,
            address(lib.cublasSetStream_v2))  # fmt: skip
