"""Accuracy of the CPU's vectorised float32 transcendental functors (csrc/include/opforge/vmath.h)
against float64 NumPy/SciPy references, in ulps of the float32 result, over the whole float32
range: random bit patterns (every exponent, both signs, denormals) plus the specials."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from opforge import Tensor, ops

SPECIALS = np.array(
    [0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, -1.1754942e-38, 1.0, -1.0, 0.5, -0.5]
    + [88.72, 88.73, -87.33, -103.9, -104.0, 9.0, 9.2, -9.2, 0.75, -0.75, 3.9, 4.0, 1e30, -1e30]
    + [3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan],
    np.float32,
)


def _points(n: int = 1 << 20) -> np.ndarray:
    """n random float32 bit patterns (NaNs among them) and the specials; plus dense [-10, 10]."""
    rng = np.random.default_rng(21)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = rng.uniform(-10, 10, n // 4).astype(np.float32)
    return np.concatenate([bits, dense, SPECIALS])


def _gelu64(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


# (primitive, float64 reference, max ulps, domain filter)
CASES = {
    "Exp": (ops.Exp, np.exp, 1),
    "Expm1": (ops.Expm1, np.expm1, 2),
    "Log": (ops.Log, np.log, 1),
    "Log1p": (ops.Log1p, np.log1p, 2),
    "Tanh": (ops.Tanh, np.tanh, 3),
    "Erf": (ops.Erf, special.erf, 4),
    "Sigmoid": (ops.Sigmoid, special.expit, 3),
    "Softplus": (ops.Softplus, lambda x: np.logaddexp(0.0, x), 3),
    "Elu": (ops.Elu, lambda x: np.where(x > 0, x, np.expm1(x)), 2),
    "SeLU": (ops.SeLU, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), 3),
    "Sin": (ops.Sin, np.sin, 3),
    "Cos": (ops.Cos, np.cos, 3),
    "Tan": (ops.Tan, np.tan, 4),
    "Atan": (ops.Atan, np.arctan, 3),
    "Asin": (ops.Asin, np.arcsin, 3),
    "ACos": (ops.ACos, np.arccos, 2),
    "Sinh": (ops.Sinh, np.sinh, 3),
    "Cosh": (ops.Cosh, np.cosh, 2),
    "Asinh": (ops.Asinh, np.arcsinh, 2),
    "Acosh": (ops.Acosh, np.arccosh, 3),
    "Atanh": (ops.Atanh, np.arctanh, 2),
    "Erfc": (ops.Erfc, special.erfc, 3),
}


def ulp_error(got: np.ndarray, ref64: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the float32 spacing at the reference; 0 where both are the same
    NaN/inf, inf where only one is."""
    ref32 = ref64.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        same_special = (np.isnan(got) & np.isnan(ref32)) | ((got == ref32) & ~np.isfinite(ref32))
        err = np.abs(got.astype(np.float64) - ref64) / np.spacing(np.abs(ref32)).astype(np.float64)
    err = np.where(same_special, 0.0, err)
    return np.where(np.isnan(err) | (np.isinf(got) != np.isinf(ref32)), np.inf, err)


