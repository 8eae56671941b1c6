"""GPU kernels of Softmax and LogSoftmax (``csrc/kernels/cuda/softmax.cu``, the math of
``opforge/functors/softmax.h``), for every KernelAttr the CPU registers. Rows along the last axis are held
in registers by a warp (up to 1,024 elements) or a block (up to 16,384: ``SoftmaxRegisterKernel``, one
read and one write per element); longer ones take a block each with online statistics
(``SoftmaxRowsKernel``); rows across inner dims a thread each (``SoftmaxKernel``)."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, ctype, function_for, grid_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels

__all__ = ["axis_geometry", "register_launch", "register_shape"]


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
WARP_ROWS_BLOCK = 128  # threads per block of the warp-per-row kernels: 4 rows a block
# (group threads, elements per thread) of SoftmaxRegisterKernel, smallest first: a row of n elements
# takes the first with n <= group * per.
REGISTER_SHAPES = ((32, 4), (32, 32), (256, 16), (1024, 16))
_MAX_GRID = 65535


def register_shape(n: int):
    """The (group, per) of the register kernel a contiguous row of ``n`` elements takes, or None."""
    return next(((g, k) for g, k in REGISTER_SHAPES if n <= g * k), None)


def register_launch(runtime, kernel, rows: int, n: int) -> tuple:
    """(function, grid, block, tail args) of the register kernel that takes ``rows`` rows of ``n``."""
    group, per = register_shape(n)
    threads = WARP_ROWS_BLOCK if group == 32 else group
    per_block = threads // group
    # helpers: SoftmaxRowsKernel, then one register kernel per REGISTER_SHAPES entry, in its order
    function = function_for(runtime, kernel, kernel.helpers[1 + REGISTER_SHAPES.index((group, per))])
    grid = (max(1, min(-(-rows // per_block), _MAX_GRID)), 1, 1)
    return function, grid, (threads, 1, 1), (np.int64(rows), np.int64(n))


def _softmax_loop(spec, function, kernel):
    """``SoftmaxRowsKernel<T, kLog, 256>(x, y, rows, n)`` for long contiguous rows, else
    ``SoftmaxKernel<T, kLog>(x, y, outer, n, inner)``."""
    device, runtime = spec.device, spec.device.runtime
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    outer, n, inner = axis_geometry(spec.in_shapes[0], spec.attrs.get("axis", -1))
    rows = outer * inner if n else 0  # rows of no elements: nothing to write
    if inner == 1 and register_shape(n):
        function, grid, block, args = register_launch(runtime, kernel, rows, n)

        def run(arrays):
            out = device.empty(shape, np_dtype)
            if rows:
                runtime.launch(function, grid, block, (arrays[0], out, *args))
            return out

        return run
    if inner == 1:
        rows_fn = function_for(runtime, kernel, kernel.helpers[0])
        grid, args = (min(rows, _MAX_GRID), 1, 1), (np.int64(rows), np.int64(n))

        def run(arrays):
            out = device.empty(shape, np_dtype)
            if rows:
                runtime.launch(rows_fn, grid, (ROW_BLOCK, 1, 1), (arrays[0], out, *args))
            return out

        return run
    args = (np.int64(outer), np.int64(n), np.int64(inner))

    def run(arrays):
        out = device.empty(shape, np_dtype)
        if rows:
            runtime.launch(function, grid_for(runtime, rows), (BLOCK, 1, 1), (arrays[0], out, *args))
        return out

    return run


def _make(log: bool):
    def make(attr):
        t, flag = ctype(attr.inputs[0]), "true" if log else "false"
        rows = f"opforge::cuda::SoftmaxRowsKernel<{t}, {flag}, {ROW_BLOCK}>"
        registers = tuple(f"opforge::cuda::SoftmaxRegisterKernel<{t}, {flag}, {g}, {k}>" for g, k in REGISTER_SHAPES)
        return CudaKernel(
            "softmax.cu", f"opforge::cuda::SoftmaxKernel<{t}, {flag}>", _softmax_loop, helpers=(rows, *registers)
        )

    return make


mirror_cpu_kernels("Softmax", _make(False))
mirror_cpu_kernels("LogSoftmax", _make(True))
