"""The GPU device's own casts (the launchers' widening casts, Tensor.astype): opforge's Cast kernels,
so they agree with the CPU's Cast bit for bit, complex dtypes included."""

from __future__ import annotations

import numpy as np

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.device import get_device


def test_device_cast_matches_cpu_cast(rng):
    gpu = get_device("GPU")
    x = np.concatenate([rng.normal(0, 1e5, 64), [np.nan, np.inf, -np.inf, -0.0, 1e300, -1e300, 65519.99]])
    for dst in (mstype.float16, mstype.bfloat16, mstype.int8, mstype.uint32, mstype.int64, mstype.bool_):
        on_gpu = gpu.to_host(gpu.cast(gpu.asarray(x, np.float64), dst.np_dtype))
        on_cpu = ops.Cast()(Tensor(x), dst).asnumpy()
        assert on_gpu.dtype == on_cpu.dtype and on_gpu.tobytes() == on_cpu.tobytes(), dst


def test_device_cast_complex_matches_cpu_cast():
    gpu = get_device("GPU")
    z = np.array([1 + 2j, -3.5 - 0.25j, complex(np.nan, 1.0), complex(np.inf, -1.0), 0j], np.complex128)
    for dst in (mstype.float32, mstype.int32, mstype.bool_, mstype.complex64, mstype.complex128):
        on_gpu = gpu.to_host(gpu.cast(gpu.asarray(z, None), dst.np_dtype))
        on_cpu = ops.Cast()(Tensor(z), dst).asnumpy()
        assert on_gpu.dtype == on_cpu.dtype and on_gpu.tobytes() == on_cpu.tobytes(), dst
    x = np.array([1.5, -0.0, np.nan], np.float32)
    on_gpu = gpu.to_host(gpu.cast(gpu.asarray(x, None), np.complex64))
    assert on_gpu.tobytes() == ops.Cast()(Tensor(x), mstype.complex64).asnumpy().tobytes()
