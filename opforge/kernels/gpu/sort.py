"""Sort and TopK on the GPU: ``RankSortKernel<T>`` of ``csrc/kernels/cuda/sort.cu`` (each element placed at
its rank in its row, the CPU's order: NaN greatest, ties by index) for every KernelAttr the CPU registers."""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import launch_1d, numel

__all__ = []


def _sort_loop(spec, function, kernel):
    """``RankSortKernel<T>(x, values, indices, total, n, inner, k, descending)``."""
    x = list(spec.in_shapes[0])
    topk = spec.op_name == "TopK"
    axis = len(x) - 1 if topk else spec.attrs["axis"] % len(x)
    n, inner = x[axis], math.prod(x[axis + 1 :])
    k = int(spec.attrs["k"]) if topk else n
    descending = True if topk else bool(spec.attrs["descending"])
    shape, outs = spec.out_shapes[0], spec.entry.attr.outputs
    device, runtime = spec.device, spec.device.runtime
    total = numel(x)
    tail = (np.int64(total), np.int64(n), np.int64(inner), np.int64(k), np.bool_(descending))

    def run(arrays):
        values = device.empty(shape, outs[0].np_dtype)
        indices = device.empty(shape, outs[1].np_dtype)
        if numel(shape):
            launch_1d(runtime, function, total, (arrays[0], values, indices, *tail))
        return values, indices

    return run


for _op in ("Sort", "TopK"):
    mirror_cpu_kernels(
        _op, lambda attr: CudaKernel("sort.cu", f"opforge::cuda::RankSortKernel<{ctype(attr.inputs[0])}>", _sort_loop)
    )
