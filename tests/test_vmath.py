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
    "Asinh": (ops.Asinh, np.arcsinh, 3),
    "Acosh": (ops.Acosh, np.arccosh, 3),
    "Atanh": (ops.Atanh, np.arctanh, 3),
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
    assert np.array_equal(np.signbit(got[:2]), np.signbit(ref[:2])), (got, ref)


def test_gelu_error_within_tanh_bound():
    """GeLU = 0.5 x (1 + tanh(u)): tanh's 3 ulp (of a value near 1) become an absolute error of
    about |x| 2^-22 where 1 + tanh(u) cancels, so the bound is mixed."""
    x = _points()
    x = x[np.isfinite(x) & (np.abs(x) < 1e18)]  # x^3 overflows float32 beyond
    got = ops.GeLU()(Tensor(x)).asnumpy().astype(np.float64)
    ref = _gelu64(x.astype(np.float64))
    tol = 4 * np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64) + np.abs(x) * 2.0**-21
    assert np.all(np.abs(got - ref) <= tol)
