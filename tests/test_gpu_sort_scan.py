"""Sort, TopK and CumSum on the GPU against the CPU kernels, on the ways the GPU kernels take: Sort and TopK
ranked in place (short rows), through the library sort of packed 32- or 64-bit keys, or in two stable passes
(opforge/kernels/gpu/sort.py); CumSum's block scan of contiguous rows and its line-per-thread loop
(opforge/kernels/gpu/cumsum.py)."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge.kernels.gpu.sort import RANK_SORT_MAX_N, sort_plan


def _on_both(op, *args):
    """op's outputs on the CPU and on the GPU, as host arrays."""
    cpu = op(*(Tensor(a) if isinstance(a, np.ndarray) else a for a in args))
    gpu = op(*(Tensor(a, device="GPU") if isinstance(a, np.ndarray) else a for a in args))
    cpu, gpu = (cpu if isinstance(cpu, tuple) else (cpu,)), (gpu if isinstance(gpu, tuple) else (gpu,))
    assert all(t.device == "GPU" for t in gpu)
    return [t.asnumpy() for t in cpu], [t.asnumpy() for t in gpu]


def _tied(shape, dtype, rng):
    """Few distinct values: many ties; NaN, infinities and both zeros for floats."""
    if np.dtype(dtype).kind == "f":
        pool = np.array([np.nan, -np.inf, np.inf, -1.5, -0.0, 0.0, 2.0, 3.25, 1e-3, -7.0])
        return rng.choice(pool, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    pool = np.array([info.min, info.max, 0, 1, 2, -1 if info.min < 0 else 3], dtype=np.int64)
    return rng.choice(pool, size=shape).astype(dtype)


def _same(cpu, gpu):
    for c, g in zip(cpu, gpu):
        assert c.dtype == g.dtype and c.shape == g.shape
        np.testing.assert_array_equal(c, g)  # NaN equal to NaN; -0.0 == 0.0 (the index says which)


# (dtype, n): rows of n take each way (sort_plan) with the shapes below
SORT_CASES = [
    (np.float32, 7),  # ranked in place
    (np.float16, 40),  # packed in 32 bits
    (np.int8, 300),  # packed in 32 bits
    (np.float32, 40),  # packed in 64 bits
    (np.int32, 33),  # packed in 64 bits
    (np.float64, 40),  # two passes
    (np.int64, 21),  # two passes
]


@pytest.mark.parametrize("dtype,n", SORT_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_the_cpu_on_every_axis(dtype, n, descending, rng):
    for shape, axis in [((n,), 0), ((3, n), -1), ((n, 5), 0), ((2, n, 3), 1), ((4, 2, n), 2)]:
        x = _tied(shape, dtype, rng)
        cpu, gpu = _on_both(ops.Sort(axis, descending), x)
        _same(cpu, gpu)


def test_the_cases_take_every_way():
    ways = {sort_plan(8 * np.dtype(d).itemsize, 8, n)[:2] for d, n in SORT_CASES}
    assert ways == {("rank",), ("packed", 32), ("packed", 64), ("two_pass",)}
    assert sort_plan(32, 1, RANK_SORT_MAX_N + 1)[:2] == ("packed", 64)
    assert sort_plan(32, 1 << 19, 1 << 13) == ("packed", 64, 13, 45)  # 19 + 32 + 13 bits
    assert sort_plan(32, 1 << 20, 1 << 13) == ("two_pass",)  # 65 bits
    assert sort_plan(16, 1, 1 << 16) == ("packed", 32, 16, 32)  # one row: no row bits


@pytest.mark.parametrize("dtype,n", SORT_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_topk_matches_the_cpu_for_every_k(dtype, n, rng):
    x = _tied((3, 2, n), dtype, rng)
    for k in sorted({0, 1, 2, n // 2, n - 1, n}):
        cpu, gpu = _on_both(ops.TopK(), x, k)
        _same(cpu, gpu)
    cpu, gpu = _on_both(ops.TopK(), _tied((n,), dtype, rng), n)  # 1-d
    _same(cpu, gpu)


def test_sort_orders_nan_zeros_and_ties_as_the_cpu():
    row = np.array([0.0, np.nan, -0.0, 1.0, np.nan, -np.inf, 1.0, 0.0] * 3, np.float32)
    for descending in (False, True):
        cpu, gpu = _on_both(ops.Sort(-1, descending), row)
        _same(cpu, gpu)
    values, indices = ops.Sort(-1, True)(Tensor(row, device="GPU"))
    assert indices.asnumpy()[:6].tolist() == [1, 4, 9, 12, 17, 20]  # NaN first, by index
    values, indices = ops.Sort()(Tensor(row, device="GPU"))
    assert indices.asnumpy()[-6:].tolist() == [1, 4, 9, 12, 17, 20]  # NaN last, by index
    zeros = [i for i in indices.asnumpy().tolist() if row[i] == 0]
    assert zeros == sorted(zeros)  # -0.0 and 0.0 tie


def test_sort_of_empty_and_bfloat16(rng):
    for shape in [(0, 40), (3, 0), (40, 0)]:
        cpu, gpu = _on_both(ops.Sort(-1, True), np.zeros(shape, np.float32))
        _same(cpu, gpu)
    x = Tensor(_tied((4, 50), np.float32, rng)).astype(opforge.bfloat16)
    for descending in (False, True):
        cpu = [t.astype(opforge.float32).asnumpy() for t in ops.Sort(-1, descending)(x)]
        gpu = [t.astype(opforge.float32).asnumpy() for t in ops.Sort(-1, descending)(x.to("GPU"))]
        _same(cpu, gpu)
