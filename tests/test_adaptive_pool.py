"""ops.AdaptiveAvgPool2D, ops.adaptive_avg_pool2d and nn.AdaptiveAvgPool2d: MindSpore's documented examples,
its output sizes (None keeps a dim), the gradient through the layer, and a MindSpore-style constant Tensor
shape for AdaptiveAvgPool2DGrad. (Every dtype and backend: the op_db / grad_db sweeps.)"""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops

X = np.tile(np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3), (3, 1, 1))  # MindSpore's example input


@pytest.mark.parametrize(
    "output_size, want",
    [
        ((None, 2), [[1.5, 2.5], [4.5, 5.5], [7.5, 8.5]]),
        (2, [[3.0, 4.0], [6.0, 7.0]]),
        ((1, 2), [[4.5, 5.5]]),
    ],
)
def test_mindspore_examples(output_size, want):
    out = ops.AdaptiveAvgPool2D(output_size)(Tensor(X))
    np.testing.assert_allclose(out.asnumpy(), np.tile(np.asarray(want, np.float32), (3, 1, 1)))
    np.testing.assert_allclose(ops.adaptive_avg_pool2d(Tensor(X), output_size).asnumpy(), out.asnumpy())


def test_attr_stores_none_as_minus_one_and_shapes():
    assert ops.AdaptiveAvgPool2D((None, 3)).output_size == (-1, 3)
    assert ops.AdaptiveAvgPool2D(4).output_size == (4, 4)
    x = Tensor(np.ones((2, 3, 7, 9), np.float32))
    assert ops.AdaptiveAvgPool2D((None, None))(x).shape == (2, 3, 7, 9)
    assert nn.AdaptiveAvgPool2d((5, None))(x).shape == (2, 3, 5, 9)


def test_layer_is_global_average_pooling_at_one_and_differentiates(rng):
    x = rng.standard_normal((2, 3, 5, 4))
    pool = nn.AdaptiveAvgPool2d(1)
    np.testing.assert_allclose(pool(Tensor(x)).asnumpy(), x.mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    w = rng.standard_normal((2, 3, 3, 3))
    g = opforge.grad(lambda t: (nn.AdaptiveAvgPool2d(3)(t) * Tensor(w)).sum())(Tensor(x))
    # Rows 5 -> 3: windows [0, 2), [1, 4), [3, 5); columns 4 -> 3: [0, 2), [1, 3), [2, 4).
    rows, cols = [(0, 2), (1, 4), (3, 5)], [(0, 2), (1, 3), (2, 4)]
    want = np.zeros_like(x)
    for i, (a, b) in enumerate(rows):
        for j, (c, d) in enumerate(cols):
            want[:, :, a:b, c:d] += w[:, :, i : i + 1, j : j + 1] / ((b - a) * (d - c))
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-12)


def test_grad_primitive_takes_a_constant_shape_tensor():
    dy = Tensor(np.ones((1, 1, 2, 2), np.float32))
    from_tuple = ops.AdaptiveAvgPool2DGrad()(dy, (1, 1, 4, 4))
    from_tensor = ops.AdaptiveAvgPool2DGrad()(dy, Tensor(np.array([1, 1, 4, 4], np.int64)))
    np.testing.assert_allclose(from_tensor.asnumpy(), from_tuple.asnumpy())
    np.testing.assert_allclose(from_tuple.asnumpy(), np.full((1, 1, 4, 4), 0.25, np.float32))


def test_vmap_folds_the_batch_into_the_planes(rng):
    x = rng.standard_normal((3, 2, 4, 5, 6)).astype(np.float32)
    pool = ops.AdaptiveAvgPool2D((2, 4))
    batched = ops.vmap(pool)(Tensor(x))
    np.testing.assert_allclose(batched.asnumpy(), np.stack([pool(Tensor(e)).asnumpy() for e in x]), rtol=1e-6)
    dy = rng.standard_normal((3, 2, 4, 2, 4)).astype(np.float32)
    grad = ops.vmap(lambda d: ops.AdaptiveAvgPool2DGrad()(d, (2, 4, 5, 6)))(Tensor(dy))
    want = np.stack([ops.AdaptiveAvgPool2DGrad()(Tensor(d), (2, 4, 5, 6)).asnumpy() for d in dy])
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-6)
