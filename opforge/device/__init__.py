"""Devices: one object per backend, owning its array type, allocation, copies and stream.

Everything above this seam (Tensor, binding, launch, autodiff, optimizers, initializers) asks a
``Device`` for arrays instead of naming NumPy or CuPy. A backend is added by a device module that
calls ``register_device``, a launcher for its kernel kind, its kernels and their registrations.
"""

from opforge.device.base import (
    BACKENDS,
    Device,
    available_devices,
    get_device,
    register_device,
    register_device_factory,
)
from opforge.device.cpu import CPU
from opforge.device.gpu import GpuDevice, GpuRuntime, use_runtime

__all__ = [
    "BACKENDS",
    "Device",
    "get_device",
    "register_device",
    "register_device_factory",
    "available_devices",
    "CPU",
    "GpuDevice",
    "GpuRuntime",
    "use_runtime",
]