@pytest.mark.parametrize("name", sorted(CASES))
def test_max_ulp_over_float32_range(name):
    primitive, reference, bound = CASES[name]
    x = _points()
    got = primitive()(Tensor(x)).asnumpy()
    with np.errstate(all="ignore"):
        ref = reference(x.astype(np.float64))
    err = ulp_error(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{name}({x[worst]!r}) = {got[worst]!r}, float64 says {ref[worst]!r}: {err[worst]} ulp"


@pytest.mark.parametrize("name", sorted(CASES))
def test_signed_zero_and_nan(name):
    primitive, reference, _ = CASES[name]
    x = np.array([0.0, -0.0, np.nan], np.float32)
    got = primitive()(Tensor(x)).asnumpy()
    with np.errstate(all="ignore"):
        ref = reference(x.astype(np.float64)).astype(np.float32)
    assert np.isnan(got[2])
    signed = ~np.isnan(ref[:2])  # Acosh(+-0) is NaN
    assert np.array_equal(np.signbit(got[:2])[signed], np.signbit(ref[:2])[signed]), (got, ref)
    assert np.array_equal(np.isnan(got[:2]), np.isnan(ref[:2]))


def test_gelu_error_within_tanh_bound():
    """GeLU = 0.5 x (1 + tanh(u)): tanh's 3 ulp (of a value near 1) become an absolute error of
    about |x| 2^-22 where 1 + tanh(u) cancels, so the bound is mixed."""
    x = _points()
    x = x[np.isfinite(x) & (np.abs(x) < 1e18)]  # x^3 overflows float32 beyond
    got = ops.GeLU()(Tensor(x)).asnumpy().astype(np.float64)
    ref = _gelu64(x.astype(np.float64))
    tol = 4 * np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64) + np.abs(x) * 2.0**-21
    assert np.all(np.abs(got - ref) <= tol)


def _mish64(x):
    return x * np.tanh(np.logaddexp(0.0, x))


def test_mish_within_5_ulp_where_normal():
    """Mish = x n / (n + 2), n = e^x (e^x + 2); below x = -87 e^x is denormal and the result is only
    within about 2^-149 |x| (the bound is for x >= -87)."""
    x = _points()
    got = ops.Mish()(Tensor(x)).asnumpy()
    with np.errstate(all="ignore"):
        ref = _mish64(x.astype(np.float64))
    normal = ~(x < -87)  # e^x is normal
    err = ulp_error(got[normal], ref[normal])
    assert err.max() <= 5, x[normal][np.argmax(err)]


@pytest.mark.parametrize("name", ["Sin", "Cos", "Tan"])
def test_trig_vector_path_dense(name):
    """Contiguous blocks inside |x| <= 6000 take the branch-free reduction (a block with any larger
    |x| takes C's functions): the bound holds there, up to the edge of the range."""
    primitive, reference, bound = CASES[name]
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-6000, 6000, 1 << 20), np.float32([6000, -6000, 5999.9995])]).astype(np.float32)
    got = primitive()(Tensor(x)).asnumpy()
    err = ulp_error(got, reference(x.astype(np.float64)))
    assert err.max() <= bound, x[np.argmax(err)]


def test_trig_mixed_blocks_match_scalar_path():
    """One large |x| in a block sends the block to C's sinf: results agree with the all-vector run
    to the stated bound, and the large arguments are exact to C."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-10, 10, 10_000).astype(np.float32)
    x[::1000] = np.float32(1e30)
    got = ops.Sin()(Tensor(x)).asnumpy()
    assert ulp_error(got, np.sin(x.astype(np.float64))).max() <= 3


def _binary_points(n: int = 1 << 19) -> tuple:
    rng = np.random.default_rng(22)
    bits = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64).astype(np.uint32).view(np.float32)
    moderate = np.stack([rng.uniform(0, 4, n), rng.uniform(-40, 40, n)]).astype(np.float32)
    return np.concatenate([bits[0], moderate[0]]), np.concatenate([bits[1], moderate[1]])


POW_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan], np.float32)
POW_EXPONENTS = np.array(
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        3.0,
        -3.0,
        0.5,
        -0.5,
        1e10,
        -1e10,
        16777215.0,
        8388609.0,
        np.inf,
        -np.inf,
        np.nan,
    ],
    np.float32,
)


def test_pow_within_1_ulp():
    """Float32 Pow computes y log2|x| and its exp2 in double: one rounding to float at the end."""
    x, y = _binary_points()
    got = ops.Pow()(Tensor(x), Tensor(y)).asnumpy()
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    err = ulp_error(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= 1, (x[worst], y[worst], got[worst], ref[worst])


def test_pow_special_cases_follow_c():
    """Zeros, infinities, NaN, +-1 and negative bases with integer (odd/even) or fractional exponents:
    exactly C's pow (in double, rounded to float), signs of zeros and infinities included."""
    x, y = (a.ravel() for a in np.meshgrid(POW_SPECIALS, POW_EXPONENTS))
    got = ops.Pow()(Tensor(x), Tensor(y)).asnumpy()
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    same = (got == ref) & (np.signbit(got) == np.signbit(ref)) | (np.isnan(got) & np.isnan(ref))
    assert same.all(), list(zip(x[~same], y[~same], got[~same], ref[~same]))


