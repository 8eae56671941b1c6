"""Range on the GPU: ``RangeKernel<T>`` of ``csrc/kernels/cuda/range.cu`` for every KernelAttr the CPU
registers; the functor's fields (start, delta) are passed as its bytes."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, numel, step_1d

__all__ = []


def _range_loop(spec, function, kernel):
    """``RangeKernel<T>(out, n, RangeOp<T>{start, delta})``; int64 fields for integer outputs, else double."""
    shape, dtype = spec.out_shapes[0], spec.entry.attr.outputs[0]
    field = np.int64 if dtype.kind in "iu" else np.float64
    op = np.zeros((), np.dtype([("start", field), ("delta", field)], align=True))
    op["start"], op["delta"] = spec.attrs["start"], spec.attrs["delta"]
    op = op[()]
    n = numel(shape)
    steps = step_1d(spec.device.runtime, function, n, [("out", 0), np.int64(n), op])
    return device_launch(spec, [(shape, dtype.np_dtype)], steps)


mirror_cpu_kernels(
    "Range", lambda attr: CudaKernel("range.cu", f"opforge::cuda::RangeKernel<{ctype(attr.outputs[0])}>", _range_loop)
)
