"""OneHot on the GPU: ``OneHotKernel`` of ``csrc/kernels/cuda/one_hot.cu``; on_value and off_value stay
on the device (read by the kernel), moved as unsigned integers of their size."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import BYTES_CTYPES, device_launch, numel, step_1d

__all__ = []


def _depth_and_inner(spec) -> tuple:
    op, indices, out_shape = spec.op_name, list(spec.in_shapes[0]), list(spec.out_shapes[0])
    depth = int(spec.attrs["depth"])
    if depth < 0:
        raise KernelError(f"For '{op}', the 'depth' must be >= 0, but got {depth}.")
    for i, name in ((1, "on_value"), (2, "off_value")):
        if numel(spec.in_shapes[i]) != 1:
            raise KernelError(
                f"For '{op}', the '{name}' must be a 0-d tensor, but got shape {list(spec.in_shapes[i])}."
            )
    nd = len(indices)
    axis = int(spec.attrs.get("axis", -1))
    if not -1 <= axis <= nd:
        raise KernelError(f"For '{op}', the 'axis' must be in [-1, {nd}] for indices {indices}, but got {axis}.")
    if axis == -1:
        axis = nd
    want = indices[:axis] + [depth] + indices[axis:]
    if out_shape != want:
        raise KernelError(f"For '{op}', the output shape must be {want}, but got {out_shape}.")
    return depth, numel(indices[axis:])


def _one_hot_loop(spec, function, kernel):
    """``OneHotKernel<I, T>(indices, on, off, out, n, depth, inner)``."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    depth, inner = _depth_and_inner(spec)
    n = numel(shape)
    params = [("in", 0), ("in", 1), ("in", 2), ("out", 0), np.int64(n), np.int64(depth), np.int64(inner)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


def _make(attr) -> CudaKernel:
    values = BYTES_CTYPES[np.dtype(attr.outputs[0].np_dtype).itemsize]
    return CudaKernel("one_hot.cu", f"opforge::cuda::OneHotKernel<{ctype(attr.inputs[0])}, {values}>", _one_hot_loop)


mirror_cpu_kernels("OneHot", _make)
