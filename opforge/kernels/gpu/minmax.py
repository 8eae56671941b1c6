"""MaximumGrad and MinimumGrad on the GPU: ``MinMaxGradKernel`` of ``csrc/kernels/cuda/minmax.cu``;
dout goes to the input the forward op picked (PicksX, NumPy's rule), x and y broadcast to dout; where
an input was broadcast, its gradient is then summed to its shape by ReduceSum's passes; launched from C."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.loops import broadcast_index
from opforge.kernels.gpu.reduce import sum_to_steps
from opforge.kernels.gpu.support import device_launch, input_params, numel, step_1d

__all__ = []


def _grad_loop(spec, function, kernel):
    """``MinMaxGradKernel<T, kMax>(x, y, dout, dx, dy, n, index, grad_x, grad_y)`` into dout's shape, then
    each gradient of a broadcast input summed to its shape."""
    runtime, op_name = spec.device.runtime, spec.op_name
    shape, dtype = tuple(spec.in_shapes[2]), spec.entry.attr.outputs[0]
    n = numel(shape)
    index = broadcast_index(op_name, spec.in_shapes[0], spec.in_shapes[1], shape)
    grad_x = np.uint8(bool(spec.attrs.get("grad_x", True)))
    grad_y = np.uint8(bool(spec.attrs.get("grad_y", True)))
    in_shapes = (tuple(spec.in_shapes[0]), tuple(spec.in_shapes[1]))
    temps, sums, written = [], [], []
    for i, in_shape in enumerate(in_shapes):
        if numel(in_shape) == n:  # dout's elements, in the input's own shape: written as they are
            written.append(("out", i))
            continue
        temps.append((shape, dtype.np_dtype))
        written.append(("tmp", len(temps) - 1))
        sums.append((written[-1], in_shape, ("out", i)))
    steps = step_1d(runtime, function, n, [*input_params(spec), *written, np.int64(n), index, grad_x, grad_y])
    for full, in_shape, out in sums:
        steps += sum_to_steps(runtime, op_name, dtype, shape, in_shape, full, out, temps)
    return device_launch(spec, [(s, dtype.np_dtype) for s in in_shapes], steps, temps)


def _make(is_max: bool):
    flag = "true" if is_max else "false"
    return lambda attr: CudaKernel(
        "minmax.cu", f"opforge::cuda::MinMaxGradKernel<{ctype(attr.inputs[0])}, {flag}>", _grad_loop
    )


mirror_cpu_kernels("MaximumGrad", _make(True))
mirror_cpu_kernels("MinimumGrad", _make(False))
