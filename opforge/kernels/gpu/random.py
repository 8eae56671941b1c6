"""Randn, RandExt, RandInt, RandGamma and RandPoisson on the GPU: the kernels of
``csrc/kernels/cuda/random.cu`` for every KernelAttr the CPU registers, one thread per element; the seed and
offset inputs stay on the device (read by each thread), so a device graph replays new values when a trace
moves its counter on."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, input_params, numel, step_1d

__all__ = []

_SOURCE = "random.cu"


def _random_loop(spec, function, kernel):
    """``<Op>Kernel<T>(seed, offset, out, n[, low, range])``."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = numel(shape)
    bounds = ()
    if spec.op_name == "RandInt":
        low, high = int(spec.attrs["low"]), int(spec.attrs["high"])
        bounds = (np.int64(low), np.uint64((high - low) % 2**64))
    params = [("in", 0), ("in", 1), ("out", 0), np.int64(n), *bounds]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


def _parametrized_loop(spec, function, kernel):
    """``<Op>Kernel<...>(parameter, seed, offset, out, n)``: RandGamma, RandPoisson."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = numel(shape)
    params = [*input_params(spec), ("out", 0), np.int64(n)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


def _make(name: str):
    return lambda attr: CudaKernel(_SOURCE, f"opforge::cuda::{name}Kernel<{ctype(attr.outputs[0])}>", _random_loop)


for _name in ("Randn", "RandExt", "RandInt"):
    mirror_cpu_kernels(_name, _make(_name))
mirror_cpu_kernels(
    "RandGamma",
    lambda attr: CudaKernel(_SOURCE, f"opforge::cuda::RandGammaKernel<{ctype(attr.outputs[0])}>", _parametrized_loop),
)
mirror_cpu_kernels(
    "RandPoisson",
    lambda attr: CudaKernel(
        _SOURCE,
        f"opforge::cuda::RandPoissonKernel<{ctype(attr.inputs[0])}, {ctype(attr.outputs[0])}>",
        _parametrized_loop,
    ),
)
