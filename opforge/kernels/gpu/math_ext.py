"""GPU kernels of the third batch of elementwise operators (``csrc/kernels/cuda/math_ext.cu``, math in
``opforge/functors/math_ext.h``): for every KernelAttr the CPU registers, the same functor in a loop of
``elementwise.cuh``."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import _broadcast, _unary, mirror_cpu_kernels
from opforge.kernels.gpu.range_check import checked_steps
from opforge.kernels.gpu.support import StepPlan

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


def _polygamma_loop(spec, function, kernel):
    """``PolygammaKernel<T, I>(a, x, y, n)``; the order is checked on the device (``range_check``): a negative one
    raises after the launch."""
    n = math.prod(spec.in_shapes[1])
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    plan = StepPlan(spec.device.runtime, np_dtype)

    def error(_, order):
        return KernelError(f"For '{spec.op_name}', the order 'a' must be >= 0, but got {order}.")

    order_dtype = spec.entry.attr.inputs[0].np_dtype
    order = checked_steps(plan, ("in", 0), 1, order_dtype, np.iinfo(order_dtype).max, error)
    plan.kernel(function, n, [order, ("in", 1), ("out", 0), np.int64(n)])
    return plan.launch(spec, [(tuple(spec.out_shapes[0]), np_dtype)])


mirror_cpu_kernels(
    "Polygamma",
    lambda attr: CudaKernel(
        _SOURCE, f"opforge::cuda::PolygammaKernel<{ctype(attr.inputs[1])}, {ctype(attr.inputs[0])}>", _polygamma_loop
    ),
)
