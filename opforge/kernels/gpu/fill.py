"""The GPU device's fill (``GpuDevice.full``: gradient seeds, zeros, optimizer states): FillKernel
of ``csrc/kernels/cuda/fill.cu``, one instantiation per element size (complex128 as 16 raw bytes)."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, function_for, register_device_kernel
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import BYTES_CTYPES, device_launch, launch_steps, step_1d

__all__ = ["fill", "fill_steps"]

# Only the size of an element matters: each dtype is filled as the raw bytes of its size, as NumPy
# passes them (a 16-byte element as copy.cuh's Bytes16: two 8-byte-aligned words).
_BITS = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
    16: np.dtype([("lo", np.uint64), ("hi", np.uint64)], align=True),
}
_KERNELS = {
    size: register_device_kernel(CudaKernel("fill.cu", f"opforge::cuda::FillKernel<{BYTES_CTYPES[size]}>", None))
    for size in _BITS
}


def fill(device, out, value) -> None:
    """Set every element of the device array ``out`` to ``value`` (cast to its dtype as NumPy does)."""
    runtime = device.runtime
    launch_steps(runtime, fill_steps(runtime, out.shape, out.dtype, value, ("out", 0)), (), (out,), ())


def fill_steps(runtime, shape, np_dtype, value, target) -> list:
    """``fill`` of an array of ``shape`` and ``np_dtype`` (the param ``target``) as ``device_launch``
    steps: none for zero elements."""
    np_dtype, n = np.dtype(np_dtype), math.prod(shape)
    if n == 0:
        return []
    pattern = np.asarray(value, np_dtype).reshape(1).view(_BITS[np_dtype.itemsize])[0]
    function = function_for(runtime, _KERNELS[np_dtype.itemsize])
    return step_1d(runtime, function, n, [target, np.int64(n), pattern])


# ---------------------------------------------------------------------------------------------
# The Fill, OnesLike and ZerosLike operators: the value worked out on the host (as the CPU kernels
# of csrc/kernels/cpu/fill.cc do), then the device fill above.

_HALF_VIA_FLOAT32 = ("BFloat16",)  # bfloat16 from a double goes through float32, as ml_dtypes


def _fill_value(value, dtype) -> np.ndarray:
    """``value`` (bool, int or float; the primitive checked that it fits) as a 0-d array of ``dtype``,
    converted as the CPU's Fill: bool by != 0, integers truncated, float16 from a double in one
    rounding, an integer into a float through int64."""
    np_dtype = np.dtype(dtype.np_dtype)
    if np_dtype == np.bool_:
        return np.asarray(value != 0, np.bool_)
    if np_dtype.kind in "iu":
        return np.asarray(int(value), np_dtype)  # int() truncates toward zero
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        via = np.asarray(int(value), np.int64).astype(np.float32 if np_dtype.itemsize <= 2 else np_dtype)
    else:
        via = np.asarray(float(value), np.float32 if str(dtype) in _HALF_VIA_FLOAT32 else np.float64)
    with np.errstate(over="ignore"):  # too large for the dtype: inf, as the CPU's conversion
        return via.astype(np_dtype)


def _fill_op_kernel(dtype) -> CudaKernel:
    return CudaKernel("fill.cu", _KERNELS[np.dtype(dtype.np_dtype).itemsize].name, _fill_op_loop)


def _fill_op_loop(spec, function, kernel):
    """Fill: the attr 'value'; OnesLike / ZerosLike: 1 / 0 of the input's dtype (its data unread)."""
    device = spec.device
    shape, dtype = spec.out_shapes[0], spec.entry.attr.outputs[0]
    if spec.op_name == "Fill":
        value = _fill_value(spec.attrs["value"], dtype)
    else:
        value = np.asarray(1 if spec.op_name == "OnesLike" else 0, dtype.np_dtype)
    steps = fill_steps(device.runtime, shape, dtype.np_dtype, value, ("out", 0))
    return device_launch(spec, [(shape, dtype.np_dtype)], steps)


def _register() -> None:
    for op in ("Fill", "OnesLike", "ZerosLike"):
        mirror_cpu_kernels(op, lambda attr: _fill_op_kernel(attr.outputs[0]))


_register()
