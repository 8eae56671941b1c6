"""Kernels: KernelAttr, the registry of C++ and Python kernels, and run-time selection."""

from opforge.kernels import cpu
from opforge.kernels.kernel_attr import KernelAttr
from opforge.kernels.registry import all_kernels, kernels_for, load_library, register_kernel
from opforge.kernels.selection import select_kernel

__all__ = [
    "KernelAttr",
    "register_kernel",
    "kernels_for",
    "all_kernels",
    "load_library",
    "select_kernel",
    "cpu",
]
