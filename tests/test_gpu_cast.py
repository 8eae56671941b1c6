"""The GPU device's own casts (the launchers' widening casts, Tensor.astype): opforge's Cast kernels,
so they agree with the CPU's Cast bit for bit; complex dtypes are refused clearly."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_device_cast_refuses_complex():
    gpu = get_device("GPU")
    z = gpu.asarray(np.array([1 + 2j], np.complex64), None)
    with pytest.raises(TypeError, match=r"For 'Cast', .* but got complex64 to float32"):
        gpu.cast(z, np.float32)
    same = gpu.cast(z, np.complex64)  # the same dtype is a copy
    assert gpu.to_host(same).tolist() == [1 + 2j]
