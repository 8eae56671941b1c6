"""complex64 / complex128: NumPy's special values for the elementwise math of opforge/complex.h,
Cast to and from complex, Abs's real output dtype, and the complex bprops (dx = dout * conj(f'(x)),
MindSpore's and PyTorch's convention) against finite differences of a real loss."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from opforge import GradOperation, Tensor, ops
from opforge import dtype as mstype

INF, NAN = math.inf, math.nan
_PARTS = [0.0, -0.0, 1.0, -2.5, INF, -INF, NAN]
SPECIALS = np.array([complex(a, b) for a in _PARTS for b in _PARTS], np.complex128)

_UNARY = {
    "Exp": np.exp,
    "Log": np.log,
    "Sqrt": np.sqrt,
    "Tanh": np.tanh,
    "Sin": np.sin,
    "Cos": np.cos,
    "Square": np.square,
    "Neg": np.negative,
    "Conj": np.conj,
}


def _same(actual, expected, rtol):
    """Part by part: NaN where NumPy has NaN, the same infinities, finite parts within rtol (signs of
    zero are not compared: C99 leaves several unspecified)."""
    for a, e in ((actual.real, expected.real), (actual.imag, expected.imag)):
        assert np.array_equal(np.isnan(a), np.isnan(e))
        fin = np.isfinite(e)
        assert np.array_equal(a[~fin & ~np.isnan(e)], e[~fin & ~np.isnan(e)])
        np.testing.assert_allclose(a[fin], e[fin], rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("name", sorted(_UNARY))
@pytest.mark.parametrize("dtype", [mstype.complex64, mstype.complex128])
def test_unary_special_values_match_numpy(name, dtype):
    x = SPECIALS.astype(dtype.np_dtype)
    got = getattr(ops, name)()(Tensor(x)).asnumpy()
    assert got.dtype == x.dtype
    with np.errstate(all="ignore"):
        expected = _UNARY[name](x.astype(np.complex128))
    if name == "Square":  # NumPy squares as x * x with no special cases, as the kernel does
        with np.errstate(all="ignore"):
            expected = x.astype(np.complex128) * x.astype(np.complex128)
    _same(got.astype(np.complex128), expected, 1e-5 if dtype is mstype.complex64 else 1e-13)


@pytest.mark.parametrize("dtype", [mstype.complex64, mstype.complex128])
def test_arithmetic_special_values_match_numpy(dtype):
    x = np.repeat(SPECIALS, len(SPECIALS)).astype(dtype.np_dtype)
    y = np.tile(SPECIALS, len(SPECIALS)).astype(dtype.np_dtype)
    with np.errstate(all="ignore"):
        for name, ref in (("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("RealDiv", np.divide)):
            got = getattr(ops, name)()(Tensor(x), Tensor(y)).asnumpy()
            _same(got, ref(x, y), 1e-6 if dtype is mstype.complex64 else 1e-15)
    eq = ops.Equal()(Tensor(x), Tensor(y)).asnumpy()
    ne = ops.NotEqual()(Tensor(x), Tensor(y)).asnumpy()
    np.testing.assert_array_equal(eq, x == y)
    np.testing.assert_array_equal(ne, x != y)


@pytest.mark.parametrize("dtype,real", [(mstype.complex64, mstype.float32), (mstype.complex128, mstype.float64)])
def test_abs_of_complex_is_real(dtype, real):
    x = SPECIALS.astype(dtype.np_dtype)
    out = ops.Abs()(Tensor(x))
    assert out.dtype is real
    np.testing.assert_array_equal(out.asnumpy(), np.abs(x))  # hypot: inf wins over NaN
    assert ops.Abs()(Tensor(np.array([3e37 + 4e37j], np.complex64))).asnumpy()[0] == np.float32(5e37)


def test_smith_division_does_not_overflow():
    x = np.array([1e300 + 1e300j, 1e-300 + 1e-300j], np.complex128)
    got = ops.RealDiv()(Tensor(x), Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, [1 + 0j, 1 + 0j], rtol=1e-15)
    np.testing.assert_allclose(ops.Div()(Tensor(x), Tensor(x)).asnumpy(), [1 + 0j, 1 + 0j], rtol=1e-15)


def test_cast_to_and_from_complex():
    x = np.array([1.5, -0.0, NAN, INF, 3.0], np.float32)
    z = ops.Cast()(Tensor(x), mstype.complex64).asnumpy()
    assert z.dtype == np.complex64
    np.testing.assert_array_equal(z.real, x)
    assert not np.any(z.imag) and not np.any(np.signbit(z.imag))
    w = np.array([1.75 - 2j, -3 + 4j, complex(NAN, 1), 0 + 1j, 0j], np.complex128)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: the real part, on purpose
        f = ops.Cast()(Tensor(w), mstype.float32).asnumpy()
        i = ops.Cast()(Tensor(w), mstype.int32).asnumpy()
        b = ops.Cast()(Tensor(w), mstype.bool_).asnumpy()
        c = ops.Cast()(Tensor(w), mstype.complex64).asnumpy()
    np.testing.assert_array_equal(f, w.real.astype(np.float32))
    np.testing.assert_array_equal(i, [1, -3, 0, 0, 0])
    np.testing.assert_array_equal(b, [True, True, True, True, False])
    np.testing.assert_array_equal(c, w.astype(np.complex64))


def test_complex_inference_and_refusals():
    z = Tensor(np.ones(2, np.complex64))
    assert ops.Exp()(z).dtype is mstype.complex64
    assert ops.Equal()(z, z).dtype is mstype.bool_
    assert ops.Conj()(Tensor(np.ones(2, np.float32))).dtype is mstype.float32
    with pytest.raises(TypeError, match="Conj"):
        ops.Conj()(Tensor(np.ones(2, np.bool_)))
    with pytest.raises(TypeError, match="Sigmoid"):
        ops.Sigmoid()(z)


# ---------------------------------------------------------------------------------------------
# Gradients: L = sum(Re(conj(r) * f(z))) has dL/da + i dL/db = vjp(f)(r) under the convention.


def _loss(f, args, r):
    out = f(*[Tensor(a) for a in args]).asnumpy().astype(np.complex128)
    return float(np.sum((np.conj(r) * out).real))


def _numeric_grad(f, args, i, r, eps=1e-6):
    base = [a.copy() for a in args]
    g = np.zeros(base[i].shape, np.complex128)
    for idx in np.ndindex(base[i].shape):
        for unit in (1.0, 1j):
            plus = [a.copy() for a in base]
            minus = [a.copy() for a in base]
            plus[i][idx] += eps * unit
            minus[i][idx] -= eps * unit
            d = (_loss(f, plus, r) - _loss(f, minus, r)) / (2 * eps)
            g[idx] += d * unit
    return g


def _rand(rng, shape, low=-1.5, high=1.5):
    return np.asarray(rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape))


_GRAD_CASES = [
    ("Add", 2, (3, 4), (4,)),
    ("Sub", 2, (3, 4), (3, 1)),
    ("Mul", 2, (3, 4), (3, 4)),
    ("Mul", 2, (2, 3), ()),
    ("RealDiv", 2, (3, 4), (4,)),
    ("Div", 2, (3, 4), (3, 4)),
    ("Square", 1, (3, 4), None),
    ("Exp", 1, (3, 4), None),
    ("Log", 1, (3, 4), None),
    ("Sqrt", 1, (3, 4), None),
    ("Tanh", 1, (3, 4), None),
    ("Sin", 1, (3, 4), None),
    ("Cos", 1, (3, 4), None),
    ("Neg", 1, (3, 4), None),
    ("Conj", 1, (3, 4), None),
]


@pytest.mark.parametrize("name,nin,xs,ys", _GRAD_CASES, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in _GRAD_CASES])
def test_complex_gradient_matches_finite_differences(name, nin, xs, ys):
    rng = np.random.default_rng(7)
    prim = getattr(ops, name)()
    args = [_rand(rng, xs)] + ([_rand(rng, ys, 0.5, 1.5)] if nin == 2 else [])
    if name in ("Log", "Sqrt"):  # away from the branch cut on the negative real axis
        args[0] = _rand(rng, xs, 0.3, 1.5)
    out = prim(*[Tensor(a) for a in args])
    r = _rand(rng, out.shape)
    grads = GradOperation(get_all=True, sens_param=True)(lambda *a: prim(*a))(
        *[Tensor(a) for a in args], Tensor(r.astype(np.complex128))
    )
    for i, g in enumerate(grads):
        assert g.dtype is mstype.complex128 and g.shape == args[i].shape
        np.testing.assert_allclose(g.asnumpy(), _numeric_grad(prim, args, i, r), rtol=1e-6, atol=1e-7)


def test_real_input_of_a_complex_product_gets_the_real_part():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-1, 1, (3,)), _rand(rng, (3,))
    r = _rand(rng, (3,))
    gx, gy = GradOperation(get_all=True, sens_param=True)(lambda a, b: ops.Mul()(ops.Cast()(a, mstype.complex128), b))(
        Tensor(x), Tensor(y), Tensor(r)
    )
    assert gx.dtype is mstype.float64
    np.testing.assert_allclose(gx.asnumpy(), (r * np.conj(y)).real, rtol=1e-12)
    np.testing.assert_allclose(gy.asnumpy(), r * x, rtol=1e-12)


def test_abs_of_complex_under_grad_raises_naming_the_operator():
    z = Tensor(np.array([1 + 1j], np.complex64))
    with pytest.raises(TypeError, match="For 'Abs', the gradient of a complex input is not supported"):
        GradOperation()(lambda a: ops.Abs()(a))(z)
