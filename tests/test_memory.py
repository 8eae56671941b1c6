"""The caching allocator of kernel outputs (opforge.memory): reuse, statistics, limits, lifetimes,
threads and results identical to NumPy with pooling on."""

from __future__ import annotations

import gc
import sys
import threading

import numpy as np
import pytest

import opforge
from opforge import memory, ops

N = 300_000  # float32: 1.2 MB, well above the pooling threshold
BUCKET = memory.bucket_size(N * 4)


@pytest.fixture(autouse=True)
def pool_state():
    """Restore the pool's settings, and keep the cyclic GC from freeing other tests' arrays mid-test."""
    saved = (memory.get_max_cached_bytes(), memory.get_min_pooled_bytes(), memory.is_enabled())
    gc.collect()
    gc.disable()
    memory.set_enabled(True)
    memory.set_min_pooled_bytes(64 << 10)
    try:
        yield
    finally:
        gc.enable()
        memory.set_max_cached_bytes(saved[0])
        memory.set_min_pooled_bytes(saved[1])
        memory.set_enabled(saved[2])


def _tensor(rng, *shape, dtype=np.float32):
    return opforge.Tensor(rng.standard_normal(shape).astype(dtype))


def _delta(before: dict, after: dict, key: str) -> int:
    return after[key] - before[key]


def test_bucket_sizes():
    assert memory.bucket_size(0) == 4096
    assert memory.bucket_size(1) == 4096
    assert memory.bucket_size(4097) == 8192
    assert memory.bucket_size(64 << 10) == 64 << 10
    assert memory.bucket_size(64_000_000) == 64 << 20
    previous = 0
    for n in range(1, 50_000_000, 999_983):
        b = memory.bucket_size(n)
        assert b >= n and b % 4096 == 0 and b >= previous
        assert b <= max(4 * 4096, n * 1.25)
        previous = b
    with pytest.raises(ValueError, match="nbytes"):
        memory.bucket_size(-1)


def test_small_outputs_keep_numpy_allocation(rng):
    x = _tensor(rng, 1000)
    before = memory.stats()
    y = ops.ReLU()(x)
    assert not memory.is_pooled(y)
    assert memory.stats()["allocations"] == before["allocations"]


def test_reuse_counts_hits_misses_and_cached_bytes(rng):
    x = _tensor(rng, N)
    relu = ops.ReLU()
    memory.empty_cache()
    s0 = memory.stats()
    y = relu(x)
    assert memory.is_pooled(y)
    s1 = memory.stats()
    assert _delta(s0, s1, "misses") == 1 and _delta(s0, s1, "hits") == 0
    assert _delta(s0, s1, "allocations") == 1
    assert _delta(s0, s1, "bytes_in_use") == BUCKET
    assert _delta(s0, s1, "requested_bytes_in_use") == N * 4
    assert _delta(s0, s1, "blocks_in_use") == 1
    assert s1["peak_bytes_in_use"] >= s1["bytes_in_use"]
    del y
    s2 = memory.stats()
    assert _delta(s1, s2, "frees") == 1
    assert _delta(s1, s2, "bytes_in_use") == -BUCKET
    assert _delta(s1, s2, "bytes_cached") == BUCKET
    assert s2["bytes_reserved"] == s2["bytes_in_use"] + s2["bytes_cached"]
    y = relu(x)
    s3 = memory.stats()
    assert _delta(s2, s3, "hits") == 1 and _delta(s2, s3, "misses") == 0
    assert _delta(s2, s3, "bytes_cached") == -BUCKET
    np.testing.assert_array_equal(y.asnumpy(), np.maximum(x.asnumpy(), 0))


