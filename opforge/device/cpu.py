"""The CPU device: NumPy arrays; kernel outputs from opforge's caching allocator (``memory``)."""

from __future__ import annotations

import math
import os

import numpy as np

from opforge.device import memory
from opforge.device.base import Device, register_device

__all__ = ["CPU", "CpuDevice"]


_PHYSICAL_MEMORY = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _ready(array: np.ndarray) -> bool:
    # Kernels read items as words of up to 8 bytes (complex64 as two floats loaded together), so the
    # data must be aligned to min(itemsize, 8). NumPy's ALIGNED flag (cheap: reading the address
    # through .ctypes costs about 3 us) says as much for every dtype whose alignment is that already;
    # complex64's is 4, so its address is read.
    flags, dtype = array.flags, array.dtype
    if not (flags.c_contiguous and flags.aligned and dtype.isnative):
        return False
    return dtype.alignment >= min(dtype.itemsize, 8) or array.ctypes.data % 8 == 0


class CpuDevice(Device):
    name = "CPU"
    array_type = np.ndarray

    def asarray(self, data, np_dtype) -> np.ndarray:
        host = data if isinstance(data, np.ndarray) else np.asarray(self._foreign_to_host(data))
        if np_dtype is None:
            np_dtype = host.dtype.newbyteorder("=")
        if host.dtype != np_dtype:
            return host.astype(np_dtype, order="C")  # a new, aligned, C-contiguous array
        out = np.empty(host.shape, np_dtype)
        out[...] = host
        return out

    def share(self, array: np.ndarray) -> np.ndarray:
        if _ready(array):
            return array
        return self.asarray(array, array.dtype.newbyteorder("="))

    def to_host(self, array: np.ndarray, copy: bool = True) -> np.ndarray:
        if copy:
            return array.copy()
        view = array.view()
        view.flags.writeable = False  # the tensor's own data changes only through primitives
        return view

    def empty(self, shape: tuple, np_dtype) -> np.ndarray:
        return memory.empty(shape, np_dtype)

    def full(self, shape: tuple, value, np_dtype) -> np.ndarray:
        out = memory.empty(shape, np_dtype)
        out.fill(value)
        return out

    def scalar(self, value, np_dtype) -> np.ndarray:
        return np.asarray(value, dtype=np_dtype)

    def cast(self, array: np.ndarray, np_dtype) -> np.ndarray:
        return array.astype(np_dtype)

    def write(self, dst: np.ndarray, src: np.ndarray) -> None:
        dst[...] = src

    def view(self, array: np.ndarray, offset: int, shape: tuple) -> np.ndarray:
        return array[offset : offset + math.prod(shape)].reshape(shape)

    def is_writable(self, array: np.ndarray) -> bool:
        return array.flags.writeable

    def is_kernel_ready(self, array) -> bool:
        return isinstance(array, np.ndarray) and _ready(array)

    def shares_memory(self, a, b) -> bool:
        return np.shares_memory(a, b)

    def memory_bytes(self) -> int:
        return _PHYSICAL_MEMORY

    @staticmethod
    def _foreign_to_host(data):
        # Arrays of other devices (a CuPy array) come to the host through their own protocol.
        get = getattr(data, "get", None)
        if get is not None and hasattr(data, "__cuda_array_interface__"):
            return get()
        return data


CPU = register_device(CpuDevice())
