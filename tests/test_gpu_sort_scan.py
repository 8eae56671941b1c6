"""Sort, TopK and CumSum on the GPU against the CPU kernels, on the ways the GPU kernels take: Sort and TopK
ranked in place (short rows), sorted by a block in shared memory (keys of 4, 8 or 16 bytes), through the
library sort of packed 32- or 64-bit keys, or in two stable passes (opforge/kernels/gpu/sort.py); CumSum's
block scan of contiguous rows and its line-per-thread loop (opforge/kernels/gpu/cumsum.py)."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge.kernels.gpu.sort import BLOCK_SORT_MAX_N, RANK_SORT_MAX_N, WIDE_BLOCK_SORT_MAX_N, sort_plan


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
    (np.float16, 40),  # a block, 32-bit keys
    (np.int8, 300),  # a block, 32-bit keys
    (np.float32, 513),  # a block of the larger capacity, 64-bit keys
    (np.int32, 33),  # a block, 64-bit keys
    (np.int16, 200),  # a block, 256 keys with the padding
    (np.float32, 3000),  # a block, 4096 keys with the padding
    (np.float16, 4097),  # the library's sort, packed in 32 bits
    (np.float32, 5000),  # the library's sort, packed in 64 bits
    (np.float64, 40),  # a block, 16-byte keys (WideKey)
    (np.int64, 1500),  # a block of the larger capacity, 16-byte keys
    (np.float64, 2100),  # the library's sort, two passes
]


@pytest.mark.parametrize("dtype,n", SORT_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_the_cpu_on_every_axis(dtype, n, descending, rng):
    for shape, axis in [((n,), 0), ((3, n), -1), ((n, 5), 0), ((2, n, 3), 1), ((4, 2, n), 2)]:
        x = _tied(shape, dtype, rng)
        cpu, gpu = _on_both(ops.Sort(axis, descending), x)
        _same(cpu, gpu)


def test_the_cases_take_every_way():
    ways = {sort_plan(8 * np.dtype(d).itemsize, 8, n)[:3] for d, n in SORT_CASES}
    assert ways == {
        ("rank",),
        ("block", 512, 32),
        ("block", 512, 64),
        ("block", BLOCK_SORT_MAX_N, 64),
        ("block", 512, 128),
        ("block", WIDE_BLOCK_SORT_MAX_N, 128),
        ("packed", 32, 13),
        ("packed", 64, 13),
        ("two_pass",),
    }
    assert sort_plan(32, 1, RANK_SORT_MAX_N + 1)[:2] == ("block", 512)
    assert sort_plan(32, 1, BLOCK_SORT_MAX_N + 1)[:2] == ("packed", 64)
    assert sort_plan(32, 1 << 19, 1 << 13) == ("packed", 64, 13, 45)  # 19 + 32 + 13 bits
    assert sort_plan(32, 1 << 20, 1 << 13) == ("two_pass",)  # 65 bits
    assert sort_plan(16, 1, 1 << 16) == ("packed", 32, 16, 32)  # one row: no row bits
    assert sort_plan(64, 1, WIDE_BLOCK_SORT_MAX_N + 1) == ("two_pass",)


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


# CumSum: rows of a block (ROW_SCAN_MIN and longer: one tile, a partial tile, several tiles), shorter rows
# and other axes (a thread per line)
CUMSUM_SHAPES = [((3, 256), -1), ((2, 300), 1), ((2, 2048), -1), ((1, 2049), -1), ((2, 5001), -1), ((5000,), 0)]
CUMSUM_SHAPES += [((3, 255), -1), ((300, 3), 0), ((0, 300), 1), ((4, 0), 1)]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.float16])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True), (True, True)])
def test_cumsum_matches_the_cpu(dtype, exclusive, reverse, rng):
    for shape, axis in CUMSUM_SHAPES:
        if np.dtype(dtype).kind == "i":
            info = np.iinfo(dtype)  # sums that wrap
            x = rng.integers(info.max // 4, info.max, size=shape, dtype=dtype) * rng.choice([-1, 1], size=shape)
            x = x.astype(dtype)
        else:
            x = rng.standard_normal(shape).astype(dtype)
        (cpu,), (gpu,) = _on_both(ops.CumSum(exclusive, reverse), x, axis)
        assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape
        if np.dtype(dtype).kind == "i":
            np.testing.assert_array_equal(cpu, gpu)
        else:  # the block sums in another order than the CPU's serial sum (in acc_t: double for float32)
            scale = np.cumsum(np.abs(x.astype(np.float64)), axis=axis) + 1
            rtol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}[dtype]
            assert np.all(np.abs(cpu.astype(np.float64) - gpu.astype(np.float64)) <= rtol * scale)


def test_cumsum_block_rows_propagate_inf_and_nan():
    x = np.ones((2, 3000), np.float32)
    x[0, 700], x[0, 2500], x[1, 2100] = np.inf, -np.inf, np.nan
    (cpu,), (gpu,) = _on_both(ops.CumSum(), x, 1)
    np.testing.assert_array_equal(cpu, gpu)
    assert np.isnan(gpu[0, 2500:]).all() and np.isinf(gpu[0, 700:2500]).all() and np.isnan(gpu[1, 2100:]).all()
