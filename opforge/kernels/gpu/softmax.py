"""GPU kernels of Softmax and LogSoftmax (``csrc/kernels/cuda/softmax.cu``, the math of
``opforge/functors/softmax.h``), for every KernelAttr the CPU registers. Rows along the last axis are held
in registers by a warp (up to 1,024 elements) or a block (up to 16,384: ``SoftmaxRegisterKernel``, one
read and one write per element); longer ones take a block each with online statistics
(``SoftmaxRowsKernel``); rows across inner dims a thread each (``SoftmaxKernel``)."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.register_rows import RegisterRows
from opforge.kernels.gpu.support import device_launch, output_specs, step_1d

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


ROW_BLOCK = 256  # threads per row of SoftmaxRowsKernel
_MAX_GRID = 65535
# rows of up to 128 and 1,024 elements a warp each, up to 4,096 and 16,384 a block each
REGISTER_ROWS = RegisterRows("opforge::cuda::SoftmaxRegisterKernel", ((32, 4), (32, 32), (256, 16), (512, 32)))


def _softmax_loop(spec, function, kernel):
    """``SoftmaxRowsKernel<T, kLog, 256>(x, y, rows, n)`` for long contiguous rows, else
    ``SoftmaxKernel<T, kLog>(x, y, outer, n, inner)``."""
    runtime = spec.device.runtime
    outer, n, inner = axis_geometry(spec.in_shapes[0], spec.attrs.get("axis", -1))
    rows = outer * inner if n else 0  # rows of no elements: nothing to write
    dtype = spec.entry.attr.inputs[0]
    outputs = output_specs(spec)
    if inner == 1 and REGISTER_ROWS.shape(n, dtype):
        function, grid, block, args = REGISTER_ROWS.launch(runtime, kernel, 1, rows, n, dtype)
        steps = [(function, grid, block, 0, [("in", 0), ("out", 0), *args])] if rows else []
    elif inner == 1:
        rows_fn = function_for(runtime, kernel, kernel.helpers[0])
        params = [("in", 0), ("out", 0), np.int64(rows), np.int64(n)]
        steps = [(rows_fn, (min(rows, _MAX_GRID), 1, 1), (ROW_BLOCK, 1, 1), 0, params)] if rows else []
    else:
        steps = step_1d(runtime, function, rows, [("in", 0), ("out", 0), np.int64(outer), np.int64(n), np.int64(inner)])
    return device_launch(spec, outputs, steps)


def _make(log: bool):
    def make(attr):
        t, flag = ctype(attr.inputs[0]), "true" if log else "false"
        rows = f"opforge::cuda::SoftmaxRowsKernel<{t}, {flag}, {ROW_BLOCK}>"
        return CudaKernel(
            "softmax.cu",
            f"opforge::cuda::SoftmaxKernel<{t}, {flag}>",
            _softmax_loop,
            helpers=(rows, *REGISTER_ROWS.names(f"{t}, {flag}", attr.inputs[0])),
        )

    return make


mirror_cpu_kernels("Softmax", _make(False))
mirror_cpu_kernels("LogSoftmax", _make(True))
