"""Assign and AssignSub on the GPU, in place: the kernel writes into input 0 (the Parameter's own
buffer), and the launcher returns that array as the output (``csrc/kernels/cuda/assign.cu``)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, functor_arg
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import StepPlan, bytes_ctype, numel, write_inputs

__all__ = []


def _check_same_shape(spec) -> None:
    var, value = spec.in_shapes[0], spec.in_shapes[1]
    if tuple(var) != tuple(value):
        raise KernelError(
            f"For '{spec.op_name}', 'value' must have the shape of 'variable' {list(var)}, but got {list(value)}."
        )


def _assign_loop(spec, function, kernel):
    """``CopyKernel<E>(value, variable, n)``: variable = value."""
    return _write_variable(spec, function, [("in", 1), ("in", 0)])


def _assign_sub_loop(spec, function, kernel):
    """``SameShapeBinaryKernel<T, SubOp>(variable, value, variable, n, op)``: variable -= value."""
    return _write_variable(spec, function, [("in", 0), ("in", 1), ("in", 0)], functor_arg(kernel, spec.attrs))


def _write_variable(spec, function, operands: list, *extra):
    """One launch of ``function(*operands, n, *extra)`` writing the variable: the Parameter in place, or a copy
    of the input (``write_inputs``)."""
    _check_same_shape(spec)
    n = numel(spec.in_shapes[0])
    plan = StepPlan(spec.device.runtime, spec.entry.attr.inputs[0].np_dtype)
    outputs = write_inputs(plan, spec, 1)
    plan.kernel(function, n, [*operands, np.int64(n), *extra])
    return plan.launch(spec, outputs)


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
