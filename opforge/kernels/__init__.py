"""Kernels: KernelAttr, the registry of C++ and Python kernels, and run-time selection."""

from opforge.kernels import cpu
from opforge.kernels.kernel_attr import KernelAttr
from opforge.kernels.registry import (
    KernelEntry,
    KernelOverrideWarning,
    OpInfoMismatchError,
    UnknownOperatorWarning,
    all_kernels,
    disable,
    disabled,
    enable,
    is_disabled,
    kernels_for,
    load_library,
    register_kernel,
)
from opforge.kernels.selection import select_kernel

__all__ = [
    "KernelAttr",
    "KernelEntry",
    "KernelOverrideWarning",
    "UnknownOperatorWarning",
    "OpInfoMismatchError",
    "register_kernel",
    "kernels_for",
    "all_kernels",
    "load_library",
    "disable",
    "enable",
    "disabled",
    "is_disabled",
    "select_kernel",
    "cpu",
]