def test_peak_and_reset_stats(rng):
    x = _tensor(rng, N)
    memory.reset_stats()
    s0 = memory.stats()
    assert s0["hits"] == s0["misses"] == s0["frees"] == s0["releases"] == 0
    assert s0["peak_bytes_in_use"] == s0["bytes_in_use"]
    a, b, c = ops.ReLU()(x), ops.Neg()(x), ops.Exp()(x)
    s1 = memory.stats()
    assert s1["peak_bytes_in_use"] >= s0["bytes_in_use"] + 3 * BUCKET
    del a, b, c
    s2 = memory.stats()
    assert s2["peak_bytes_in_use"] == s1["peak_bytes_in_use"]
    memory.reset_stats()
    assert memory.stats()["peak_bytes_in_use"] == s2["bytes_in_use"]


def test_empty_cache_releases_cached_bytes(rng):
    x = _tensor(rng, N)
    ys = [ops.ReLU()(x) for _ in range(3)]
    del ys
    s0 = memory.stats()
    assert s0["bytes_cached"] >= 3 * BUCKET
    released = memory.empty_cache()
    s1 = memory.stats()
    assert released == s0["bytes_cached"]
    assert s1["bytes_cached"] == 0 and s1["blocks_cached"] == 0
    assert _delta(s0, s1, "releases") == s0["blocks_cached"]
    assert s1["bytes_in_use"] == s0["bytes_in_use"]


def test_arrays_stay_valid_after_empty_cache(rng):
    x = _tensor(rng, N)
    y = ops.ReLU()(x)
    memory.empty_cache()
    z = ops.Neg()(x)  # may map the same addresses again: must not alias y
    np.testing.assert_array_equal(y.asnumpy(), np.maximum(x.asnumpy(), 0))
    np.testing.assert_array_equal(z.asnumpy(), -x.asnumpy())
    before = memory.stats()
    del y
    after = memory.stats()
    assert _delta(before, after, "bytes_cached") == BUCKET  # the outliving block returns to the pool
    assert _delta(before, after, "bytes_in_use") == -BUCKET


def test_views_keep_blocks_alive(rng):
    x = _tensor(rng, N)
    expected = np.maximum(x.asnumpy(), 0)
    view = np.asarray(ops.ReLU()(x))[1000:2000]  # the Tensor and its array die; the view remains
    assert memory.is_pooled(view)
    s0 = memory.stats()
    others = [ops.Neg()(x) for _ in range(4)]  # would reuse the block if it had been freed
    np.testing.assert_array_equal(view, expected[1000:2000])
    del others
    s1 = memory.stats()
    del view
    s2 = memory.stats()
    assert _delta(s1, s2, "frees") == 1 and _delta(s1, s2, "bytes_in_use") == -BUCKET
    assert s2["bytes_in_use"] == s0["bytes_in_use"] - BUCKET


def test_max_cached_bytes_is_honoured(rng):
    x = _tensor(rng, N)
    memory.empty_cache()
    memory.set_max_cached_bytes(BUCKET)
    assert memory.get_max_cached_bytes() == BUCKET
    assert memory.stats()["max_cached_bytes"] == BUCKET
    s0 = memory.stats()
    ys = [ops.ReLU()(x) for _ in range(3)]
    del ys
    s1 = memory.stats()
    assert s1["bytes_cached"] == BUCKET
    assert _delta(s0, s1, "releases") == 2

    memory.set_max_cached_bytes(1 << 30)
    ys = [ops.ReLU()(x) for _ in range(4)]
    del ys
    assert memory.stats()["bytes_cached"] == 4 * BUCKET
    memory.set_max_cached_bytes(2 * BUCKET)  # lowering the cap trims the cache
    assert memory.stats()["bytes_cached"] == 2 * BUCKET

    memory.set_max_cached_bytes(0)
    assert memory.stats()["bytes_cached"] == 0
    y = ops.ReLU()(x)
    del y
    assert memory.stats()["bytes_cached"] == 0


