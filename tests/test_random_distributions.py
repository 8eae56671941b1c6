"""The gamma and Poisson operators as MindSpore spells them (RandomGamma, Gamma, Poisson, RandomPoisson,
ops.gamma, random_gamma, random_poisson): their values against SciPy's distributions (Kolmogorov-Smirnov
for gamma, chi-square over the counts for Poisson, on enough draws that a wrong sampler fails and a right
one passes with certainty for these fixed seeds), shapes, dtypes, seeding, the GPU's values and errors.
tests/op_db_random.py checks the kernels bit for bit against a NumPy model of their samplers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import opforge
from opforge import Tensor, context, ops

_N = 40000


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.5, 40.0])
def test_random_gamma_follows_the_gamma_distribution(alpha):
    values = ops.RandomGamma(seed=7)((_N,), Tensor(np.array([alpha], np.float64))).asnumpy()[:, 0]
    assert scipy.stats.kstest(values, "gamma", args=(alpha,)).pvalue > 1e-3
    assert np.all(values > 0)


def test_gamma_is_scaled_by_the_inverse_scale():
    alpha = Tensor(np.array([2.0], np.float32))
    beta = Tensor(np.array([4.0], np.float32))
    values = ops.gamma((_N,), alpha, beta, seed=3).asnumpy()
    assert scipy.stats.kstest(values, "gamma", args=(2.0, 0.0, 0.25)).pvalue > 1e-3


@pytest.mark.parametrize("rate", [0.7, 6.0, 10.0, 123.4, 5000.0])
def test_random_poisson_follows_the_poisson_distribution(rate):
    counts = ops.RandomPoisson(seed=11)((_N,), Tensor(np.array([rate], np.float64))).asnumpy()[:, 0]
    low, high = scipy.stats.poisson.ppf([1e-4, 1 - 1e-4], rate).astype(int)
    bins = np.arange(low, high + 2)
    observed = np.histogram(np.clip(counts, low, high), bins=bins)[0]
    expected = np.diff(scipy.stats.poisson.cdf(bins - 1, rate))
    expected[0], expected[-1] = scipy.stats.poisson.cdf(low, rate), scipy.stats.poisson.sf(high - 1, rate)
    keep = expected * _N >= 5  # chi-square over the bins that are not too thin, the rest pooled
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum()) * _N
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert scipy.stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_shapes_and_dtypes_as_mindspore():
    alpha = Tensor(np.array([[3, 4], [5, 6]], np.float32))
    beta = Tensor(np.array([1.0], np.float32))
    assert ops.Gamma(seed=3)((3, 1, 2), alpha, beta).shape == (3, 2, 2)  # shape, alpha, beta broadcast
    assert ops.gamma((3, 1, 3), Tensor(np.ones((2, 3), np.float32)), beta, seed=5).shape == (3, 2, 3)
    out = ops.RandomGamma()((3, 2), Tensor(np.ones((2, 2), np.float16)))
    assert out.shape == (3, 2, 2, 2) and out.dtype == opforge.float16  # shape + alpha.shape
    assert ops.random_gamma((4,), Tensor(np.ones(3, np.float64)), seed=1).shape == (4, 3)
    counts = ops.Poisson(seed=1)((4, 1), Tensor(np.array([2.0, 3.0], np.float32)))
    assert counts.shape == (4, 2) and counts.dtype == opforge.int32
    counts = ops.RandomPoisson()((2,), Tensor(np.array([1, 2, 3], np.int32)))
    assert counts.shape == (2, 3) and counts.dtype == opforge.int64
    counts = ops.random_poisson((5,), Tensor(np.array([4.0, 2.0], np.float32)), seed=2)
    assert counts.shape == (5, 2) and counts.dtype == opforge.float32
    assert np.all(counts.asnumpy() == np.round(counts.asnumpy()))


def test_invalid_parameters_give_nan_or_minus_one():
    alpha = Tensor(np.array([0.0, -1.0, np.nan, np.inf], np.float32))
    np.testing.assert_array_equal(ops.random_gamma((1,), alpha, seed=1).asnumpy()[0], [np.nan, np.nan, np.nan, np.inf])
    rate = Tensor(np.array([0.0, -1.0, np.nan, np.inf], np.float32))
    np.testing.assert_array_equal(ops.random_poisson((1,), rate, seed=1).asnumpy()[0], [0, np.nan, np.nan, np.nan])
    ints = ops.random_poisson((1,), rate, seed=1, dtype=opforge.int32).asnumpy()[0]
    np.testing.assert_array_equal(ints, [0, -1, -1, -1])
    huge = ops.random_poisson((1,), Tensor(np.array([1e12], np.float64)), seed=1, dtype=opforge.int32)
    assert huge.asnumpy()[0, 0] == np.iinfo(np.int32).max  # past int32: its highest value


def test_seeds_repeat_and_calls_move_on():
    alpha = Tensor(np.array([1.5, 0.5], np.float32))
    op = ops.RandomGamma(seed=4, seed2=2)
    first, second = op((3,), alpha).asnumpy(), op((3,), alpha).asnumpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(ops.RandomGamma(seed=4, seed2=2)((3,), alpha).asnumpy(), first)
    rate = Tensor(np.array([3.0], np.float32))
    np.testing.assert_array_equal(
        ops.random_poisson((6,), rate, seed=9).asnumpy(), ops.random_poisson((6,), rate, seed=9).asnumpy()
    )
    opforge.set_seed(12)
    a = ops.Poisson()((8,), rate).asnumpy()
    opforge.set_seed(12)
    np.testing.assert_array_equal(ops.Poisson()((8,), rate).asnumpy(), a)


def test_jit_draws_new_values_at_each_call():
    alpha = Tensor(np.array([2.0], np.float32))
    op = ops.RandomGamma(seed=1)
    step = opforge.jit(lambda a: op((4,), a))
    draws = [step(alpha).asnumpy() for _ in range(3)]
    assert not np.array_equal(draws[1], draws[2])


def test_the_gpu_draws_the_cpu_values():
    values = {}
    for device in ("CPU", "GPU"):
        context.set_context(device_target=device)
        try:
            alpha = Tensor(np.array([0.4, 3.0, 50.0], np.float64))
            rate = Tensor(np.array([2.0, 40.0], np.float64))
            values[device] = (
                ops.random_gamma((5,), alpha, seed=6).to("CPU").asnumpy(),
                ops.random_poisson((5,), rate, seed=6).to("CPU").asnumpy(),
            )
        finally:
            context.set_context(device_target="CPU")
    np.testing.assert_allclose(values["CPU"][0], values["GPU"][0], rtol=1e-12)
    np.testing.assert_array_equal(values["CPU"][1], values["GPU"][1])


def test_errors():
    alpha = Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="For 'RandomGamma', the 'alpha' must be a Tensor"):
        ops.RandomGamma()((2,), np.ones(2))
    with pytest.raises(TypeError, match="For 'Gamma', the 'beta' must be one of \\['Float32'\\]"):
        ops.Gamma()((2,), alpha, Tensor(np.ones(2, np.float64)))
    with pytest.raises(ValueError, match="For 'Gamma', the shapes .* do not broadcast"):
        ops.Gamma()((3,), alpha, Tensor(np.ones(4, np.float32)))
    with pytest.raises(TypeError, match="For 'Poisson', the 'mean' must be one of"):
        ops.Poisson()((2,), Tensor(np.ones(2, np.int32)))
    with pytest.raises(TypeError, match="For 'RandomPoisson', the 'dtype' must be one of"):
        ops.RandomPoisson(dtype=opforge.bool_)
    with pytest.raises(TypeError, match="For 'random_gamma', the 'shape' must be a tuple of int"):
        ops.random_gamma((2.0,), alpha)
    with pytest.raises(ValueError, match="For 'RandomGamma', the 'seed' must be an int >= 0"):
        ops.RandomGamma(seed=-1)
