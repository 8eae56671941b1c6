"""The random operators' front ends (opforge/ops/frontend_random.py) and the Generator: MindSpore's seeding
rules, reproducibility with set_seed, new values at each call and at each replay of a jitted function, the
distributions (moments and counts within wide statistical bounds), the same values on the GPU, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, context, ops
from opforge import dtype as mstype


def _np(t) -> np.ndarray:
    return t.asnumpy()


def test_set_seed_makes_the_sequence_reproducible_and_calls_differ():
    opforge.set_seed(11)
    first = [_np(ops.randn(4)), _np(ops.rand(4)), _np(ops.randint(0, 100, (4,)))]
    opforge.set_seed(11)
    again = [_np(ops.randn(4)), _np(ops.rand(4)), _np(ops.randint(0, 100, (4,)))]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(_np(ops.randn(4)), first[0])


def test_a_given_seed_gives_the_same_values_each_call():
    np.testing.assert_array_equal(_np(ops.randn(3, 2, seed=7)), _np(ops.randn((3, 2), seed=7)))
    assert not np.array_equal(_np(ops.randn(3, seed=7)), _np(ops.randn(3, seed=8)))


def test_operator_classes_draw_new_values_per_call_reproducibly():
    opforge.set_seed(3)
    op = ops.StandardNormal(seed=2)
    a, b = _np(op((3, 4))), _np(op((3, 4)))
    assert a.dtype == np.float32 and a.shape == (3, 4) and not np.array_equal(a, b)
    opforge.set_seed(3)
    np.testing.assert_array_equal(_np(ops.StandardNormal(seed=2)((3, 4))), a)
    u = _np(ops.UniformReal(seed=1)((1000,)))
    assert u.dtype == np.float32 and 0.0 <= u.min() and u.max() < 1.0
    i = _np(ops.UniformInt(seed=1)((1000,), Tensor(np.array(-2, np.int32)), Tensor(np.array(3, np.int32))))
    assert i.dtype == np.int32 and set(np.unique(i)) == {-2, -1, 0, 1, 2}


def test_moments_and_counts():
    z = _np(ops.randn(200_000, dtype=mstype.float64, seed=1))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
    assert abs(np.mean(np.abs(z) < 1.0) - 0.6827) < 0.005  # the normal's mass within one sigma
    u = _np(ops.rand(200_000, dtype=mstype.float64, seed=2))
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    counts = np.bincount(_np(ops.randint(0, 10, (100_000,), seed=3)), minlength=10)
    assert counts.min() > 9_500 and counts.max() < 10_500


def test_the_other_functional_ops():
    x = Tensor(np.zeros((2, 3), np.float32))
    assert ops.randn_like(x).shape == (2, 3) and ops.rand_like(x, dtype=mstype.float64).dtype == mstype.float64
    r = _np(ops.randint_like(x, 5, 9))
    assert r.dtype == np.int64 and r.min() >= 5 and r.max() < 9
    u = _np(ops.uniform((1000,), Tensor(2.0), Tensor(3.0), seed=4))
    assert 2.0 <= u.min() and u.max() < 3.0
    n = _np(ops.normal((20_000,), 5.0, 2.0, seed=5))
    assert abs(n.mean() - 5.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    b = _np(ops.bernoulli(Tensor(np.zeros(20_000, np.float32)), 0.25, seed=6))
    assert b.dtype == np.float32 and set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.25) < 0.01
    p = _np(ops.randperm(50, seed=1))
    assert p.dtype == np.int64 and sorted(p) == list(range(50))
    np.testing.assert_array_equal(_np(ops.randperm(50, seed=1)), p)
    s = _np(ops.shuffle(Tensor(np.arange(20).reshape(10, 2)), seed=2))
    assert sorted(s[:, 0].tolist()) == list(range(0, 20, 2)) and np.all(s[:, 1] == s[:, 0] + 1)


def test_multinomial():
    w = Tensor(np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 0.0]], np.float32))
    draws = _np(ops.multinomial(w, 4000, seed=1))
    assert draws.shape == (2, 4000) and draws.dtype == np.int64
    assert abs(np.mean(draws[0] == 2) - 0.75) < 0.03 and not np.any(draws[0] == 0) and np.all(draws[1] == 0)
    distinct = _np(ops.multinomial(Tensor(np.array([1.0, 1.0, 1.0, 1.0], np.float32)), 4, replacement=False))
    assert sorted(distinct) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples"):
        ops.multinomial(w, 4, replacement=False)


def test_a_jitted_function_draws_what_eager_calls_would():
    @opforge.jit
    def noisy(x):
        return x + ops.randn(5)

    x = Tensor(np.zeros(5, np.float32))
    opforge.set_seed(9)
    replays = [_np(noisy(x)) for _ in range(3)]
    opforge.set_seed(9)
    eager = [_np(ops.randn(5)) for _ in range(3)]
    for a, b in zip(replays, eager):
        np.testing.assert_array_equal(a, b)


def test_the_gpu_draws_the_cpu_values():
    values = {}
    for device in ("CPU", "GPU"):
        context.set_context(device_target=device)
        try:
            out = ops.randn(3, 4, seed=5)
            assert out.device == device
            values[device] = _np(out)
        finally:
            context.set_context(device_target="CPU")
    # equal on the emulation; on a GPU within the ulps of its float math functions
    np.testing.assert_allclose(values["CPU"], values["GPU"], rtol=1e-5, atol=1e-5)


def test_generator_state():
    g = opforge.Generator().manual_seed(5)
    state = g.get_state()
    np.testing.assert_array_equal(_np(state), [5, 0])
    opforge.manual_seed(21)
    first = _np(ops.rand(3))
    saved = opforge.get_rng_state()
    second = _np(ops.rand(3))
    opforge.set_rng_state(saved)
    np.testing.assert_array_equal(_np(ops.rand(3)), second)
    assert opforge.initial_seed() == 21 and not np.array_equal(first, second)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: ops.randn(2, dtype=mstype.int32), TypeError, "randn.*dtype"),
        (lambda: ops.randint(3, 3, (2,)), ValueError, "high"),
        (lambda: ops.randint(0, 3, (2,), dtype=mstype.float32), TypeError, "randint.*dtype"),
        (lambda: ops.StandardNormal(seed=-1), ValueError, "StandardNormal.*seed"),
        (lambda: ops.StandardNormal()("3"), TypeError, "StandardNormal.*shape"),
        (lambda: ops.rand(2, seed=1.5), ValueError, "rand.*seed"),
        (lambda: opforge.Generator().set_state([1]), ValueError, "state"),
        (lambda: ops.shuffle(Tensor(np.array(1.0))), ValueError, "shuffle"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
