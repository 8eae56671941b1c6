"""Launch helpers shared by the GPU kernel families: one-dimensional launches, elements moved as raw
bytes of their size, and the arrays an in-place kernel writes into."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import BLOCK, grid_for

__all__ = ["BYTES_CTYPES", "bytes_ctype", "launch_1d", "numel", "one_to_one", "written_targets"]

# The C++ type that moves one element of each size (csrc/kernels/cuda/copy.cuh): every dtype of a
# size shares a kernel, complex types included.
BYTES_CTYPES = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "opforge::cuda::Bytes16"}


def bytes_ctype(dtype) -> str:
    """The C++ type a copy kernel moves elements of the opforge ``dtype`` as."""
    return BYTES_CTYPES[np.dtype(dtype.np_dtype).itemsize]


def numel(shape) -> int:
    return math.prod(shape)


def launch_1d(runtime, function, n: int, args: tuple) -> None:
    """Launch a grid-stride kernel over ``n`` elements; none for zero (a zero-block grid is an error)."""
    if n > 0:
        runtime.launch(function, grid_for(runtime, n), (BLOCK, 1, 1), args)


def one_to_one(spec, function, *extra):
    """``run(arrays)`` for a kernel ``(x, y, n, *extra)``: one input, one output of the inferred shape
    and the kernel's dtype, a grid-stride loop over its ``n`` elements."""
    device, runtime = spec.device, spec.device.runtime
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = numel(shape)
    tail = (np.int64(n), *extra)

    def run(arrays):
        out = device.empty(shape, np_dtype)
        launch_1d(runtime, function, n, (arrays[0], out, *tail))
        return out

    return run


def written_targets(spec, arrays, count: int) -> list:
    """The arrays an in-place kernel writes outputs ``0..count-1`` into: input ``i`` itself when the
    call writes it in place (``spec.inplace[i] == i``: the launcher returns that array, so the
    Parameter is the output), else a device copy of it, so a call that does not write its inputs
    leaves them as they were."""
    device, runtime = spec.device, spec.device.runtime
    targets = []
    for i in range(count):
        if spec.inplace and spec.inplace[i] == i:
            targets.append(arrays[i])
        else:
            copy = device.empty(arrays[i].shape, arrays[i].dtype)
            runtime.copy(copy, arrays[i])
            targets.append(copy)
    return targets
