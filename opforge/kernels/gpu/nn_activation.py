"""GPU kernels of SeLU, CeLU, Softsign, HShrink, SoftShrink and Mish (``csrc/kernels/cuda/nn_activation.cu``,
math in ``opforge/functors/nn_activation.h``): the CPU's functors in the unary loop of ``elementwise.cuh``,
for every KernelAttr the CPU registers."""

from __future__ import annotations

from opforge.kernels.gpu.elementwise import _unary, mirror_cpu_kernels

__all__ = []

_SOURCE = "nn_activation.cu"
_ALPHA = (("alpha", "float64", 1.0),)  # CeLUOp: double alpha
_LAMBD = (("lambd", "float64", 0.5),)  # HShrinkOp / SoftShrinkOp: double lambd

for _op, _fields in (
    ("SeLU", ()),
    ("CeLU", _ALPHA),
    ("Softsign", ()),
    ("HShrink", _LAMBD),
    ("SoftShrink", _LAMBD),
    ("Mish", ()),
):
    mirror_cpu_kernels(_op, _unary(_SOURCE, f"{_op}Op", _fields))
