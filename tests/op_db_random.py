"""Records of the seeded random kernels (Randn, RandExt, RandInt, RandGamma, RandPoisson): the reference is
a NumPy model of the counter-based generator of ``csrc/include/opforge/functors/random.h`` (SplitMix64 in
wrapping uint64 arithmetic) and of its samplers, so every backend must draw exactly these values (floats to
their dtype's rounding). tests/test_random_distributions.py checks the gamma and Poisson samplers against
SciPy's distributions (Kolmogorov-Smirnov and chi-square tests)."""

from __future__ import annotations

import math

import numpy as np
from op_db import LARGE, Arg, ErrorInput, OpRecord, Sample

from opforge import Tensor, ops
from opforge import dtype as mstype

_U64 = np.uint64


def splitmix64(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = z + _U64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        return z ^ (z >> _U64(31))


def random_bits(seed: int, offset: int, j: np.ndarray) -> np.ndarray:
    key = splitmix64(splitmix64(np.array(seed).astype(_U64)) ^ np.array(offset).astype(_U64))
    return splitmix64(key ^ splitmix64(np.asarray(j).astype(_U64)))


def uniform01(seed: int, offset: int, j: np.ndarray) -> np.ndarray:
    return (random_bits(seed, offset, j) >> _U64(11)).astype(np.float64) * 2.0**-53


def standard_normal(seed: int, offset: int, n: int) -> np.ndarray:
    """Box-Muller by pairs: elements 2k and 2k + 1 are r cos(t) and r sin(t) of draws 2k and 2k + 1."""
    k = np.arange(n, dtype=np.int64) // 2
    u1, u2 = 1.0 - uniform01(seed, offset, 2 * k), uniform01(seed, offset, 2 * k + 1)
    r, t = np.sqrt(-2.0 * np.log(u1)), 2 * np.pi * u2
    return np.where(np.arange(n) % 2 == 1, r * np.sin(t), r * np.cos(t))


def uniform_int(seed: int, offset: int, n: int, low: int, high: int) -> np.ndarray:
    bits = random_bits(seed, offset, np.arange(n, dtype=np.int64))
    span = (high - low) % 2**64
    high_bits = [(int(b) * span) >> 64 for b in bits]  # exact: Python ints
    return np.array([low + h for h in high_bits], dtype=np.int64)


SHAPES = [(), (7,), (3, 5), (0, 4), LARGE]
SEEDS = [(0, 0), (5, 3), (-2, 2**40)]


def _seeds(seed, offset):
    return np.array(seed, np.int64), np.array(offset, np.int64)


def _float_samples(record, prim, ins, outs, rng):
    dtype = outs[0]
    for shape in SHAPES:
        for seed, offset in SEEDS[: 1 if shape == LARGE else None]:
            yield Sample((shape, *_seeds(seed, offset), dtype), desc=f"shape {list(shape)} seeds ({seed}, {offset})")


def _rounded(values: np.ndarray, dtype) -> np.ndarray:
    """As the kernels store a double: the half types through float (their compute type), rounding twice."""
    if dtype in (mstype.float16, mstype.bfloat16):
        values = values.astype(np.float32)
    return values.astype(dtype.np_dtype)


def _randn_ref(prim, shape, seed, offset, dtype):
    n = int(np.prod(shape))
    return _rounded(standard_normal(int(seed), int(offset), n).reshape(shape), dtype)


def _rand_ext_ref(prim, shape, seed, offset, dtype):
    n = int(np.prod(shape))
    return _rounded(uniform01(int(seed), int(offset), np.arange(n)).reshape(shape), dtype)


RANDINT_BOUNDS = [(0, 10), (-5, 3), (7, 8)]


def _rand_int_samples(record, prim, ins, outs, rng):
    dtype = outs[0]
    info = np.iinfo(dtype.np_dtype)
    bounds = RANDINT_BOUNDS + [(int(info.min), int(info.max))]
    for shape in SHAPES[:4]:
        for low, high in bounds:
            yield Sample((low, high, shape, *_seeds(5, 3), dtype), desc=f"shape {list(shape)} [{low}, {high})")


def _rand_int_ref(prim, low, high, shape, seed, offset, dtype):
    n = int(np.prod(shape))
    return uniform_int(int(seed), int(offset), n, low, high).reshape(shape).astype(dtype.np_dtype)


def _seed_tensors():
    return Tensor(np.array(1, np.int64)), Tensor(np.array(0, np.int64))


def _float_errors(f):
    return lambda: [
        ErrorInput("int-dtype", lambda: f()((2,), *_seed_tensors(), mstype.int32), TypeError, "dtype"),
        ErrorInput("negative-dim", lambda: f()((2, -1), *_seed_tensors(), mstype.float32), ValueError, "shape"),
        ErrorInput("shape-not-tuple", lambda: f()(2.0, *_seed_tensors(), mstype.float32), TypeError, "shape"),
        ErrorInput(
            "int32-seed",
            lambda: f()((2,), Tensor(np.array(1, np.int32)), _seed_tensors()[1], mstype.float32),
            TypeError,
            "seed",
        ),
        ErrorInput(
            "two-seeds",
            lambda: f()((2,), Tensor(np.array([1, 2], np.int64)), _seed_tensors()[1], mstype.float32),
            ValueError,
            "seed",
        ),
    ]


def _rand_int_errors():
    f = ops.RandInt
    return [
        ErrorInput("empty-range", lambda: f()(3, 3, (2,), *_seed_tensors(), mstype.int32), ValueError, "high"),
        ErrorInput("float-low", lambda: f()(0.5, 3, (2,), *_seed_tensors(), mstype.int32), TypeError, "low"),
        ErrorInput(
            "beyond-int32", lambda: f()(0, 2**31 + 1, (2,), *_seed_tensors(), mstype.int32), ValueError, "Int32"
        ),
        ErrorInput("float-dtype", lambda: f()(0, 3, (2,), *_seed_tensors(), mstype.float32), TypeError, "dtype"),
    ]


class ElementStream:
    """Element i's own draws (functors/random.h's ElementStream), in Python floats (double)."""

    def __init__(self, seed: int, offset: int, i: int):
        self.key = random_bits(seed, offset, np.array(i)).astype(_U64)
        self.next = 0

    def uniform(self) -> float:
        bits = splitmix64(self.key ^ splitmix64(np.array(self.next).astype(_U64)))
        self.next += 1
        return float(bits >> _U64(11)) * 2.0**-53

    def uniform_open(self) -> float:
        return 1.0 - self.uniform()

    def normal(self) -> float:
        r = math.sqrt(-2.0 * math.log(self.uniform_open()))
        return r * math.cos(6.283185307179586 * self.uniform())


def standard_gamma(seed: int, offset: int, i: int, alpha: float) -> float:
    """Marsaglia and Tsang (StandardGammaAt)."""
    if not alpha > 0.0:
        return math.nan
    if math.isinf(alpha):
        return alpha
    stream = ElementStream(seed, offset, i)
    a = alpha + 1.0 if alpha < 1.0 else alpha
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = stream.normal()
        t = 1.0 + c * x
        if t <= 0.0:
            continue
        v, u, x2 = t * t * t, stream.uniform_open(), x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d - d * v + d * math.log(v):
            value = d * v
            break
    if alpha < 1.0:
        value *= math.exp(math.log(stream.uniform_open()) / alpha)
    return value


def poisson(seed: int, offset: int, i: int, rate: float) -> float:
    """Knuth below 10, Hormann's PTRS above (PoissonAt)."""
    if not rate >= 0.0 or math.isinf(rate):
        return math.nan
    if rate == 0.0:
        return 0.0
    stream = ElementStream(seed, offset, i)
    if rate < 10.0:
        limit, product, count = math.exp(-rate), stream.uniform(), 0.0
        while product > limit:
            product *= stream.uniform()
            count += 1.0
        return count
    log_rate, b = math.log(rate), 0.931 + 2.53 * math.sqrt(rate)
    a, inv_alpha, v_r = -0.059 + 0.02483 * b, 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u, v = stream.uniform() - 0.5, stream.uniform_open()
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= v_r:
            return float(k)
        if k < 0 or (us < 0.013 and v > us):
            continue
        if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= -rate + k * log_rate - math.lgamma(k + 1):
            return float(k)


# alpha: below 1 (boosted), 1, large, and the edge values; rate: Knuth's range, PTRS's, 0 and invalid ones.
GAMMA_PARAMS = np.array([0.05, 0.5, 1.0, 2.5, 30.0, 1e4, 0.0, -1.0, np.nan, np.inf])
POISSON_RATES = np.array([0.0, 0.3, 4.0, 9.99, 10.0, 37.5, 1e3, 1e7, -1.0, np.nan, np.inf])


def _parameter_samples(values):
    def samples(record, prim, ins, outs, rng):
        t = ins[0].np_dtype
        for seed, offset in SEEDS:
            yield Sample(
                (values.astype(t), *_seeds(seed, offset)), desc=f"special parameters, seeds ({seed}, {offset})"
            )
        grid = rng.uniform(0.1, 20.0, size=(3, 7)).astype(t)
        yield Sample((grid, *_seeds(5, 3)), desc="parameters [3, 7]")
        yield Sample((np.zeros((0, 3), t), *_seeds(5, 3)), desc="no elements")

    return samples


def _rand_gamma_ref(prim, alpha, seed, offset):
    flat = alpha.astype(np.float64).reshape(-1)
    values = np.array([standard_gamma(int(seed), int(offset), i, a) for i, a in enumerate(flat)])
    values = values.reshape(alpha.shape)
    return (values.astype(np.float32) if alpha.dtype == np.float16 else values).astype(alpha.dtype)


def _rand_poisson_samples(record, prim, ins, outs, rng):
    for sample in _parameter_samples(POISSON_RATES)(record, prim, ins, outs, rng):
        yield Sample((*sample.args, outs[0]), desc=sample.desc)


def _rand_poisson_ref(prim, rate, seed, offset, dtype):
    flat = rate.astype(np.float64).reshape(-1)
    values = np.array([poisson(int(seed), int(offset), i, r) for i, r in enumerate(flat)]).reshape(rate.shape)
    if dtype.kind == "f":
        return _rounded(values, dtype)
    top = np.iinfo(dtype.np_dtype).max
    return np.where(np.isnan(values), -1, np.minimum(np.nan_to_num(values), top)).astype(dtype.np_dtype)


def _ones():
    return Tensor(np.ones(2, np.float32))


def _parametrized_errors(f, name, extra=()):
    seeds = _seed_tensors()
    return lambda: [
        ErrorInput(f"int-{name}", lambda: f()(Tensor(np.ones(2, np.int32)), *seeds, *extra), TypeError, name),
        ErrorInput(
            "two-seeds", lambda: f()(_ones(), Tensor(np.array([1, 2], np.int64)), seeds[1], *extra), ValueError, "seed"
        ),
        ErrorInput(
            "int32-offset", lambda: f()(_ones(), seeds[0], Tensor(np.array(1, np.int32)), *extra), TypeError, "offset"
        ),
    ]  # fmt: skip


def _rand_poisson_errors():
    seeds = _seed_tensors()
    rate = Tensor(np.ones(2, np.float32))
    return _parametrized_errors(ops.RandPoisson, "rate", (mstype.int32,))() + [
        ErrorInput("bool-dtype", lambda: ops.RandPoisson()(rate, *seeds, mstype.bool_), TypeError, "dtype"),
    ]


RECORDS = [
    OpRecord(
        "Randn",
        {"": ops.Randn},
        _float_samples,
        _randn_ref,
        args=(Arg(), Arg()),  # seed, offset
        views=False,
        # float32 (and the half types) computed in float with opforge's vector math: a few ulps of the
        # angle, times the radius (up to ~6)
        tols={"Float32": (1e-5, 1e-5), "Float64": (1e-12, 1e-12)},
        error_inputs=_float_errors(ops.Randn),
    ),
    OpRecord(
        "RandExt",
        {"": ops.RandExt},
        _float_samples,
        _rand_ext_ref,
        args=(Arg(), Arg()),  # seed, offset
        views=False,
        exact=True,
        error_inputs=_float_errors(ops.RandExt),
    ),
    OpRecord(
        "RandInt",
        {"": ops.RandInt},
        _rand_int_samples,
        _rand_int_ref,
        args=(Arg(), Arg()),  # seed, offset
        views=False,
        exact=True,
        error_inputs=_rand_int_errors,
    ),
    OpRecord(
        "RandGamma",
        {"": ops.RandGamma},
        _parameter_samples(GAMMA_PARAMS),
        _rand_gamma_ref,
        args=(Arg(), Arg(), Arg()),  # alpha, seed, offset
        views=False,
        tols={"Float32": (1e-6, 1e-6), "Float64": (1e-12, 1e-12)},
        error_inputs=_parametrized_errors(ops.RandGamma, "alpha"),
    ),
    OpRecord(
        "RandPoisson",
        {"": ops.RandPoisson},
        _rand_poisson_samples,
        _rand_poisson_ref,
        args=(Arg(), Arg(), Arg()),  # rate, seed, offset
        views=False,
        exact=True,
        error_inputs=_rand_poisson_errors,
    ),
]
