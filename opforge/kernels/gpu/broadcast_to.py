"""BroadcastTo on the GPU: ``BroadcastToKernel`` of ``csrc/kernels/cuda/broadcast_to.cu``, indexed by
the CPU kernels' broadcast plan of (x, out) onto out; elements moved as bytes of their size."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, function_for, register_device_kernel
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.loops import broadcast_index
from opforge.kernels.gpu.support import BYTES_CTYPES, StepPlan, bytes_ctype, numel, one_to_one

__all__ = ["broadcast_steps"]

_KERNELS = {
    size: register_device_kernel(CudaKernel("broadcast_to.cu", f"opforge::cuda::BroadcastToKernel<{t}>", None))
    for size, t in BYTES_CTYPES.items()
}


def broadcast_steps(plan: StepPlan, op_name: str, source, shape: tuple, target_shape: tuple) -> tuple:
    """Steps of ``plan`` broadcasting the param ``source`` (of ``shape``, in the plan's dtype) to
    ``target_shape`` in a temporary, returned as a param. Raises KernelError where the broadcast needs more
    dims than the kernels' index holds after merging."""
    index = broadcast_index(op_name, shape, target_shape, target_shape)
    target, n = plan.temp(target_shape), numel(target_shape)
    function = function_for(plan.runtime, _KERNELS[np.dtype(plan.np_dtype).itemsize])
    plan.kernel(function, n, [source, target, np.int64(n), index])
    return target


def _broadcast_to_loop(spec, function, kernel):
    """``BroadcastToKernel<E>(x, y, n, index)``."""
    shape = spec.out_shapes[0]
    index = broadcast_index(spec.op_name, spec.in_shapes[0], shape, shape)  # checks x broadcasts to shape
    return one_to_one(spec, function, index)


mirror_cpu_kernels(
    "BroadcastTo",
    lambda attr: CudaKernel(
        "broadcast_to.cu", f"opforge::cuda::BroadcastToKernel<{bytes_ctype(attr.inputs[0])}>", _broadcast_to_loop
    ),
)