def test_min_pooled_bytes_and_disabling(rng):
    x = _tensor(rng, N)
    memory.set_min_pooled_bytes(N * 4 + 1)
    assert memory.get_min_pooled_bytes() == N * 4 + 1
    assert not memory.is_pooled(ops.ReLU()(x))
    memory.set_min_pooled_bytes(N * 4)
    assert memory.is_pooled(ops.ReLU()(x))

    memory.set_enabled(False)
    assert not memory.is_enabled() and memory.stats()["enabled"] is False
    assert memory.stats()["bytes_cached"] == 0
    y = ops.ReLU()(x)
    assert not memory.is_pooled(y)
    np.testing.assert_array_equal(y.asnumpy(), np.maximum(x.asnumpy(), 0))
    memory.set_enabled(True)
    assert memory.is_pooled(ops.ReLU()(x))


def test_bad_settings():
    for bad in (-1, True, 1.5, "1"):
        with pytest.raises(ValueError, match="nbytes"):
            memory.set_max_cached_bytes(bad)
        with pytest.raises(ValueError, match="nbytes"):
            memory.set_min_pooled_bytes(bad)
    with pytest.raises(ValueError, match="enabled"):
        memory.set_enabled(1)


def test_empty_helper():
    a = memory.empty((600, 500), opforge.float64)
    assert a.shape == (600, 500) and a.dtype == np.float64
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    assert memory.is_pooled(a) and isinstance(a.base, memory.PooledBlock)
    assert "2400000 bytes" in repr(a.base)
    a[...] = 1.5
    assert float(a.sum()) == 1.5 * 600 * 500
    assert not memory.is_pooled(memory.empty(10, np.int32))
    assert memory.empty(0).shape == (0,)
    with pytest.raises(ValueError, match="negative"):
        memory.empty((-1, 3))
    with pytest.raises(ValueError, match="too big"):
        memory.empty((1 << 40, 1 << 40))
    for dtype in (object, "U8"):  # items that must start zeroed keep NumPy's (zero-filled) allocation
        big = memory.empty(100_000, dtype)
        assert not memory.is_pooled(big) and big[-1] in (None, "")
    assert memory.is_pooled(memory.empty(100_000, opforge.bfloat16))


@pytest.mark.skipif(sys.version_info < (3, 10), reason="Py_TPFLAGS_DISALLOW_INSTANTIATION is 3.10+")
def test_pooled_block_cannot_be_made_from_python():
    with pytest.raises(TypeError):
        memory.PooledBlock()


def test_blocks_are_64_byte_aligned(rng):
    for n in (16_384, 100_003, N, 1 << 20):
        y = ops.ReLU()(_tensor(rng, n))
        assert memory.is_pooled(y)
        assert np.asarray(y).ctypes.data % 64 == 0


def _poison(shape, dtype=np.float32):
    """Leave a NaN-filled block of this size in the cache, for the next output to reuse."""
    a = memory.empty(shape, dtype)
    a.fill(np.nan if np.dtype(dtype).kind == "f" else -7)
    del a


def test_results_match_numpy_on_reused_blocks(rng):
    n = 1_000_003
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = opforge.Tensor(a), opforge.Tensor(b)
    for _ in range(2):  # the second round runs entirely on reused (poisoned) blocks
        _poison(n)
        np.testing.assert_array_equal(ops.ReLU()(x).asnumpy(), np.maximum(a, 0))
        _poison(n)
        np.testing.assert_array_equal(ops.Add()(x, y).asnumpy(), a + b)
        _poison(n)
        np.testing.assert_array_equal(ops.Mul()(x, y).asnumpy(), a * b)

    m = rng.standard_normal((384, 512)).astype(np.float32)
    k = rng.standard_normal((512, 256)).astype(np.float32)
    _poison((384, 256))
    got = ops.MatMul()(opforge.Tensor(m), opforge.Tensor(k)).asnumpy()
    np.testing.assert_allclose(got, m @ k, rtol=1e-4, atol=1e-4)

    r = rng.standard_normal((8, 100_000)).astype(np.float32)
    _poison((100_000,))
    np.testing.assert_allclose(ops.ReduceSum()(opforge.Tensor(r), 0).asnumpy(), r.sum(0), rtol=1e-5, atol=1e-5)
    _poison((100_000,))
    np.testing.assert_array_equal(ops.ReduceMax()(opforge.Tensor(r), 0).asnumpy(), r.max(0))
    _poison((100_000, 8))
    np.testing.assert_array_equal(ops.Transpose()(opforge.Tensor(r), (1, 0)).asnumpy(), r.T)

    d = rng.standard_normal(200_000)
    _poison((200_000,), np.float64)
    np.testing.assert_array_equal(ops.ReLU()(opforge.Tensor(d)).asnumpy(), np.maximum(d, 0))


