"""cuBLAS's GEMM called directly (ctypes), for the GEMMs of a CUDA graph being captured.

CuPy refuses its cuBLAS calls while a stream captures ("calling cuBLAS API during stream capture is
currently unsupported"), though cuBLAS itself records into graphs. So while ``CupyRuntime`` captures,
MatMul, BatchMatMul and the convolutions' GEMMs call ``cublasGemmEx`` / ``cublasGemmStridedBatchedEx``
here, on CuPy's cuBLAS handle (the library CuPy loaded, the handle's stream set to the capturing one
for the call and restored after), with the arguments CuPy's own call uses for the same product, so the
graph's results are the eager ones. Outside a capture, CuPy's ``matmul`` runs as always.

Row-major ``out = op(a) @ op(b)`` is column-major ``out^T = op(b)^T @ op(a)^T``: b is cuBLAS's first
operand. Floating types only (float16 and bfloat16 summed in float32, as CuPy's); batch dims equal on
both sides or absent on one (a stride of 0). Anything else raises ``GraphCaptureError``.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from opforge.device.gpu import GraphCaptureError

__all__ = ["gemm"]

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


def _batch(shape: tuple, rows: int, cols: int, batch: int, where: str) -> int:
    """The element stride between an operand's matrices in a batch of ``batch`` (0: one matrix for all)."""
    own = math.prod(shape[:-2])
    if own == batch:
        return rows * cols
    if own == 1:
        return 0
    raise GraphCaptureError(f"a {where} whose batch dims broadcast partly, while a CUDA graph was being captured")


def gemm(handle: int, stream: int, a, b, out, transpose_a: bool, transpose_b: bool) -> None:
    """``out = op(a) @ op(b)`` for C-contiguous CuPy arrays (see the module docstring), on ``stream``."""
    dtype = np.dtype(out.dtype)
    if dtype not in _TYPES or a.dtype != dtype or b.dtype != dtype:
        raise GraphCaptureError(f"a {dtype} GEMM while a CUDA graph was being captured (floating types only)")
    data_type, compute, scalar = _TYPES[dtype]
    m, n = out.shape[-2], out.shape[-1]
    k = a.shape[-2] if transpose_a else a.shape[-1]
    batch = math.prod(out.shape[:-2])
    if out.size == 0:
        return
    stride_a = _batch(a.shape, m, k, batch, "MatMul")
    stride_b = _batch(b.shape, k, n, batch, "MatMul")
    lib = _cublas()
    previous = ctypes.c_void_p()
    lib.cublasGetStream_v2(ctypes.c_void_p(handle), ctypes.byref(previous))
    lib.cublasSetStream_v2(ctypes.c_void_p(handle), ctypes.c_void_p(stream))
    alpha, beta = scalar(1), scalar(0)
    common = (
        ctypes.c_void_p(handle),
        ctypes.c_int(_OP_T if transpose_b else _OP_N),
        ctypes.c_int(_OP_T if transpose_a else _OP_N),
        ctypes.c_int(n), ctypes.c_int(m), ctypes.c_int(k),
        ctypes.byref(alpha),
    )  # fmt: skip
    ldb, lda = (k if transpose_b else n), (m if transpose_a else k)
    try:
        if batch == 1:
            status = lib.cublasGemmEx(
                *common,
                ctypes.c_void_p(b.data.ptr), ctypes.c_int(data_type), ctypes.c_int(ldb),
                ctypes.c_void_p(a.data.ptr), ctypes.c_int(data_type), ctypes.c_int(lda),
                ctypes.byref(beta),
                ctypes.c_void_p(out.data.ptr), ctypes.c_int(data_type), ctypes.c_int(n),
                ctypes.c_int(compute), ctypes.c_int(_GEMM_DEFAULT),
            )  # fmt: skip
        else:
            status = lib.cublasGemmStridedBatchedEx(
                *common,
                ctypes.c_void_p(b.data.ptr), ctypes.c_int(data_type), ctypes.c_int(ldb), ctypes.c_longlong(stride_b),
                ctypes.c_void_p(a.data.ptr), ctypes.c_int(data_type), ctypes.c_int(lda), ctypes.c_longlong(stride_a),
                ctypes.byref(beta),
                ctypes.c_void_p(out.data.ptr), ctypes.c_int(data_type), ctypes.c_int(n), ctypes.c_longlong(m * n),
                ctypes.c_int(batch), ctypes.c_int(compute), ctypes.c_int(_GEMM_DEFAULT),
            )  # fmt: skip
    finally:
        lib.cublasSetStream_v2(ctypes.c_void_p(handle), previous)
    if status != 0:
        raise GraphCaptureError(f"cuBLAS's GEMM returned status {status} while a CUDA graph was being captured")
