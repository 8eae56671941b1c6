"""Regressions for gaps the zoo's DeepLabV3 met (tests/test_zoo_deeplabv3.py): ``ops.ResizeNearestNeighbor``
(its ASPP pooling branch) and an Iterable ``learning_rate`` (train.py passes the generator of cosine_lr)."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge.ops import operations as P
from opforge.testing import numeric_grad


def _reference(x, size, align_corners=False, half_pixel_centers=False):
    """TensorFlow's legacy nearest-neighbour rule, written per output element."""
    n, c, h, w = x.shape
    out = np.empty((n, c, *size), x.dtype)

    def src(d, i, o):
        scale = (i - 1) / (o - 1) if align_corners and o > 1 else i / o
        v = (d + 0.5) * scale if half_pixel_centers else d * scale
        v = int(np.floor(v + 0.5)) if align_corners else int(np.floor(v))
        return min(max(v, 0), i - 1)

    for y in range(size[0]):
        for z in range(size[1]):
            out[:, :, y, z] = x[:, :, src(y, h, size[0]), src(z, w, size[1])]
    return out


@pytest.mark.parametrize(
    "size,align,half", [((2, 2), False, False), ((5, 7), False, False), ((5, 7), True, False), ((4, 9), False, True)]
)
def test_resize_nearest_neighbor_matches_the_reference(size, align, half):
    x = np.random.default_rng(0).standard_normal((2, 3, 3, 4)).astype(np.float32)
    op = P.ResizeNearestNeighbor(size, align_corners=align, half_pixel_centers=half)
    got = op(Tensor(x))
    assert got.dtype == opforge.float32 and got.shape == (2, 3, *size)
    np.testing.assert_array_equal(got.asnumpy(), _reference(x, size, align, half))
    assert ops.ResizeNearestNeighbor is P.ResizeNearestNeighbor


def test_resize_nearest_neighbor_docs_example_ints_jit_and_grad():
    x = Tensor(np.array([[[[-0.1, 0.3, 3.6], [0.4, 0.5, -3.2]]]]), opforge.float32)
    np.testing.assert_allclose(P.ResizeNearestNeighbor((2, 2))(x).asnumpy(), [[[[-0.1, 0.3], [0.4, 0.5]]]])
    ints = np.arange(12, dtype=np.int32).reshape(1, 1, 3, 4)
    got = P.ResizeNearestNeighbor([6, 8], True)(Tensor(ints))
    assert got.dtype == opforge.int32
    np.testing.assert_array_equal(got.asnumpy(), _reference(ints, (6, 8), True))

    op = P.ResizeNearestNeighbor((5, 3))
    xs = np.random.default_rng(1).standard_normal((1, 2, 3, 4))
    f = opforge.jit(lambda t: op(t))
    np.testing.assert_array_equal(f(Tensor(xs)).asnumpy(), op(Tensor(xs)).asnumpy())
    weights = np.random.default_rng(2).standard_normal((1, 2, 5, 3))
    grad = ops.grad(lambda t: (op(t) * Tensor(weights)).sum())(Tensor(xs)).asnumpy()
    want = numeric_grad(lambda a: float((_reference(a, (5, 3)) * weights).sum()), xs)
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8)


def test_resize_nearest_neighbor_bad_inputs():
    with pytest.raises(TypeError, match="ResizeNearestNeighbor.*size"):
        P.ResizeNearestNeighbor(4)
    with pytest.raises(ValueError, match="ResizeNearestNeighbor.*size"):
        P.ResizeNearestNeighbor((1, 2, 3))
    with pytest.raises(TypeError, match="align_corners"):
        P.ResizeNearestNeighbor((2, 2), align_corners=1)
    with pytest.raises(ValueError, match="half_pixel_centers"):
        P.ResizeNearestNeighbor((2, 2), True, True)
    with pytest.raises(ValueError, match="4-D"):
        P.ResizeNearestNeighbor((2, 2))(Tensor(np.zeros((2, 3, 4), np.float32)))
    with pytest.raises(TypeError, match="input_x"):
        P.ResizeNearestNeighbor((2, 2))(np.zeros((1, 1, 2, 2)))


def test_optimizer_learning_rate_accepts_an_iterable():
    # MindSpore: learning_rate is a float, int, Tensor, Iterable or LearningRateSchedule; an Iterable: one per step
    def cosine(total):
        for i in range(total):
            yield 0.1 * 0.5 * (1 + np.cos(np.pi * i / total))

    net = nn.Dense(2, 1)
    opt = nn.Momentum(net.trainable_params(), learning_rate=cosine(4), momentum=0.9)
    want = [0.1 * 0.5 * (1 + np.cos(np.pi * i / 4)) for i in range(4)]
    assert opt.dynamic_lr
    np.testing.assert_allclose(opt._lr_schedule.asnumpy(), np.float32(want), rtol=1e-6)
    opt = nn.Momentum(net.trainable_params(), learning_rate=np.float32([0.1, 0.05]), momentum=0.9)
    np.testing.assert_allclose(opt._lr_schedule.asnumpy(), [0.1, 0.05], rtol=1e-6)
    with pytest.raises(TypeError, match="learning_rate"):
        nn.Momentum(net.trainable_params(), learning_rate="0.1", momentum=0.9)