def test_in_place_outputs_are_not_pooled(rng):
    a = rng.standard_normal(N).astype(np.float32)
    p = opforge.Parameter(opforge.Tensor(np.zeros(N, np.float32)), name="p")
    assert memory.is_pooled(p)  # a Parameter's own memory comes from the pool (stats count the weights)
    storage = np.asarray(p).__array_interface__["data"][0]
    before = memory.stats()
    ops.Assign()(p, opforge.Tensor(a))
    np.testing.assert_array_equal(p.asnumpy(), a)
    assert np.asarray(p).__array_interface__["data"][0] == storage  # written in place, not replaced
    assert memory.stats()["allocations"] == before["allocations"]


def test_threads_running_large_ops(rng):
    inputs = [(rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)) for _ in range(4)]
    mats = [rng.standard_normal((256, 256)).astype(np.float32) for _ in range(4)]
    baseline = memory.stats()["bytes_in_use"]
    errors = []
    barrier = threading.Barrier(len(inputs))

    def work(i):
        try:
            a, b = inputs[i]
            x, y, m = opforge.Tensor(a), opforge.Tensor(b), opforge.Tensor(mats[i])
            relu, add, matmul = ops.ReLU(), ops.Add(), ops.MatMul()
            barrier.wait()
            for _ in range(25):
                r, s, p = relu(x), add(x, y), matmul(m, m)
                np.testing.assert_array_equal(r.asnumpy(), np.maximum(a, 0))
                np.testing.assert_array_equal(s.asnumpy(), a + b)
                np.testing.assert_allclose(p.asnumpy(), mats[i] @ mats[i], rtol=1e-4, atol=1e-3)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    s = memory.stats()
    assert s["bytes_in_use"] == baseline
    assert s["bytes_cached"] <= s["max_cached_bytes"]


def test_no_leak_over_many_iterations(rng):
    x, y = _tensor(rng, N), _tensor(rng, N)
    relu, add, mul = ops.ReLU(), ops.Add(), ops.Mul()
    for _ in range(5):  # warm up plans and the cache
        relu(add(x, y))
    s0 = memory.stats()
    for _ in range(300):
        z = mul(relu(add(x, y)), x)
        del z
    s1 = memory.stats()
    assert s1["bytes_in_use"] == s0["bytes_in_use"]
    assert s1["blocks_in_use"] == s0["blocks_in_use"]
    assert _delta(s0, s1, "misses") == 0  # steady state: every output reuses a cached block
    assert _delta(s0, s1, "hits") == 900
    assert s1["bytes_reserved"] == s0["bytes_reserved"]


@pytest.mark.parametrize(
    "call",
    [
        lambda t: ops.Mul()(t, 0.01),  # a weak scalar: the plan converts it on every call
        lambda t: ops.Add()(t, t),
        lambda t: ops.Cast()(t, opforge.float64),
        lambda t: ops.Assign()(t, ops.ZerosLike()(t)),  # an in-place write
    ],
    ids=["weak-scalar", "tensors", "constant", "in-place"],
)
def test_a_cached_plan_keeps_no_argument_alive(call):
    """The plan a call builds is cached for every later call with the same metas: it must not hold the
    first call's arguments (a Parameter decayed by an optimizer stayed alive, with its memory, after its
    network was dropped)."""
    import weakref

    t = opforge.Parameter(opforge.Tensor(np.ones((3, 5), np.float32)), name="w")
    call(t)
    alive = weakref.ref(t)
    del t
    gc.collect()
    assert alive() is None
