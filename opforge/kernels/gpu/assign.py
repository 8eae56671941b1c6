"""Assign and AssignSub on the GPU, in place: the kernel writes into input 0 (the Parameter's own
buffer), and the launcher returns that array as the output (``csrc/kernels/cuda/assign.cu``)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, functor_arg
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import (
    bytes_ctype,
    device_launch,
    launch_1d,
    numel,
    step_1d,
    writes_in_place,
    written_targets,
)

__all__ = []


def _check_same_shape(spec) -> None:
    var, value = spec.in_shapes[0], spec.in_shapes[1]
    if tuple(var) != tuple(value):
        raise KernelError(
            f"For '{spec.op_name}', 'value' must have the shape of 'variable' {list(var)}, but got {list(value)}."
        )


def _assign_loop(spec, function, kernel):
    """``CopyKernel<E>(value, variable, n)``: variable = value."""
    _check_same_shape(spec)
    runtime, n = spec.device.runtime, numel(spec.in_shapes[0])
    if writes_in_place(spec, 1):
        return device_launch(spec, [("in", 0)], step_1d(runtime, function, n, [("in", 1), ("in", 0), np.int64(n)]))

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        launch_1d(runtime, function, n, (arrays[1], var, np.int64(n)))
        return var

    return run


def _assign_sub_loop(spec, function, kernel):
    """``SameShapeBinaryKernel<T, SubOp>(variable, value, variable, n, op)``: variable -= value."""
    _check_same_shape(spec)
    runtime, n = spec.device.runtime, numel(spec.in_shapes[0])
    op = functor_arg(kernel, spec.attrs)
    if writes_in_place(spec, 1):
        params = [("in", 0), ("in", 1), ("in", 0), np.int64(n), op]
        return device_launch(spec, [("in", 0)], step_1d(runtime, function, n, params))

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        launch_1d(runtime, function, n, (var, arrays[1], var, np.int64(n), op))
        return var

    return run


mirror_cpu_kernels(
    "Assign",
    lambda attr: CudaKernel("assign.cu", f"opforge::cuda::CopyKernel<{bytes_ctype(attr.inputs[0])}>", _assign_loop),
)
mirror_cpu_kernels(
    "AssignSub",
    lambda attr: CudaKernel(
        "assign.cu",
        f"opforge::cuda::SameShapeBinaryKernel<{ctype(attr.inputs[0])}, opforge::SubOp>",
        _assign_sub_loop,
    ),
)
