"""Records of the seeded random kernels (Randn, RandExt, RandInt): the reference is a NumPy model of the
counter-based generator of ``csrc/include/opforge/functors/random.h`` (SplitMix64 in wrapping uint64
arithmetic), so every backend must draw exactly these values (floats to their dtype's rounding)."""

from __future__ import annotations

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
]
