"""Indices checked before a kernel reads them (Gather's indices, SparseSoftmaxCrossEntropyWithLogits'
labels): out of range is an error naming the operator, as on the CPU.

``RangeCheckKernel`` (``csrc/kernels/cuda/range_check.cu``) gives the kernel a copy of the indices with every
value out of range read as 0 (so it stays in bounds) and the least such position, which the host reads
after the launches (one word copied back) and raises the error then: a check step of the call's
``device_launch`` (``checked_steps``), read in C where the call launches from C; while a device graph is
captured, after each launch of the graph."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, function_for, register_device_kernel
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.support import StepPlan

__all__ = ["checked_steps"]

_KERNELS = {
    np.dtype(t): register_device_kernel(CudaKernel("range_check.cu", f"opforge::cuda::RangeCheckKernel<{t}_t>", None))
    for t in ("int32", "int64")
}


def checked_steps(plan: StepPlan, indices: tuple, n: int, np_dtype, bound: int, error) -> tuple:
    """Steps of ``plan`` giving its kernels the indices ``("in", i)`` (``n`` of ``np_dtype``, int32 or int64) as
    they may read them: returns the param of the in-range copy. After the plan's launches, a value out of
    ``[0, bound)`` raises ``error(position, value)``."""
    runtime, np_dtype, where = plan.runtime, np.dtype(np_dtype), indices[1]
    word, safe = plan.temp((1,), np.uint64), plan.temp((n,), np_dtype)
    plan.steps += fill_steps(runtime, (1,), np.uint64, n, word)
    plan.kernel(function_for(runtime, _KERNELS[np_dtype]), n, [indices, safe, np.int64(n), np.int64(bound), word])

    def raised(position, inputs):
        return error(position, int(runtime.to_host(inputs[where]).reshape(-1)[position]))

    def fallback(first, inputs):
        def check():
            position = int(runtime.to_host(first)[0])
            if position < n:
                raise raised(position, inputs)

        if runtime.capturing():
            runtime.after_launch(check)
        else:
            check()

    plan.check(word, n, raised, fallback)
    return safe