def test_pow_scalar_exponent():
    x = np.linspace(-4, 4, 1001, dtype=np.float32)
    got = ops.Pow()(Tensor(x), 3.0).asnumpy()
    assert ulp_error(got, x.astype(np.float64) ** 3).max() <= 1


def test_pow_vector_path_negative_bases_and_scalar_operands():
    """Blocks of finite nonzero bases and |y| < 2^23 take the two-pass path without the special cases:
    negative bases (odd, even and fractional exponents), a broadcast exponent and a broadcast base."""
    rng = np.random.default_rng(23)
    x = rng.uniform(-4, 4, 1 << 16).astype(np.float32)
    x[x == 0] = np.float32(1.5)
    y = np.concatenate([np.round(rng.uniform(-30, 30, 1 << 15)), rng.uniform(-30, 30, 1 << 15)]).astype(np.float32)
    cases = [(Tensor(x), Tensor(y), x, y)]
    cases += [(Tensor(x), float(s), x, np.float32(s)) for s in (3.0, 2.0, 0.5, -1.5)]
    cases += [(2.5, Tensor(y), np.float32(2.5), y)]
    for a, b, xs, ys in cases:
        got = ops.Pow()(a, b).asnumpy()
        with np.errstate(all="ignore"):
            ref = np.power(np.float64(xs), np.float64(ys))
            err = ulp_error(got, ref)
        worst = int(np.argmax(err))
        assert err[worst] <= 1, (
            np.broadcast_to(xs, got.shape)[worst],
            np.broadcast_to(ys, got.shape)[worst],
            got[worst],
        )
        signed = ~np.isnan(ref)
        assert np.array_equal(np.signbit(got[signed]), np.signbit(ref[signed]))


def test_pow_mixed_blocks_match_vector_path():
    """A special value in a block sends that block to the branch-free path with every special case:
    the ordinary elements there come out bit for bit as on the two-pass path."""
    rng = np.random.default_rng(24)
    x = rng.uniform(-3, 3, 10_000).astype(np.float32)
    x[x == 0] = np.float32(0.5)
    y = np.round(rng.uniform(-20, 20, 10_000)).astype(np.float32)
    plain = ops.Pow()(Tensor(x), Tensor(y)).asnumpy()
    mixed_x = x.copy()
    mixed_x[::1000] = np.float32(0.0)
    mixed = ops.Pow()(Tensor(mixed_x), Tensor(y)).asnumpy()
    keep = np.ones(x.size, bool)
    keep[::1000] = False
    assert np.array_equal(mixed[keep].view(np.uint32), plain[keep].view(np.uint32))
    with np.errstate(all="ignore"):
        assert np.array_equal(mixed[~keep], np.power(np.float32(0), y[~keep]))


def test_atan2_within_3_ulp_and_specials():
    """MindSpore's Atan2(x, y) is np.arctan2(x, y): every quadrant, zeros of both signs, infinities."""
    a, b = _binary_points()
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -3e38], np.float32)
    sa, sb = (v.ravel() for v in np.meshgrid(sp, sp))
    a, b = np.concatenate([a, sa]), np.concatenate([b, sb])
    got = ops.Atan2()(Tensor(a), Tensor(b)).asnumpy()
    ref = np.arctan2(a.astype(np.float64), b.astype(np.float64))
    err = ulp_error(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= 3, (a[worst], b[worst], got[worst], ref[worst])
    signed = ~np.isnan(ref[-81:])
    assert np.array_equal(np.signbit(got[-81:])[signed], np.signbit(ref[-81:])[signed])
