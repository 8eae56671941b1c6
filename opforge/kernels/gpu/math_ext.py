"""GPU kernels of the third batch of elementwise operators (``csrc/kernels/cuda/math_ext.cu``, math in
``opforge/functors/math_ext.h``): for every KernelAttr the CPU registers, the same functor in a loop of
``elementwise.cuh``."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import _broadcast, _unary, mirror_cpu_kernels
from opforge.kernels.gpu.support import launch_1d

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
    """``PolygammaKernel<T, I>(a, x, y, n)``; the order is read back and checked first (a synchronisation)."""
    device, runtime = spec.device, spec.device.runtime
    n = math.prod(spec.in_shapes[1])

    def run(arrays):
        order = int(runtime.to_host(arrays[0]).reshape(-1)[0])
        if order < 0:
            raise KernelError(f"For '{spec.op_name}', the order 'a' must be >= 0, but got {order}.")
        y = device.empty(spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype)
        launch_1d(runtime, function, n, (arrays[0], arrays[1], y, np.int64(n)))
        return y

    return run


mirror_cpu_kernels(
    "Polygamma",
    lambda attr: CudaKernel(
        _SOURCE, f"opforge::cuda::PolygammaKernel<{ctype(attr.inputs[1])}, {ctype(attr.inputs[0])}>", _polygamma_loop
    ),
)
