"""Argmax and Argmin on the GPU (``csrc/kernels/cuda/argmax.cu``, the CPU's rule: ties keep the first
index, the first NaN wins): contiguous rows (the last axis) of at least ``ROW_BLOCK_MIN`` elements take a
block each (``ArgRowsKernel``: warp shuffles and shared memory); otherwise one thread per output element
scans the axis (``ArgMaxKernel`` / ``ArgMinKernel``)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, numel, step_1d

__all__ = []

ROW_BLOCK = 256  # threads per row of ArgRowsKernel (kBlock)
ROW_BLOCK_MIN = 256  # a contiguous row this long takes a block
_MAX_GRID = 65535


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
        raise KernelError(
            f"For '{op}', cannot take the {'argmin' if op == 'Argmin' else 'argmax'} of the zero-size axis {axis} "
            f"of input shape {x}."
        )
    return x[axis], numel(x[axis + 1 :])


def _argmax_loop(spec, function, kernel):
    """``ArgRowsKernel<kMin, T, O, 256>(x, y, rows, n)`` for long contiguous rows, else
    ``ArgMaxKernel<T, O>(x, y, outputs, n, inner)`` (or ArgMin's)."""
    runtime = spec.device.runtime
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n, inner = _axis_and_inner(spec)
    outputs = numel(shape)
    if inner == 1 and n >= ROW_BLOCK_MIN and outputs:
        rows_fn = function_for(runtime, kernel, kernel.helpers[0])
        grid, block = (min(outputs, _MAX_GRID), 1, 1), (ROW_BLOCK, 1, 1)
        steps = [(rows_fn, grid, block, 0, [("in", 0), ("out", 0), np.int64(outputs), np.int64(n)])]
    else:
        params = [("in", 0), ("out", 0), np.int64(outputs), np.int64(n), np.int64(inner)]
        steps = step_1d(runtime, function, outputs, params)
    return device_launch(spec, [(shape, np_dtype)], steps)


def _make(name: str, k_min: str):
    def make(attr):
        t, o = ctype(attr.inputs[0]), ctype(attr.outputs[0])
        rows = f"opforge::cuda::ArgRowsKernel<{k_min}, {t}, {o}, {ROW_BLOCK}>"
        return CudaKernel("argmax.cu", f"opforge::cuda::{name}<{t}, {o}>", _argmax_loop, helpers=(rows,))

    return make


mirror_cpu_kernels("Argmax", _make("ArgMaxKernel", "false"))
mirror_cpu_kernels("Argmin", _make("ArgMinKernel", "true"))
