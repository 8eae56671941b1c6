"""GPU kernels of the third batch of elementwise operators (``csrc/kernels/cuda/math_ext.cu``, math in
``opforge/functors/math_ext.h``): for every KernelAttr the CPU registers, the same functor in a loop of
``elementwise.cuh``."""

from __future__ import annotations

from opforge.kernels.gpu.elementwise import _broadcast, _unary, mirror_cpu_kernels

__all__ = []

_SOURCE = "math_ext.cu"

_UNARY = {
    "Sinh": "SinhOp",
    "Cosh": "CoshOp",
    "Tan": "TanOp",
    "Asin": "AsinOp",
    "ACos": "AcosOp",
    "Atan": "AtanOp",
    "Asinh": "AsinhOp",
    "Acosh": "AcoshOp",
    "Atanh": "AtanhOp",
    "Erfc": "ErfcOp",
    "Rint": "RintOp",
    "Trunc": "TruncOp",
    "Inv": "InvOp",
    "Lgamma": "LgammaOp",
    "Digamma": "DigammaOp",
    "Erfinv": "ErfinvOp",
    "Invert": "InvertOp",
}
_BINARY = (
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "SquaredDifference",
    "Xdivy",
    "Xlogy",
    "DivNoNan",
    "LogicalXor",
)

for _op, _functor in _UNARY.items():
    mirror_cpu_kernels(_op, _unary(_SOURCE, _functor))
for _op in _BINARY:
    mirror_cpu_kernels(_op, _broadcast(_SOURCE, f"{_op}Op"))
