"""MindSpore's argument forms beyond the sweeps: N-D ops.matmul / Tensor.matmul against np.matmul,
ops.functional.vmap, and the functional names of the third elementwise batch."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge import dtype as ms


def _rand(shape, rng):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 5)),
        ((4,), (2, 4, 5)),
        ((2, 3, 4), (4,)),
        ((4,), (4,)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((3, 4), (6, 4, 2)),
    ],
)
def test_matmul_nd_matches_numpy(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = _rand(a_shape, rng), _rand(b_shape, rng)
    want = np.matmul(a, b)
    for got in (ops.matmul(Tensor(a), Tensor(b)), Tensor(a).matmul(Tensor(b)), Tensor(a) @ Tensor(b)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_matmul_nd_gradient_matches_numpy():
    rng = np.random.default_rng(1)
    a, b = _rand((2, 1, 3, 4), rng), _rand((5, 4, 2), rng)
    da, db = opforge.grad(lambda x, y: ops.matmul(x, y).sum(), grad_position=(0, 1))(Tensor(a), Tensor(b))
    ones = np.ones((2, 5, 3, 2), np.float32)
    want_a = np.matmul(ones, np.swapaxes(b, -1, -2)).sum(axis=1, keepdims=True)
    want_b = np.matmul(np.swapaxes(a, -1, -2), ones).sum(axis=0)
    np.testing.assert_allclose(da.asnumpy(), want_a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db.asnumpy(), want_b, rtol=1e-5, atol=1e-5)


def test_matmul_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="'input'"):
        ops.matmul(Tensor(np.float32(1.0)), Tensor(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="'other'"):
        ops.matmul(Tensor(np.ones(3, np.float32)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="broadcast"):
        ops.matmul(Tensor(np.ones((2, 3, 4), np.float32)), Tensor(np.ones((3, 4, 5), np.float32)))


def test_functional_vmap_is_ops_vmap():
    assert ops.functional.vmap is ops.vmap
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = ops.functional.vmap(lambda v: ops.sinh(v), in_axes=0)(x)
    np.testing.assert_allclose(out.asnumpy(), np.sinh(x.asnumpy()), rtol=1e-6)


def test_functional_names_of_the_third_batch():
    x = np.array([0.25, -0.5, 0.75], np.float32)
    cases = {
        ops.arcsin: np.arcsin,
        ops.acos: np.arccos,
        ops.arctanh: np.arctanh,
        ops.trunc: np.trunc,
        ops.erfc: lambda v: 1.0 - np.vectorize(__import__("math").erf)(v),
    }
    for fn, ref in cases.items():
        np.testing.assert_allclose(fn(Tensor(x)).asnumpy(), ref(x), rtol=1e-5, atol=1e-6)
    i = np.array([5, 12, 255], np.uint8)
    j = np.array([3, 10, 15], np.uint8)
    assert ops.bitwise_xor(Tensor(i), Tensor(j)).asnumpy().tolist() == np.bitwise_xor(i, j).tolist()
    assert ops.invert(Tensor(i)).asnumpy().tolist() == np.invert(i).tolist()
    np.testing.assert_allclose(ops.xlogy(Tensor(x), Tensor(np.abs(x))).asnumpy(), x * np.log(np.abs(x)), rtol=1e-6)


def test_unsigned_bitwise_keep_the_dtype():
    a = Tensor(np.array([2**64 - 1, 1], np.uint64))
    out = ops.BitwiseAnd()(a, Tensor(np.array([0xFF, 3], np.uint64)))
    assert out.dtype == opforge.uint64
    assert out.asnumpy().tolist() == [0xFF, 1]


def test_functional_spellings_of_mindspore_2():
    """ops.sum/mean/prod/amax/amin with MindSpore 2.x's keyword names, and the shape and fill functions."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = Tensor(a)
    np.testing.assert_allclose(ops.sum(x, dim=1, keepdim=True).asnumpy(), a.sum(1, keepdims=True))
    np.testing.assert_allclose(ops.sum(x).asnumpy(), a.sum())
    assert ops.sum(x, dtype=ms.float64).dtype == ms.float64
    np.testing.assert_allclose(ops.mean(x, axis=(0, 2), keep_dims=False).asnumpy(), a.mean((0, 2)))
    np.testing.assert_allclose(ops.prod(x + 1, axis=2).asnumpy(), (a + 1).prod(2), rtol=1e-5)
    np.testing.assert_array_equal(ops.amax(x, axis=0, keepdims=True).asnumpy(), a.max(0, keepdims=True))
    np.testing.assert_array_equal(ops.amin(x, axis=-1).asnumpy(), a.min(-1))
    np.testing.assert_array_equal(ops.permute(x, (2, 0, 1)).asnumpy(), a.transpose(2, 0, 1))
    assert ops.unsqueeze(x, 1).shape == (2, 1, 3, 4)
    assert ops.flatten(x).shape == (2, 12) and ops.flatten(x, start_dim=0).shape == (24,)
    assert ops.flatten(x, start_dim=1, end_dim=-2).shape == (2, 3, 4)
    np.testing.assert_array_equal(ops.where(x > 5, x, 0.0).asnumpy(), np.where(a > 5, a, 0))
    np.testing.assert_array_equal(ops.masked_fill(x, x > 5, -1.0).asnumpy(), np.where(a > 5, -1, a))
    assert ops.full((2, 2), 3).dtype == ms.int64 and float(ops.full((1,), 2.5).asnumpy()[0]) == 2.5
    np.testing.assert_array_equal(ops.arange(0, 5, 2).asnumpy(), [0, 2, 4])
    on, off = Tensor(1.0, ms.float32), Tensor(0.0, ms.float32)
    np.testing.assert_array_equal(
        ops.one_hot(Tensor(np.array([0, 2], np.int32)), 3, on, off).asnumpy(), np.eye(3)[[0, 2]]
    )
    with pytest.raises(ValueError, match="'flatten'.*order 'C'"):
        ops.flatten(x, "F")


def test_shape_tensor_shape_and_unique():
    x = Tensor(np.array([[3, 1], [3, 2]], np.int32))
    assert ops.Shape()(x) == (2, 2) and ops.shape(x) == (2, 2)
    np.testing.assert_array_equal(ops.TensorShape()(x).asnumpy(), [2, 2])
    assert ops.dyn_shape(x).dtype == ms.int64 and ops.DynamicShape(ms.int32)(x).dtype == ms.int32
    y, idx = ops.unique(x)
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(y.asnumpy()[idx.asnumpy()], x.asnumpy().reshape(-1))
    assert idx.dtype == ms.int32
    with pytest.raises(ValueError, match="'Unique'.*1-D"):
        ops.Unique()(x)
    with pytest.raises(TypeError, match="'Shape'.*Tensor"):
        ops.Shape()([1, 2])
    placeholder = Tensor(shape=[None, 3], dtype=ms.float32)
    assert ops.Shape()(placeholder) == (-1, 3)
    with pytest.raises(ValueError, match="'TensorShape'.*unknown"):
        ops.TensorShape()(placeholder)
