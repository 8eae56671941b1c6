"""MindSpore's ``Tensor.expand_as(other)`` (and its older keyword ``x``) and ``Tensor.broadcast_to(shape)``: the
Tensor broadcast to the other's shape. The zoo's PointNet++ expands its batch indices with it
(tests/test_zoo_pointnet2.py)."""

import numpy as np
import pytest

from opforge import Tensor, ops


def test_expand_as_and_broadcast_to(rng):
    x = rng.normal(size=(3, 1)).astype(np.float32)
    other = Tensor(np.zeros((2, 3, 4), np.int32))
    for got in (Tensor(x).expand_as(other), Tensor(x).expand_as(x=other), Tensor(x).broadcast_to((2, 3, 4))):
        assert got.dtype == Tensor(x).dtype and got.shape == (2, 3, 4)
        np.testing.assert_array_equal(got.asnumpy(), np.broadcast_to(x, (2, 3, 4)))
    np.testing.assert_array_equal(Tensor(x).broadcast_to((-1, 5)).asnumpy(), np.broadcast_to(x, (3, 5)))
    with pytest.raises(TypeError, match="must be a Tensor"):
        Tensor(x).expand_as((2, 3, 4))
    with pytest.raises((ValueError, RuntimeError)):
        Tensor(x).expand_as(Tensor(np.zeros((2, 4), np.float32)))


def test_expand_as_is_differentiable(rng):
    x = rng.normal(size=(1, 3)).astype(np.float32)
    other = Tensor(np.zeros((4, 3), np.float32))
    grad = ops.GradOperation()(lambda t: (t.expand_as(other) * 2.0).sum())(Tensor(x))
    np.testing.assert_allclose(grad.asnumpy(), np.full((1, 3), 8.0), rtol=1e-6)
