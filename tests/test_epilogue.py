"""MatMul epilogues under jit (opforge/dispatch/epilogue.py): SGD's update of a weight by its MatMul
gradient runs as one FusedMatMulApplyGradientDescent where that is safe, and agrees with the eager
(unfused) step."""

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, nn, ops
from opforge import dtype as mstype


def _mlp_step(dtype, jit: bool, fuse: bool = True):
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(
        nn.Dense(12, 16, Tensor(rng.standard_normal((16, 12)).astype(dtype)), dtype=mstype.nptype_to_dtype(dtype)),
        nn.ReLU(),
        nn.Dense(16, 5, Tensor(rng.standard_normal((5, 16)).astype(dtype)), dtype=mstype.nptype_to_dtype(dtype)),
    )
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.05))
    return (opforge.jit(step, fuse=fuse) if jit else step), net


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_steps_fused_agree_with_eager(dtype):
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((8, 12)).astype(dtype))
    y = Tensor(rng.integers(0, 5, 8).astype(np.int32))
    (eager, eager_net), (jitted, jit_net) = _mlp_step(dtype, False), _mlp_step(dtype, True)
    for _ in range(4):
        want, got = eager(x, y), jitted(x, y)
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5)
    for a, b in zip(jit_net.trainable_params(), eager_net.trainable_params()):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    assert "2 MatMul updates fused" in jitted.explain()
    assert jitted.explain().count("FusedMatMulApplyGradientDescent") == 2


def test_fuse_false_keeps_the_pair():
    step, _ = _mlp_step(np.float32, True, fuse=False)
    step(Tensor(np.ones((8, 12), np.float32)), Tensor(np.zeros(8, np.int32)))
    assert "FusedMatMulApplyGradientDescent" not in step.explain()


def _update(w, v, x):
    return ops.ApplyGradientDescent()(v, 0.5, ops.MatMul(transpose_a=True)(x, w))


def test_a_product_read_elsewhere_is_not_fused():
    w = Parameter(Tensor(np.ones((3, 4), np.float32)), name="w")
    v = Parameter(Tensor(np.zeros((2, 4), np.float32)), name="v")

    def fn(x):
        g = ops.MatMul(transpose_a=True)(x, w)
        ops.ApplyGradientDescent()(v, 0.5, g)
        return g

    jf = opforge.jit(fn)
    x = Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    for _ in range(2):
        g = jf(x).asnumpy()
    np.testing.assert_array_equal(v.asnumpy(), -2 * 0.5 * g)
    assert "FusedMatMulApplyGradientDescent" not in jf.explain()


def test_an_input_written_before_the_update_is_not_fused():
    """The fused call runs where the update ran: a MatMul input overwritten in between keeps the pair."""
    w = Parameter(Tensor(np.ones((3, 4), np.float32)), name="w")
    v = Parameter(Tensor(np.zeros((2, 4), np.float32)), name="v")

    def fn(x):
        g = ops.MatMul(transpose_a=True)(x, w)
        ops.Assign()(w, w * 2.0)
        return ops.ApplyGradientDescent()(v, 0.5, g)

    jf = opforge.jit(fn)
    x = Tensor(np.ones((3, 2), np.float32))
    jf(x)
    jf(x)  # replayed: the product of the first call's w (1), then of the second's (2)
    np.testing.assert_array_equal(v.asnumpy(), np.full((2, 4), -(3 * 0.5 + 6 * 0.5), np.float32))
    assert "FusedMatMulApplyGradientDescent" not in jf.explain()


def test_no_kernel_for_the_dtype_keeps_the_pair():
    w = Parameter(Tensor(np.ones((3, 4), np.float16)), name="w")
    v = Parameter(Tensor(np.zeros((2, 4), np.float16)), name="v")
    jf = opforge.jit(lambda x: _update(w, v, x))
    x = Tensor(np.ones((3, 2), np.float16))
    jf(x)
    jf(x)
    np.testing.assert_array_equal(v.asnumpy(), np.full((2, 4), -3.0, np.float16))
    assert "FusedMatMulApplyGradientDescent" not in jf.explain()


def test_a_weight_in_its_own_product_is_not_fused():
    """var -= alpha * (x @ var): the GEMM would read the weight it accumulates into."""
    w = Parameter(Tensor(np.eye(3, dtype=np.float32) * 2), name="w")
    jf = opforge.jit(lambda x: ops.ApplyGradientDescent()(w, 0.5, ops.MatMul()(x, w)))
    x = Tensor(np.ones((3, 3), np.float32))
    jf(x)  # w = 2I - 0.5 * (ones @ 2I) = 2I - 1
    jf(x)  # w = w - 0.5 * (ones @ w): every column of ones @ w sums to 2 - 3 = -1
    want = np.eye(3, dtype=np.float32) * 2 - 1
    want = want - 0.5 * (np.ones((3, 3), np.float32) @ want)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)
    assert "FusedMatMulApplyGradientDescent" not in jf.explain()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_fused_operator_called_with_var_as_an_operand(dtype):
    """Called directly (not by the pass) with var as x2 too: the product is taken before var changes."""
    start = np.arange(9, dtype=dtype).reshape(3, 3) / 4
    x = np.ones((3, 3), dtype)
    w = Parameter(Tensor(start.copy()), name="w")
    ops.FusedMatMulApplyGradientDescent()(w, 0.5, Tensor(x), w)
    np.testing.assert_allclose(w.asnumpy(), start - 0.5 * (x @ start), rtol=1e-6)
