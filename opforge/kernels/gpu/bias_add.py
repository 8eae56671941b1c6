"""BiasAdd on the GPU: ``BiasAddKernel`` of ``csrc/kernels/cuda/bias_add.cu`` (AddOp, the CPU's math)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, numel, step_1d

__all__ = []

_FORMATS = ("NCHW", "NHWC", "NCDHW")


def _channels_and_inner(spec) -> tuple:
    """x viewed as [outer, channels, inner]: the channel axis is 1, or the last for 'NHWC'."""
    op, x, bias = spec.op_name, list(spec.in_shapes[0]), list(spec.in_shapes[1])
    data_format = spec.attrs.get("data_format", "NCHW")
    if data_format not in _FORMATS:
        raise KernelError(
            f"For '{op}', the attr 'data_format' must be one of {list(_FORMATS)}, but got {data_format!r}."
        )
    if len(x) < 2:
        raise KernelError(f"For '{op}', the input 'x' must have at least 2 dims, but got shape {x}.")
    axis = len(x) - 1 if data_format == "NHWC" else 1
    if bias != [x[axis]]:
        raise KernelError(
            f"For '{op}', 'bias' must be 1-D with length equal to the channel dim {x[axis]} of x (data_format "
            f"{data_format!r}), but got x shape {x} and bias shape {bias}."
        )
    return x[axis], numel(x[axis + 1 :])


def _bias_add_loop(spec, function, kernel):
    """``BiasAddKernel<T>(x, bias, out, n, channels, inner)``."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    channels, inner = _channels_and_inner(spec)
    n = numel(shape)
    params = [("in", 0), ("in", 1), ("out", 0), np.int64(n), np.int64(channels), np.int64(inner)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


mirror_cpu_kernels(
    "BiasAdd",
    lambda attr: CudaKernel("bias_add.cu", f"opforge::cuda::BiasAddKernel<{ctype(attr.inputs[0])}>", _bias_add_loop),
)
