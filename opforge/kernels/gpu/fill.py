"""The GPU device's fill (``GpuDevice.full``: gradient seeds, zeros, optimizer states): FillKernel
of ``csrc/kernels/cuda/fill.cu``, one instantiation per element size."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, function_for, register_device_kernel
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import BYTES_CTYPES, device_launch, launch_steps, step_1d

__all__ = ["fill", "fill_steps"]

# Only the size of an element matters: each dtype is filled as the unsigned integer of its size
# (complex types, 16 bytes, through the host).
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_KERNELS = {
    size: register_device_kernel(CudaKernel("fill.cu", f"opforge::cuda::FillKernel<{BYTES_CTYPES[size]}>", None))
    for size in _BITS
}


def fill(device, out, value) -> None:
    """Set every element of the device array ``out`` to ``value`` (cast to its dtype as NumPy does)."""
    runtime = device.runtime
    steps = fill_steps(runtime, out.shape, out.dtype, value, ("out", 0))
    if steps is None:  # complex: fill on the host, where NumPy converts it
        runtime.copy(out, runtime.from_host(np.full(out.shape, value, out.dtype)))
        return
    launch_steps(runtime, steps, (), (out,), ())


def fill_steps(runtime, shape, np_dtype, value, target) -> list | None:
    """``fill`` of an array of ``shape`` and ``np_dtype`` (the param ``target``) as ``device_launch``
    steps: none for zero elements; None for a dtype filled through the host (complex)."""
    np_dtype, n = np.dtype(np_dtype), math.prod(shape)
    if n == 0:
        return []
    if np_dtype.itemsize not in _BITS:
        return None
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
    # complex128 (16 bytes) is filled through the host by fill(); its 8-byte kernel is named here
    size = min(np.dtype(dtype.np_dtype).itemsize, 8)
    return CudaKernel("fill.cu", _KERNELS[size].name, _fill_op_loop)


def _fill_op_loop(spec, function, kernel):
    """Fill: the attr 'value'; OnesLike / ZerosLike: 1 / 0 of the input's dtype (its data unread)."""
    device = spec.device
    shape, dtype = spec.out_shapes[0], spec.entry.attr.outputs[0]
    if spec.op_name == "Fill":
        value = _fill_value(spec.attrs["value"], dtype)
    else:
        value = np.asarray(1 if spec.op_name == "OnesLike" else 0, dtype.np_dtype)
    steps = fill_steps(device.runtime, shape, dtype.np_dtype, value, ("out", 0))
    if steps is not None:
        return device_launch(spec, [(shape, dtype.np_dtype)], steps)

    def run(arrays):
        out = device.empty(shape, dtype.np_dtype)
        fill(device, out, value)
        return out

    return run


def _register() -> None:
    for op in ("Fill", "OnesLike", "ZerosLike"):
        mirror_cpu_kernels(op, lambda attr: _fill_op_kernel(attr.outputs[0]))


_register()
