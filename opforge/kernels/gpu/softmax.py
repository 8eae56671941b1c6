"""GPU kernels of Softmax and LogSoftmax: ``SoftmaxKernel`` of ``csrc/kernels/cuda/softmax.cu`` (one
thread per row along the axis, the math of ``opforge/functors/softmax.h``), for every KernelAttr the
CPU registers."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, ctype, grid_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels

__all__ = ["axis_geometry"]


def axis_geometry(shape, axis) -> tuple:
    """``(outer, n, inner)``: ``shape`` around ``axis`` (an int or a 1-tuple; the primitive checked it).
    A 0-d input is one row of one element."""
    shape = tuple(shape)
    axis = axis[0] if isinstance(axis, (tuple, list)) else axis
    axis %= max(len(shape), 1)
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def _softmax_loop(spec, function, kernel):
    """``SoftmaxKernel<T, kLog>(x, y, outer, n, inner)``."""
    device, runtime = spec.device, spec.device.runtime
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    outer, n, inner = axis_geometry(spec.in_shapes[0], spec.attrs.get("axis", -1))
    rows = outer * inner if n else 0  # rows of no elements: nothing to write
    args = (np.int64(outer), np.int64(n), np.int64(inner))

    def run(arrays):
        out = device.empty(shape, np_dtype)
        if rows:
            runtime.launch(function, grid_for(runtime, rows), (BLOCK, 1, 1), (arrays[0], out, *args))
        return out

    return run


def _make(log: bool):
    def make(attr):
        name = f"opforge::cuda::SoftmaxKernel<{ctype(attr.inputs[0])}, {'true' if log else 'false'}>"
        return CudaKernel("softmax.cu", name, _softmax_loop)

    return make


mirror_cpu_kernels("Softmax", _make(False))
mirror_cpu_kernels("LogSoftmax", _make(True))
