"""Conv2D, its two gradients, MaxPool, AvgPool and their gradients on the GPU: the direct kernels of
``csrc/kernels/cuda/conv.cu`` and ``pool.cu`` (one thread per output element, the window math of
``opforge/functors/conv.h`` the CPU kernels use), for every KernelAttr the CPU registers."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.geometry import conv_output_and_pads
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import launch_1d, numel

__all__ = []


def _window(spec, x, y, conv: bool) -> tuple:
    """The int64 geometry ``(pad_top, pad_left, kh, kw, sh, sw, dh, dw, group)`` checked against the
    shapes: ``x`` the forward's input, ``y`` its output."""
    op, attrs = spec.op_name, spec.attrs
    if len(x) != 4 or len(y) != 4:
        raise KernelError(f"For '{op}', the tensors must be 4-D (NCHW), but got {list(x)} and {list(y)}.")
    k = tuple(attrs["kernel_size"])[-2:]
    s = tuple(attrs["stride" if conv else "strides"])[-2:]
    d = tuple(attrs["dilation"])[-2:] if conv else (1, 1)
    group = int(attrs["group"]) if conv else 1
    mode = attrs["pad_mode"]
    pad = tuple(attrs.get("pad", (0, 0, 0, 0))) if conv else (0, 0, 0, 0)
    oh, pt, _ = conv_output_and_pads(op, x[2], k[0], s[0], d[0], mode, pad[:2])
    ow, pl, _ = conv_output_and_pads(op, x[3], k[1], s[1], d[1], mode, pad[2:])
    if list(y[2:]) != [oh, ow] or y[0] != x[0]:
        raise KernelError(f"For '{op}', the output shape {list(y)} does not match the input {list(x)} and the attrs.")
    return pt, pl, k, s, d, group


def _conv_loop(kind: str):
    def loop(spec, function, kernel):
        """``Conv2D*Kernel<T>(a, b, out, n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group)``."""
        device, runtime = spec.device, spec.device.runtime
        a, b, out = (list(s) for s in (*spec.in_shapes[:2], spec.out_shapes[0]))
        x = {"forward": a, "input": out, "filter": b}[kind]
        y = a if kind != "forward" else out
        pt, pl, k, s, d, group = _window(spec, x, y, True)
        geometry = tuple(np.int64(v) for v in (*x, y[1], y[2], y[3], *k, *s, *d, pt, pl, group))
        shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
        n = numel(shape)

        def run(arrays):
            result = device.empty(shape, np_dtype)
            launch_1d(runtime, function, n, (arrays[0], arrays[1], result, *geometry))
            return result

        return run

    return loop


def _pool_loop(grad: bool, grad_grad: bool = False):
    def loop(spec, function, kernel):
        """``PoolKernel<T, kMax>(x, y, ...)`` / ``PoolGradKernel<T, kMax>(x, out, dy, dx, ...)`` with
        ``(n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl)``."""
        device, runtime = spec.device, spec.device.runtime
        x = list(spec.in_shapes[0])
        y = list(spec.in_shapes[2]) if grad and not grad_grad else list(spec.out_shapes[0])
        pt, pl, k, s, _, _ = _window(spec, x, y, False)
        geometry = tuple(np.int64(v) for v in (*x, y[2], y[3], *k, *s, pt, pl))
        shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
        n = numel(shape)

        def run(arrays):
            result = device.empty(shape, np_dtype)
            launch_1d(runtime, function, n, (*arrays[: 3 if grad else 1], result, *geometry))
            return result

        return run

    return loop


def _conv(name: str, kind: str):
    return lambda attr: CudaKernel("conv.cu", f"opforge::cuda::{name}<{ctype(attr.inputs[0])}>", _conv_loop(kind))


def _pool(name: str, is_max: bool, grad: bool):
    flag = "true" if is_max else "false"
    return lambda attr: CudaKernel(
        "pool.cu", f"opforge::cuda::{name}<{ctype(attr.inputs[0])}, {flag}>", _pool_loop(grad)
    )


mirror_cpu_kernels("Conv2D", _conv("Conv2DKernel", "forward"))
mirror_cpu_kernels("Conv2DBackpropInput", _conv("Conv2DBackpropInputKernel", "input"))
mirror_cpu_kernels("Conv2DBackpropFilter", _conv("Conv2DBackpropFilterKernel", "filter"))
mirror_cpu_kernels("MaxPool", _pool("PoolKernel", True, False))
mirror_cpu_kernels("AvgPool", _pool("PoolKernel", False, False))
mirror_cpu_kernels("MaxPoolGrad", _pool("PoolGradKernel", True, True))
mirror_cpu_kernels("AvgPoolGrad", _pool("PoolGradKernel", False, True))
mirror_cpu_kernels(
    "MaxPoolGradGrad",
    lambda attr: CudaKernel(
        "pool.cu", f"opforge::cuda::MaxPoolGradGradKernel<{ctype(attr.inputs[0])}>", _pool_loop(True, True)
    ),
)
