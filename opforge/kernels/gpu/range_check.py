"""Indices checked before a kernel reads them (Gather's indices, SparseSoftmaxCrossEntropyWithLogits'
labels): out of range is an error naming the operator, as on the CPU.

Outside a device graph the indices are copied to the host and checked before the launch. While a
graph is captured no copy to the host can run, so the check runs on the device at every launch of the
graph: ``RangeCheckKernel`` (``csrc/kernels/cuda/range_check.cu``) gives the kernel a copy of the
indices with every value out of range read as 0 (so it stays in bounds) and the first such position,
which the host reads after the launch, raising the same error then."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, function_for, register_device_kernel
from opforge.kernels.gpu.support import launch_1d

__all__ = ["checked_indices"]

_KERNELS = {
    np.dtype(t): register_device_kernel(CudaKernel("range_check.cu", f"opforge::cuda::RangeCheckKernel<{t}_t>", None))
    for t in ("int32", "int64")
}


def checked_indices(device, indices, bound: int, error):
    """``indices`` (a device array of int32 or int64) as a kernel may read them: each value must be in
    ``[0, bound)``, else ``error(position, value)`` is raised (an exception). Returns ``indices`` itself,
    or while a graph is captured, the device's in-range copy."""
    runtime, n = device.runtime, indices.size
    if n == 0:
        return indices
    if not runtime.capturing():
        host = runtime.to_host(indices).reshape(-1)
        bad = np.flatnonzero((host < 0) | (host >= bound))
        if bad.size:
            raise error(int(bad[0]), int(host[bad[0]]))
        return indices
    safe = device.empty(indices.shape, indices.dtype)
    first = device.full((1,), n, np.uint64)
    function = function_for(runtime, _KERNELS[indices.dtype])
    flat = (runtime.reshape(indices, (n,)), runtime.reshape(safe, (n,)))
    launch_1d(runtime, function, n, (*flat, np.int64(n), np.int64(bound), first))

    def check():
        j = int(runtime.to_host(first)[0])
        if j < n:
            raise error(j, int(runtime.to_host(indices).reshape(-1)[j]))

    runtime.after_launch(check)
    return safe
