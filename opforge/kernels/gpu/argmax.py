"""Argmax on the GPU: ``ArgMaxKernel`` of ``csrc/kernels/cuda/argmax.cu``, one thread per output
element scanning the axis with the CPU's rule (ties keep the first index, the first NaN wins)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import launch_1d, numel

__all__ = []


def _axis_and_inner(spec) -> tuple:
    """x viewed as [outer, n, inner] around the axis: (n, inner)."""
    op, x, out_shape = spec.op_name, list(spec.in_shapes[0]), list(spec.out_shapes[0])
    nd = len(x)
    span = max(nd, 1)
    axis = int(spec.attrs.get("axis", -1))
    if not -span <= axis < span:
        raise KernelError(f"For '{op}', the 'axis' must be in [{-span}, {span}) for input shape {x}, but got {axis}.")
    axis %= span
    if nd == 0:
        return 1, 1
    want = x[:axis] + x[axis + 1 :]
    if out_shape != want:
        raise KernelError(f"For '{op}', the output shape must be {want}, but got {out_shape}.")
    if x[axis] == 0 and numel(want) > 0:
        raise KernelError(f"For '{op}', cannot take the argmax of the zero-size axis {axis} of input shape {x}.")
    return x[axis], numel(x[axis + 1 :])


def _argmax_loop(spec, function, kernel):
    """``ArgMaxKernel<T, O>(x, y, outputs, n, inner)``."""
    device, runtime = spec.device, spec.device.runtime
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n, inner = _axis_and_inner(spec)
    outputs = numel(shape)

    def run(arrays):
        out = device.empty(shape, np_dtype)
        launch_1d(runtime, function, outputs, (arrays[0], out, np.int64(outputs), np.int64(n), np.int64(inner)))
        return out

    return run


mirror_cpu_kernels(
    "Argmax",
    lambda attr: CudaKernel(
        "argmax.cu", f"opforge::cuda::ArgMaxKernel<{ctype(attr.inputs[0])}, {ctype(attr.outputs[0])}>", _argmax_loop
    ),
)
