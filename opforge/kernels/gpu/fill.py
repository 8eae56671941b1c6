"""The GPU device's fill (``GpuDevice.full``: gradient seeds, zeros, optimizer states): FillKernel
of ``csrc/kernels/cuda/fill.cu``, one instantiation per element size."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, function_for, grid_for, register_device_kernel

__all__ = ["fill"]

# Only the size of an element matters: each dtype is filled through the unsigned type of its size.
_BITS = {1: ("uint8_t", np.uint8), 2: ("uint16_t", np.uint16), 4: ("uint32_t", np.uint32), 8: ("uint64_t", np.uint64)}


_KERNELS = {
    size: register_device_kernel(CudaKernel("fill.cu", f"opforge::cuda::FillKernel<{name}>", None))
    for size, (name, _) in _BITS.items()
}


def fill(device, out, value) -> None:
    """Set every element of the device array ``out`` to ``value`` (cast to its dtype as NumPy does)."""
    n = out.size
    if n == 0:
        return
    if out.dtype.itemsize not in _BITS:  # complex: fill on the host, where NumPy converts it
        device.runtime.copy(out, device.runtime.from_host(np.full(out.shape, value, out.dtype)))
        return
    ctype_name, bits = _BITS[out.dtype.itemsize]
    pattern = np.asarray(value, out.dtype).reshape(1).view(bits)[0]
    runtime = device.runtime
    function = function_for(runtime, _KERNELS[out.dtype.itemsize])
    runtime.launch(function, grid_for(runtime, n), (BLOCK, 1, 1), (runtime.reshape(out, (n,)), np.int64(n), pattern))
