"""MaximumGrad and MinimumGrad on the GPU: ``MinMaxGradKernel`` of ``csrc/kernels/cuda/minmax.cu``;
dout goes to the input the forward op picked (PicksX, NumPy's rule), x and y broadcast to dout; where
an input was broadcast, its gradient is then summed to its shape by ReduceSum's passes."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.loops import broadcast_index
from opforge.kernels.gpu.reduce import summer
from opforge.kernels.gpu.support import launch_1d, numel

__all__ = []


def _grad_loop(spec, function, kernel):
    """``MinMaxGradKernel<T, kMax>(x, y, dout, dx, dy, n, index, grad_x, grad_y)``."""
    device, runtime = spec.device, spec.device.runtime
    shape, np_dtype = spec.in_shapes[2], spec.entry.attr.outputs[0].np_dtype
    n = numel(shape)
    index = broadcast_index(spec.op_name, spec.in_shapes[0], spec.in_shapes[1], shape)
    grad_x = np.uint8(bool(spec.attrs.get("grad_x", True)))
    grad_y = np.uint8(bool(spec.attrs.get("grad_y", True)))
    dtype = spec.entry.attr.outputs[0]
    x_shape, y_shape = tuple(spec.in_shapes[0]), tuple(spec.in_shapes[1])
    # An input of dout's size takes its gradient as it is, in its own shape.
    sum_x = summer(spec, dtype, shape, x_shape) or (lambda a: runtime.reshape(a, x_shape))
    sum_y = summer(spec, dtype, shape, y_shape) or (lambda a: runtime.reshape(a, y_shape))

    def run(arrays):
        dx, dy = device.empty(shape, np_dtype), device.empty(shape, np_dtype)
        launch_1d(runtime, function, n, (*arrays[:3], dx, dy, np.int64(n), index, grad_x, grad_y))
        return sum_x(dx), sum_y(dy)

    return run


def _make(is_max: bool):
    flag = "true" if is_max else "false"
    return lambda attr: CudaKernel(
        "minmax.cu", f"opforge::cuda::MinMaxGradKernel<{ctype(attr.inputs[0])}, {flag}>", _grad_loop
    )


mirror_cpu_kernels("MaximumGrad", _make(True))
mirror_cpu_kernels("MinimumGrad", _make(False))
