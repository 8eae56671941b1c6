"""The MindSpore 2.x composite functional ops of opforge/ops/functional_extra.py and their operator classes:
values against NumPy (float32, float64 and the int/bool dtypes MindSpore documents), MindSpore's documented
examples, gradients (float64) against central differences, jit equal to eager, and errors naming the op."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge import dtype as ms

FLOATS = [np.float32, np.float64]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _t(a):
    return Tensor(np.asarray(a))


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-11, "atol": 1e-11}


def _close(got, want, dtype=np.float64):
    got = got.asnumpy() if isinstance(got, Tensor) else np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, **_tol(dtype))


def _numeric_grad(f, args, i, eps=1e-6):
    """d sum(f(*args)) / d args[i] by central differences (float64 arrays)."""
    x = args[i]
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[i][idx] += eps
        minus[i][idx] -= eps
        fp = f(*(Tensor(a) for a in plus)).asnumpy().sum()
        fm = f(*(Tensor(a) for a in minus)).asnumpy().sum()
        grad[idx] = (fp - fm) / (2 * eps)
    return grad


def _check_grad(f, *arrays, positions=None):
    arrays = [np.asarray(a, np.float64) for a in arrays]
    positions = tuple(range(len(arrays))) if positions is None else positions
    got = opforge.grad(lambda *xs: f(*xs).sum(), grad_position=positions)(*(Tensor(a) for a in arrays))
    got = got if isinstance(got, tuple) else (got,)
    for g, i in zip(got, positions):
        np.testing.assert_allclose(g.asnumpy(), _numeric_grad(f, arrays, i), rtol=1e-5, atol=1e-6)


# -- max / min / median / argsort ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.int64])
def test_max_min_with_axis(dtype):
    x = (_rng().standard_normal((3, 4, 5)) * 10).astype(dtype)
    for axis in (0, 1, -1):
        for keep in (False, True):
            v, i = ops.max(_t(x), axis, keep)
            _close(v, x.max(axis=axis, keepdims=keep), dtype)
            assert i.dtype == ms.int32
            np.testing.assert_array_equal(i.asnumpy(), np.argmax(x, axis=axis, keepdims=keep))
            v, i = ops.min(_t(x), axis=axis, keepdims=keep)
            _close(v, x.min(axis=axis, keepdims=keep), dtype)
            np.testing.assert_array_equal(i.asnumpy(), np.argmin(x, axis=axis, keepdims=keep))


def test_max_min_docs_examples_and_initial_where():
    x = Tensor(np.array([0.0, 0.4, 0.6, 0.7, 0.1]), ms.float32)
    out, index = ops.max(x)
    assert out.asnumpy() == np.float32(0.7) and index.asnumpy() == 0
    out, index = ops.min(x)
    assert out.asnumpy() == 0.0 and index.asnumpy() == 0
    y = np.array([[1.0, 5.0], [3.0, -2.0]], np.float32)
    v, _ = ops.max(_t(y), axis=1, initial=4.0)
    _close(v, np.max(y, axis=1, initial=4.0), np.float32)
    mask = np.array([[True, False], [True, True]])
    v, _ = ops.max(_t(y), axis=1, initial=0.0, where=_t(mask))
    _close(v, np.max(y, axis=1, initial=0.0, where=mask), np.float32)


def test_max_gradient():
    x = np.array([[0.3, 1.2, -0.5], [2.0, 0.1, 0.7]])
    _check_grad(lambda t: ops.max(t, 1)[0], x)
    _check_grad(lambda t: ops.min(t, 0)[0], x)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.int64])
def test_median_matches_lower_median(dtype):
    x = _rng(1).permutation(24).reshape(4, 6).astype(dtype)
    for axis in (0, 1):
        v, i = ops.median(_t(x), axis)
        want = np.sort(x, axis=axis).take((x.shape[axis] - 1) // 2, axis=axis)
        _close(v, want, dtype)
        assert i.dtype == ms.int64
        np.testing.assert_array_equal(
            np.take_along_axis(x, np.expand_dims(i.asnumpy(), axis), axis).squeeze(axis), want
        )
    v, i = ops.median(_t(x), 0, keepdims=True)
    assert v.shape == (1, 6) and i.shape == (1, 6)


def test_median_docs_example():
    x = Tensor(np.array([[0.57, 0.11, 0.21], [0.38, 0.50, 0.57], [0.36, 0.16, 0.44]]).astype(np.float32))
    y, idx = ops.median(x, axis=0, keepdims=False)
    np.testing.assert_allclose(y.asnumpy(), [0.38, 0.16, 0.44], rtol=1e-6)
    assert idx.asnumpy().tolist() == [1, 2, 2]


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_argsort(dtype):
    x = _rng(2).permutation(20).reshape(4, 5).astype(dtype)
    out = ops.argsort(_t(x))
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(ops.argsort(_t(x), 0, True).asnumpy(), np.argsort(-x, axis=0, kind="stable"))
    np.testing.assert_array_equal(_t(x).argsort().asnumpy(), np.argsort(x, axis=-1, kind="stable"))


# -- matrices ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.bool_])
def test_tril_triu(dtype):
    x = (_rng().standard_normal((2, 4, 5)) * 5).astype(dtype)
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(ops.tril(_t(x), k).asnumpy(), np.tril(x, k))
        np.testing.assert_array_equal(ops.triu(_t(x), diagonal=k).asnumpy(), np.triu(x, k))
        np.testing.assert_array_equal(ops.Tril(k)(_t(x)).asnumpy(), np.tril(x, k))
        np.testing.assert_array_equal(ops.Triu(diagonal=k)(_t(x)).asnumpy(), np.triu(x, k))
    np.testing.assert_array_equal(_t(x).tril().asnumpy(), np.tril(x))


def test_tril_gradient_and_vmap():
    x = _rng().standard_normal((3, 3))
    _check_grad(lambda t: ops.tril(t) * t, x)
    batch = _rng(3).standard_normal((4, 3, 3)).astype(np.float32)
    out = ops.vmap(lambda t: ops.triu(t, 1))(Tensor(batch))
    np.testing.assert_array_equal(out.asnumpy(), np.triu(batch, 1))


def test_eye_and_diag_and_trace():
    np.testing.assert_array_equal(ops.eye(3).asnumpy(), np.eye(3, dtype=np.float32))
    assert ops.eye(2, 3, ms.int32).dtype == ms.int32
    np.testing.assert_array_equal(ops.Eye()(2, 4, ms.float64).asnumpy(), np.eye(2, 4))
    d = ops.diag(Tensor([1, 2, 3, 4]).astype("int32"))  # MindSpore's example
    np.testing.assert_array_equal(d.asnumpy(), np.diag([1, 2, 3, 4]))
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    want = np.zeros((2, 3, 2, 3))
    for i in np.ndindex(2, 3):
        want[i + i] = x[i]
    _close(ops.diag(_t(x)), want)
    for dtype in FLOATS + [np.int32]:
        y = np.arange(12).reshape(3, 4).astype(dtype)
        _close(ops.trace(_t(y)), np.trace(y), dtype)
    _check_grad(ops.diag, _rng().standard_normal(3))
    _check_grad(ops.trace, _rng().standard_normal((3, 3)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_dot_outer_inner_kron(dtype):
    r = _rng(4)
    a, b = r.standard_normal((3, 2, 4)).astype(dtype), r.standard_normal((5, 4, 2)).astype(dtype)
    _close(ops.dot(_t(a), _t(b)), np.dot(a, b), dtype)
    u, v = r.standard_normal(3).astype(dtype), r.standard_normal(4).astype(dtype)
    _close(ops.outer(_t(u), _t(v)), np.outer(u, v), dtype)
    m, n = r.standard_normal((2, 3, 4)).astype(dtype), r.standard_normal((5, 4)).astype(dtype)
    _close(ops.inner(_t(m), _t(n)), np.inner(m, n), dtype)
    p, q = r.standard_normal((2, 3)).astype(dtype), r.standard_normal((4, 1, 2)).astype(dtype)
    _close(ops.kron(_t(p), _t(q)), np.kron(p, q), dtype)
    i, j = np.arange(4, dtype=np.int32).reshape(2, 2), np.arange(6, dtype=np.int32).reshape(3, 2)
    np.testing.assert_array_equal(ops.kron(_t(i), _t(j)).asnumpy(), np.kron(i, j))
    np.testing.assert_array_equal(ops.inner(_t(i), _t(j)).asnumpy(), np.inner(i, j))


def test_dot_docs_example_shapes():
    out = ops.dot(Tensor(np.ones([2, 3]), ms.float32), Tensor(np.ones([1, 3, 2]), ms.float32))
    assert out.shape == (2, 1, 2) and np.all(out.asnumpy() == 3.0)
    out = ops.dot(Tensor(np.ones([3, 2, 3]), ms.float32), Tensor(np.ones([2, 1, 3, 2]), ms.float32))
    assert out.shape == (3, 2, 2, 1, 2)


def test_matrix_products_gradients():
    r = _rng(5)
    _check_grad(ops.dot, r.standard_normal((2, 3)), r.standard_normal((2, 3, 2)))
    _check_grad(ops.outer, r.standard_normal(3), r.standard_normal(2))
    _check_grad(ops.inner, r.standard_normal((2, 3)), r.standard_normal((4, 3)))
    _check_grad(ops.kron, r.standard_normal((2, 2)), r.standard_normal((2, 3)))
    _check_grad(ops.cross, r.standard_normal((2, 3)), r.standard_normal((2, 3)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_addmm_baddbmm(dtype):
    r = _rng(6)
    c, a, b = (r.standard_normal(s).astype(dtype) for s in ((3, 4), (3, 2), (2, 4)))
    _close(ops.addmm(_t(c), _t(a), _t(b), beta=0.5, alpha=2.0), 0.5 * c + 2.0 * a @ b, dtype)
    _close(_t(c).addmm(_t(a), _t(b)), c + a @ b, dtype)
    c, a, b = (r.standard_normal(s).astype(dtype) for s in ((2, 3, 4), (2, 3, 5), (2, 5, 4)))
    _close(ops.baddbmm(_t(c), _t(a), _t(b), 2, 3), 2 * c + 3 * np.matmul(a, b), dtype)
    _check_grad(lambda x, y, z: ops.addmm(x, y, z, beta=0.5, alpha=1.5), c[0], a[0], b[0])


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_cross(dtype):
    r = _rng(7)
    a, b = (r.integers(-5, 5, (4, 3, 2)).astype(dtype) for _ in range(2))
    _close(ops.cross(_t(a), _t(b)), np.cross(a, b, axis=1), dtype)
    _close(ops.cross(_t(a), _t(b), dim=1), np.cross(a, b, axis=1), dtype)


# -- distances -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_cdist_dist_cosine(dtype):
    r = _rng(8)
    a, b = r.standard_normal((2, 3, 4)).astype(dtype), r.standard_normal((2, 5, 4)).astype(dtype)
    diff = a[:, :, None, :] - b[:, None, :, :]
    for p in (0.0, 1.0, 2.0, 3.0, float("inf")):
        if p == 0:
            want = (diff != 0).sum(-1).astype(dtype)
        elif p == float("inf"):
            want = np.abs(diff).max(-1)
        else:
            want = (np.abs(diff) ** p).sum(-1) ** (1 / p)
        _close(ops.cdist(_t(a), _t(b), p), want, dtype)
    _close(ops.cdist(_t(a[0]), _t(b[0])), np.sqrt((diff[0] ** 2).sum(-1)), dtype)
    x, y = r.standard_normal((3, 4)).astype(dtype), r.standard_normal((3, 4)).astype(dtype)
    _close(ops.dist(_t(x), _t(y)), np.linalg.norm((x - y).ravel()), dtype)
    _close(ops.dist(_t(x), _t(y), 1), np.abs(x - y).sum(), dtype)
    cos = (x * y).sum(1) / np.maximum(np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1), 1e-8)
    _close(ops.cosine_similarity(_t(x), _t(y)), cos, dtype)
    _close(
        ops.cosine_similarity(_t(x), _t(y), dim=0),
        (x * y).sum(0) / (np.linalg.norm(x, axis=0) * np.linalg.norm(y, axis=0)),
        dtype,
    )


def test_distance_gradients():
    r = _rng(9)
    _check_grad(lambda a, b: ops.cdist(a, b), r.standard_normal((3, 2)), r.standard_normal((2, 2)))
    _check_grad(lambda a, b: ops.cdist(a, b, 3.0), r.standard_normal((3, 2)), r.standard_normal((2, 2)))
    _check_grad(ops.dist, r.standard_normal((2, 3)), r.standard_normal((2, 3)))
    _check_grad(ops.cosine_similarity, r.standard_normal((2, 3)), r.standard_normal((2, 3)))


# -- element-wise math ---------------------------------------------------------------------------------------


def test_isclose_allclose_isinf_nan_to_num():
    a = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], np.float32)
    b = np.array([1.0 + 1e-6, 2.1, np.nan, np.inf, np.inf, 0.0, 100.0005], np.float32)
    for equal_nan in (False, True):
        np.testing.assert_array_equal(
            ops.isclose(_t(a), _t(b), equal_nan=equal_nan).asnumpy(), np.isclose(a, b, equal_nan=equal_nan)
        )
    np.testing.assert_array_equal(ops.isclose(_t(a), _t(b), 0.1, 0.1).asnumpy(), np.isclose(a, b, 0.1, 0.1))
    i, j = np.array([1, 2, 3], np.int32), np.array([1, 3, 3], np.int32)
    np.testing.assert_array_equal(ops.isclose(_t(i), _t(j)).asnumpy(), np.isclose(i, j))
    assert bool(ops.allclose(_t(a[:2]), _t(a[:2]))) and not bool(ops.allclose(_t(a), _t(b)))
    assert bool(_t(b[:1]).allclose(_t(a[:1]), 1e-3))
    np.testing.assert_array_equal(ops.isinf(_t(a)).asnumpy(), np.isinf(a))
    np.testing.assert_array_equal(ops.IsInf()(_t(a.astype(np.float64))).asnumpy(), np.isinf(a))
    np.testing.assert_array_equal(ops.isinf(_t(i)).asnumpy(), np.zeros(3, bool))
    for dtype in FLOATS:
        x = a.astype(dtype)
        _close(ops.nan_to_num(_t(x)), np.nan_to_num(x), dtype)
        _close(ops.nan_to_num(_t(x), 1.0, 2.0, -3.0), np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_log2_log10_hypot_lerp_addc(dtype):
    r = _rng(10)
    x, y, z = (r.uniform(0.5, 2.0, (3, 4)).astype(dtype) for _ in range(3))
    _close(ops.log2(_t(x)), np.log2(x), dtype)
    _close(ops.log10(_t(x)), np.log10(x), dtype)
    _close(ops.hypot(_t(x), _t(y)), np.hypot(x, y), dtype)
    _close(ops.lerp(_t(x), _t(y), 0.3), x + 0.3 * (y - x), dtype)
    _close(ops.lerp(_t(x), _t(y), _t(z)), x + z * (y - x), dtype)
    _close(ops.Lerp()(_t(x), _t(y), _t(z)), x + z * (y - x), dtype)
    _close(ops.addcmul(_t(x), _t(y), _t(z), 0.5), x + 0.5 * y * z, dtype)
    _close(ops.addcdiv(_t(x), _t(y), _t(z), value=2), x + 2 * y / z, dtype)
    _close(
        ops.div_no_nan(_t(x), _t(np.where(y > 1, y, 0).astype(dtype))),
        np.where(y > 1, x / np.where(y > 1, y, 1), 0),
        dtype,
    )
    np.testing.assert_allclose(ops.log2(_t(np.array([1, 8], np.int32))).asnumpy(), [0.0, 3.0])


def test_elementwise_gradients():
    r = _rng(11)
    x, y, z = (r.uniform(0.5, 2.0, (2, 3)) for _ in range(3))
    _check_grad(ops.log2, x)
    _check_grad(ops.log10, x)
    _check_grad(ops.hypot, x, y)
    _check_grad(ops.lerp, x, y, z)
    _check_grad(lambda a, b, c: ops.addcmul(a, b, c, 0.7), x, y, z)
    _check_grad(lambda a, b, c: ops.addcdiv(a, b, c, 0.7), x, y, z)
    _check_grad(lambda a: ops.nan_to_num(a) * a, x)


# -- statistics ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp(dtype):
    x = (_rng(12).standard_normal((3, 4, 5)) * 30).astype(dtype)
    for axis, keep in ((1, False), ((0, 2), True), (-1, True)):
        want = np.log(np.exp(x.astype(np.float64)).sum(axis=axis, keepdims=keep))
        _close(ops.logsumexp(_t(x), axis, keep), want.astype(dtype), dtype)
    big = np.array([1000.0, 1000.0], dtype)
    _close(ops.logsumexp(_t(big), 0), np.array(1000.0 + np.log(2.0), dtype), dtype)
    _check_grad(lambda t: ops.logsumexp(t, 1), _rng(13).standard_normal((2, 3)))


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_std_var_and_means(dtype):
    x = (_rng(14).standard_normal((3, 4, 5)) * 4).astype(dtype)
    tol = np.float32 if dtype != np.float64 else np.float64
    xf = x.astype(np.float64)
    for axis, ddof, keep in ((None, 0, False), (1, 1, False), ((0, 2), 2, True), (-1, True, False)):
        np_axis = tuple(axis) if isinstance(axis, tuple) else axis
        _close(ops.var(_t(x), axis, ddof, keep), xf.var(axis=np_axis, ddof=int(ddof), keepdims=keep), tol)
        _close(
            ops.std(_t(x), axis=axis, ddof=ddof, keepdims=keep),
            xf.std(axis=np_axis, ddof=int(ddof), keepdims=keep),
            tol,
        )
        s, m = ops.std_mean(_t(x), axis, ddof, keep)
        _close(s, xf.std(axis=np_axis, ddof=int(ddof), keepdims=keep), tol)
        _close(m, xf.mean(axis=np_axis, keepdims=keep), tol)
        v, m = ops.var_mean(_t(x), axis, ddof, keep)
        _close(v, xf.var(axis=np_axis, ddof=int(ddof), keepdims=keep), tol)
    out = ops.std(Tensor([[1, 2, 3, 4], [-1, 1, 4, -10]], ms.float32), 1, 2, True)  # MindSpore's example
    np.testing.assert_allclose(out.asnumpy(), [[1.5811388], [7.3824115]], rtol=1e-6)
    _check_grad(lambda t: ops.std(t, 1, 1), _rng(15).standard_normal((2, 4)))
    _check_grad(lambda t: ops.var(t), _rng(15).standard_normal((2, 4)))


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.bool_])
def test_count_nonzero(dtype):
    x = _rng(16).integers(-1, 2, (3, 4)).astype(dtype)
    assert ops.count_nonzero(_t(x)).asnumpy() == np.count_nonzero(x)
    out = ops.count_nonzero(_t(x), 1, True, ms.int64)
    assert out.dtype == ms.int64
    np.testing.assert_array_equal(out.asnumpy(), np.count_nonzero(x, axis=1, keepdims=True))


# -- data movement -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.bool_])
def test_roll_chunk_unbind_narrow(dtype):
    x = (_rng(17).standard_normal((3, 4, 5)) * 5).astype(dtype)
    np.testing.assert_array_equal(ops.roll(_t(x), 2).asnumpy(), np.roll(x, 2))
    np.testing.assert_array_equal(ops.roll(_t(x), (1, -3), (0, 2)).asnumpy(), np.roll(x, (1, -3), (0, 2)))
    np.testing.assert_array_equal(ops.Roll(7, 1)(_t(x)).asnumpy(), np.roll(x, 7, 1))
    parts = ops.chunk(_t(x), 3, 2)
    assert [p.shape for p in parts] == [(3, 4, 2), (3, 4, 2), (3, 4, 1)]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts], 2), x)
    assert len(ops.chunk(_t(x), 2, 0)) == 2
    for i, p in enumerate(ops.unbind(_t(x), 1)):
        np.testing.assert_array_equal(p.asnumpy(), x[:, i])
    np.testing.assert_array_equal(ops.narrow(_t(x), 2, 1, 3).asnumpy(), x[:, :, 1:4])
    np.testing.assert_array_equal(ops.narrow(_t(x), 0, -2, 2).asnumpy(), x[1:])


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.bool_])
def test_index_select_gather_elements(dtype):
    x = (_rng(18).standard_normal((3, 4)) * 5).astype(dtype)
    idx = np.array([2, 0, 2], np.int32)
    np.testing.assert_array_equal(ops.index_select(_t(x), 1, _t(idx)).asnumpy(), x[:, idx])
    index = _rng(19).integers(0, 4, (3, 5)).astype(np.int64)
    np.testing.assert_array_equal(ops.gather_elements(_t(x), 1, _t(index)).asnumpy(), np.take_along_axis(x, index, 1))
    index0 = _rng(20).integers(0, 3, (2, 4)).astype(np.int32)
    np.testing.assert_array_equal(ops.GatherD()(_t(x), 0, _t(index0)).asnumpy(), np.take_along_axis(x, index0, 0))
    np.testing.assert_array_equal(ops.gather_d(_t(x), 0, _t(index0)).asnumpy(), np.take_along_axis(x, index0, 0))


def test_gather_elements_docs_example():
    x = Tensor(np.array([[1, 2], [3, 4]]), ms.int32)
    index = Tensor(np.array([[0, 0], [1, 0]]), ms.int32)
    assert ops.gather_elements(x, 1, index).asnumpy().tolist() == [[1, 1], [4, 3]]


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_swapaxes_moveaxis_repeat_interleave(dtype):
    x = np.arange(24).reshape(2, 3, 4).astype(dtype)
    np.testing.assert_array_equal(ops.swapaxes(_t(x), 0, 2).asnumpy(), np.swapaxes(x, 0, 2))
    np.testing.assert_array_equal(ops.moveaxis(_t(x), 0, -1).asnumpy(), np.moveaxis(x, 0, -1))
    np.testing.assert_array_equal(ops.moveaxis(_t(x), (0, 1), (2, 0)).asnumpy(), np.moveaxis(x, (0, 1), (2, 0)))
    np.testing.assert_array_equal(ops.repeat_interleave(_t(x), 2).asnumpy(), np.repeat(x, 2))
    np.testing.assert_array_equal(ops.repeat_interleave(_t(x), 3, 1).asnumpy(), np.repeat(x, 3, 1))
    np.testing.assert_array_equal(ops.repeat_interleave(_t(x), [1, 0, 2], 1).asnumpy(), np.repeat(x, [1, 0, 2], 1))
    reps = Tensor(np.array([2, 1], np.int32))
    np.testing.assert_array_equal(ops.repeat_interleave(_t(x), reps, 0).asnumpy(), np.repeat(x, [2, 1], 0))


def test_data_movement_gradients():
    r = _rng(21)
    x = r.standard_normal((3, 4))
    _check_grad(lambda t: ops.roll(t, (1, 2), (0, 1)) * t, x)
    _check_grad(lambda t: ops.gather_elements(t, 1, Tensor(np.array([[0, 0], [3, 1], [2, 2]], np.int32))), x)
    _check_grad(lambda t: ops.index_select(t, 0, Tensor(np.array([2, 2, 0], np.int64))), x)
    _check_grad(lambda t: ops.repeat_interleave(t, [1, 2, 0], 0), x)
    _check_grad(lambda t: ops.median(t, 1)[0], x)
    _check_grad(lambda t: ops.moveaxis(t, 0, 1) * ops.swapaxes(t, 0, 1), x)


# -- creation, shape queries -----------------------------------------------------------------------------------


def test_creation_and_shape_queries():
    x = Tensor(np.ones((2, 3, 4), np.float32))
    assert ops.rank(x) == 3 and ops.Rank()(x) == 3
    assert ops.size(x) == 24 and ops.Size()(x) == 24
    t = ops.scalar_to_tensor(3)
    assert t.dtype == ms.float32 and t.shape == () and t.asnumpy() == 3.0
    assert ops.ScalarToTensor()(7, ms.int32).asnumpy() == 7
    arr = ops.TupleToArray()((1, 2, 3))
    assert arr.asnumpy().tolist() == [1, 2, 3]
    assert ops.TupleToArray()((1.0, 2.5)).dtype == ms.float32
    np.testing.assert_allclose(
        ops.logspace(0.1, 1.0, 5).asnumpy(), np.logspace(0.1, 1.0, 5).astype(np.float32), rtol=1e-6
    )
    out = ops.logspace(0, 3, 4, base=2, dtype=ms.float64)
    assert out.dtype == ms.float64 and out.asnumpy().tolist() == [1.0, 2.0, 4.0, 8.0]
    y = Tensor(np.arange(3, dtype=np.float32))
    assert ops.Identity()(y).asnumpy().tolist() == [0.0, 1.0, 2.0]


# -- activations and normalisation ---------------------------------------------------------------------------


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmin_glu_l2normalize(dtype):
    x = _rng(22).standard_normal((3, 4)).astype(dtype)
    _close(ops.softmin(_t(x)), _softmax(-x, -1), dtype)
    _close(ops.softmin(_t(x), 0), _softmax(-x, 0), dtype)
    _close(ops.glu(_t(x)), x[:, :2] / (1 + np.exp(-x[:, 2:])), dtype)
    _close(ops.glu(_t(x[:2]), 0), x[:1] / (1 + np.exp(-x[1:2])), dtype)
    want = x / np.sqrt(np.maximum((x**2).sum(0, keepdims=True), 1e-4))
    _close(ops.L2Normalize()(_t(x)), want, dtype)
    want = x / np.sqrt(np.maximum((x**2).sum(1, keepdims=True), 1e-4))
    _close(ops.L2Normalize(axis=1)(_t(x)), want, dtype)
    _check_grad(ops.softmin, x.astype(np.float64))
    _check_grad(ops.glu, x.astype(np.float64))
    _check_grad(ops.L2Normalize(1), x.astype(np.float64))


def _norm_ref(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_group_batch_norm(dtype):
    r = _rng(23)
    x = r.standard_normal((2, 4, 3, 3)).astype(dtype)
    w, b = r.standard_normal((3, 3)).astype(dtype), r.standard_normal((3, 3)).astype(dtype)
    _close(ops.layer_norm(_t(x), (3, 3), _t(w), _t(b)), _norm_ref(x, (2, 3), 1e-5) * w + b, dtype)
    _close(ops.layer_norm(_t(x), 3), _norm_ref(x, (3,), 1e-5), dtype)
    wc, bc = r.standard_normal(4).astype(dtype), r.standard_normal(4).astype(dtype)
    grouped = _norm_ref(x.reshape(2, 2, -1), (2,), 1e-5).reshape(x.shape)
    _close(ops.group_norm(_t(x), 2, _t(wc), _t(bc)), grouped * wc[:, None, None] + bc[:, None, None], dtype)
    mean, var = r.standard_normal(4).astype(dtype), r.uniform(0.5, 2, 4).astype(dtype)
    want = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * wc[:, None, None] + bc[:, None, None]
    _close(ops.batch_norm(_t(x), _t(mean), _t(var), _t(wc), _t(bc)), want, dtype)
    rm = opforge.Parameter(Tensor(mean.copy()), "rm")
    rv = opforge.Parameter(Tensor(var.copy()), "rv")
    out = ops.batch_norm(_t(x), rm, rv, _t(wc), _t(bc), training=True, momentum=0.1)
    batch = _norm_ref(x, (0, 2, 3), 1e-5) * wc[:, None, None] + bc[:, None, None]
    _close(out, batch, dtype)
    _close(rm, 0.9 * mean + 0.1 * x.mean(axis=(0, 2, 3)), dtype)
    _close(rv, 0.9 * var + 0.1 * x.var(axis=(0, 2, 3), ddof=1), dtype)


def test_norm_docs_examples_and_gradients():
    x = Tensor(np.array([[1, 2, 3], [1, 2, 3]]), ms.float32)
    g, b = Tensor(np.ones((3,)), ms.float32), Tensor(np.zeros((3,)), ms.float32)
    np.testing.assert_allclose(
        ops.layer_norm(x, (3,), g, b, 1e-7).asnumpy(), [[-1.2247448, 0.0, 1.2247448]] * 2, rtol=1e-6, atol=1e-6
    )
    assert np.all(ops.group_norm(Tensor(np.ones([1, 2, 4, 4], np.float32)), 2).asnumpy() == 0)
    r = _rng(24)
    _check_grad(lambda t, w: ops.layer_norm(t, (3,), w) * t, r.standard_normal((2, 3)), r.standard_normal(3))
    _check_grad(lambda t, w: ops.group_norm(t, 2, w) * t, r.standard_normal((2, 4, 3)), r.standard_normal(4))


# -- jit, vmap, Tensor methods -------------------------------------------------------------------------------


def test_jit_equals_eager():
    r = _rng(25)
    x, y = r.standard_normal((3, 4)).astype(np.float32), r.standard_normal((4, 4)).astype(np.float32)

    def f(a, b):
        v, i = ops.max(a, 1)
        return (
            ops.logsumexp(a, 1) + v + ops.std(a, 1),
            ops.tril(ops.addmm(b, ops.roll(b, 1, 0), b, beta=0.5)),
            ops.gather_elements(a, 1, ops.argsort(a)),
            i,
        )

    eager = f(Tensor(x), Tensor(y))
    jitted = opforge.jit(f)
    for _ in range(2):
        for e, j in zip(eager, jitted(Tensor(x), Tensor(y))):
            np.testing.assert_allclose(j.asnumpy(), e.asnumpy(), rtol=1e-6, atol=1e-6)


def test_vmap_of_composites():
    r = _rng(26)
    x = r.standard_normal((5, 3, 4)).astype(np.float32)
    out = ops.vmap(lambda t: ops.cross(t[:, :3], t[:, 1:], -1))(Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), np.cross(x[:, :, :3], x[:, :, 1:], axis=-1), rtol=1e-5, atol=1e-6)
    out = ops.vmap(lambda t: ops.var(t, 1))(Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), x.var(axis=2), rtol=1e-5, atol=1e-6)


def test_tensor_methods():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor(x)
    np.testing.assert_array_equal(t.swapaxes(0, 1).asnumpy(), x.T)
    np.testing.assert_array_equal(t.roll(1, 1).asnumpy(), np.roll(x, 1, 1))
    np.testing.assert_allclose(t.var(1).asnumpy(), x.var(1))
    np.testing.assert_allclose(t.logsumexp(1).asnumpy(), np.log(np.exp(x).sum(1)), rtol=1e-6)
    assert t.trace().asnumpy() == np.trace(x)
    assert t.median()[0].asnumpy().tolist() == [1.0, 5.0, 9.0]
    assert len(t.chunk(2, 1)) == 2 and t.isinf().asnumpy().sum() == 0


# -- bad inputs ----------------------------------------------------------------------------------------------


def test_bad_inputs_name_the_op_and_argument():
    x = Tensor(np.ones((2, 3), np.float32))
    cases = [
        (TypeError, r"'tril'.*'input'", lambda: ops.tril(np.ones((2, 2)))),
        (ValueError, r"'triu'.*'input'", lambda: ops.triu(Tensor(np.ones(3, np.float32)))),
        (TypeError, r"'max'.*'keepdims'", lambda: ops.max(x, 1, 1)),
        (ValueError, r"'min'.*'axis'", lambda: ops.min(x, 2)),
        (ValueError, r"'dot'.*'input'", lambda: ops.dot(Tensor(np.ones(3, np.float32)), x)),
        (ValueError, r"'outer'.*'vec2'", lambda: ops.outer(Tensor(np.ones(3, np.float32)), x)),
        (ValueError, r"'cross'.*size 3", lambda: ops.cross(x[:, :2], x[:, :2])),
        (ValueError, r"'cdist'.*'x1'", lambda: ops.cdist(Tensor(np.ones(3, np.float32)), x)),
        (ValueError, r"'cdist'.*'p'", lambda: ops.cdist(x, x, -1.0)),
        (ValueError, r"'chunk'.*'chunks'", lambda: ops.chunk(x, 0)),
        (ValueError, r"'narrow'.*'start'", lambda: ops.narrow(x, 1, 2, 3)),
        (TypeError, r"'index_select'.*'index'", lambda: ops.index_select(x, 0, Tensor(np.ones(2, np.float32)))),
        (ValueError, r"'gather_elements'.*'index'", lambda: ops.gather_elements(x, 0, Tensor(np.zeros(2, np.int32)))),
        (ValueError, r"'glu'", lambda: ops.glu(x)),
        (ValueError, r"'group_norm'.*'num_groups'", lambda: ops.group_norm(Tensor(np.ones((2, 3, 2), np.float32)), 2)),
        (ValueError, r"'layer_norm'.*'normalized_shape'", lambda: ops.layer_norm(x, (2,))),
        (TypeError, r"'layer_norm'.*'eps'", lambda: ops.layer_norm(x, (3,), eps=1)),
        (TypeError, r"'nan_to_num'.*'input'", lambda: ops.nan_to_num(Tensor(np.ones(2, np.int32)))),
        (ValueError, r"'roll'.*'shifts'", lambda: ops.roll(x, (1, 2), (0,))),
        (ValueError, r"'moveaxis'", lambda: ops.moveaxis(x, (0, 1), 0)),
        (ValueError, r"'repeat_interleave'.*'repeats'", lambda: ops.repeat_interleave(x, [1, 2], 1)),
        (TypeError, r"'std'.*'input'", lambda: ops.std([1.0, 2.0])),
        (ValueError, r"'eye'", lambda: ops.eye(-1)),
        (TypeError, r"'scalar_to_tensor'.*'input_x'", lambda: ops.scalar_to_tensor("1")),
        (TypeError, r"'L2Normalize'.*'epsilon'", lambda: ops.L2Normalize(0, 1)),
        (TypeError, r"'Tril'.*'diagonal'", lambda: ops.Tril(0.5)),
        (TypeError, r"'isclose'.*'equal_nan'", lambda: ops.isclose(x, x, equal_nan=1)),
        (ValueError, r"'median'", lambda: ops.median(Tensor(np.ones((0, 2), np.float32)), 0)),
        (ValueError, r"'max'.*'initial'", lambda: ops.max(x, 1, where=Tensor(np.ones((2, 3), bool)))),
    ]
    for exc, pattern, call in cases:
        with pytest.raises(exc, match=pattern):
            call()


# -- data-dependent shapes, sorted searches, dropout ---------------------------------------------------------


def test_nonzero_masked_select_bincount():
    a = np.array([[0, 1.5, 0], [2, 0, -3]], np.float32)
    x = Tensor(a)
    np.testing.assert_array_equal(ops.nonzero(x).asnumpy(), np.argwhere(a))
    for got, want in zip(ops.nonzero(x, as_tuple=True), np.nonzero(a)):
        np.testing.assert_array_equal(got.asnumpy(), want)
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(ops.masked_select(x, Tensor(mask)).asnumpy(), a[np.broadcast_to(mask, a.shape)])
    g = opforge.grad(lambda t: (ops.masked_select(t, Tensor(mask)) * 2.0).sum())(x).asnumpy()
    np.testing.assert_array_equal(g, np.broadcast_to(mask, a.shape) * 2.0)
    ids = np.array([0, 1, 1, 3, 5])
    np.testing.assert_array_equal(ops.bincount(Tensor(ids)).asnumpy(), np.bincount(ids))
    np.testing.assert_array_equal(ops.bincount(Tensor(ids), minlength=8).asnumpy(), np.bincount(ids, minlength=8))
    w = np.array([0.5, 1, 1, 2, 4], np.float32)
    np.testing.assert_allclose(ops.bincount(Tensor(ids), Tensor(w)).asnumpy(), np.bincount(ids, w))
    with pytest.raises(TypeError, match="masked_select.*mask"):
        ops.masked_select(x, Tensor(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="bincount.*non-negative"):
        ops.bincount(Tensor(np.array([-1, 2])))

    @opforge.jit(fullgraph=True)
    def traced(t):
        return ops.nonzero(t)

    with pytest.raises(opforge.TraceError):
        traced(x)


def test_searchsorted_and_bucketize():
    seq = np.array([1, 3, 5, 7, 9], np.float32)
    vals = np.array([[3, 6, 9], [0, 10, 5]], np.float32)
    for right, side in ((False, "left"), (True, "right")):
        got = ops.searchsorted(Tensor(seq), Tensor(vals), right=right).asnumpy()
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.searchsorted(seq, vals, side=side))
        np.testing.assert_array_equal(
            ops.searchsorted(Tensor(seq), Tensor(vals), side=side, out_int32=True).asnumpy(),
            np.searchsorted(seq, vals, side=side).astype(np.int32),
        )
    rows = np.array([[1, 2, 3], [2, 4, 6]], np.float32)
    want = np.stack([np.searchsorted(rows[i], vals[i]) for i in range(2)])
    np.testing.assert_array_equal(ops.searchsorted(Tensor(rows), Tensor(vals)).asnumpy(), want)
    b = ops.bucketize(Tensor(vals), [1.0, 3.0, 5.0, 7.0, 9.0], right=True).asnumpy()
    assert b.dtype == np.int32
    np.testing.assert_array_equal(b, np.searchsorted(seq, vals, side="right"))
    with pytest.raises(ValueError, match="searchsorted.*side"):
        ops.searchsorted(Tensor(seq), Tensor(vals), side="middle")


def test_functional_dropout():
    x = Tensor(np.ones(4000, np.float32))
    out = ops.dropout(x, p=0.25, seed=3).asnumpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)} and abs(np.mean(out == 0) - 0.25) < 0.03
    np.testing.assert_array_equal(ops.dropout(x, p=0.25, seed=3).asnumpy(), out)
    assert ops.dropout(x, p=0.25, training=False) is x
    assert not ops.dropout(x, p=1.0).asnumpy().any()
    opforge.set_seed(2)
    a = ops.dropout(x).asnumpy()
    assert not np.array_equal(a, ops.dropout(x).asnumpy())
    opforge.set_seed(2)
    np.testing.assert_array_equal(ops.dropout(x).asnumpy(), a)
    with pytest.raises(ValueError, match="dropout.*'p'"):
        ops.dropout(x, p=1.5)
