"""Fixes from the second forward/training sweep of the model zoo's official networks (docs/zoo_api_survey.md,
"A forward/training sweep of the official networks"): ``Select``'s x and y are one dtype group (promoted, as
MindSpore's signature declares: Tacotron2 selects between float16 and float32), and ``ops.DynamicRNN`` (CTPN
builds one in every configuration)."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
import opforge as ms
from opforge import Tensor, context, nn, ops
from opforge.ops import operations as P

# -- Select: x and y promoted to one dtype ---------------------------------------------------------------


def test_select_documented_example():
    out = ops.Select()(Tensor([True, False]), Tensor([2, 3], ms.float32), Tensor([1, 2], ms.float32))
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 2.0])


@pytest.mark.parametrize(
    "xd, yd, want",
    [
        (np.float16, np.float32, ms.float32),
        (np.float32, np.float16, ms.float32),
        (np.int32, np.float32, ms.float32),
        (np.int32, np.int64, ms.int64),
        (np.float16, np.float16, ms.float16),
    ],
)
def test_select_promotes_x_and_y(xd, yd, want):
    rng = np.random.default_rng(0)
    cond = rng.random((3, 4)) < 0.5
    x = (rng.random((3, 4)) * 10).astype(xd)
    y = (rng.random((3, 4)) * 10).astype(yd)
    out = ops.select(Tensor(cond), Tensor(x), Tensor(y))
    assert out.dtype is want
    np.testing.assert_array_equal(out.asnumpy(), np.where(cond, x, y).astype(out.asnumpy().dtype))


def test_select_mixed_dtypes_gradient_in_each_inputs_dtype():
    cond = Tensor(np.array([[True, False, True]]))
    x = Tensor(np.array([[1.0, 2.0, 3.0]], np.float16))
    y = Tensor(np.array([[4.0, 5.0, 6.0]], np.float32))

    def f(a, b):
        return (ops.Select()(cond, a, b) * Tensor(np.array([[1.0, 2.0, 3.0]], np.float32))).sum()

    gx, gy = ops.GradOperation(get_all=True)(f)(x, y)
    assert gx.dtype is ms.float16 and gy.dtype is ms.float32
    np.testing.assert_array_equal(gx.asnumpy(), [[1.0, 0.0, 3.0]])
    np.testing.assert_array_equal(gy.asnumpy(), [[0.0, 2.0, 0.0]])


def test_select_refuses_a_non_number():
    with pytest.raises(TypeError, match="'y'"):
        ops.Select()(Tensor([True]), Tensor([1.0]), "y")


# -- DynamicRNN ----------------------------------------------------------------------------------------


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _dynamic_rnn_ref(x, w, b, h0, c0, forget_bias):
    """NumPy: gates i, j, f, o from [x_t, h] @ w + b."""
    h, c = h0[0].astype(np.float64), c0[0].astype(np.float64)
    hidden = h.shape[-1]
    outs = {k: [] for k in ("h", "c", "i", "j", "f", "o", "tanhc")}
    for t in range(x.shape[0]):
        g = np.concatenate([x[t], h], axis=1) @ w + b
        i, j, f, o = (g[:, k * hidden : (k + 1) * hidden] for k in range(4))
        i, j, f, o = _sigmoid(i), np.tanh(j), _sigmoid(f + forget_bias), _sigmoid(o)
        c = f * c + i * j
        h = o * np.tanh(c)
        for k, v in (("h", h), ("c", c), ("i", i), ("j", j), ("f", f), ("o", o), ("tanhc", np.tanh(c))):
            outs[k].append(v)
    return {k: np.stack(v) for k, v in outs.items()}


def _rnn_inputs(steps=3, batch=2, n_in=5, hidden=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((steps, batch, n_in)).astype(np.float32)
    w = (rng.standard_normal((n_in + hidden, 4 * hidden)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(4 * hidden) * 0.1).astype(np.float32)
    h0 = rng.standard_normal((1, batch, hidden)).astype(np.float32)
    c0 = rng.standard_normal((1, batch, hidden)).astype(np.float32)
    return x, w, b, h0, c0


@pytest.mark.parametrize("forget_bias", [0.0, 1.0])
def test_dynamic_rnn_matches_numpy(forget_bias):
    x, w, b, h0, c0 = _rnn_inputs()
    out = P.DynamicRNN(forget_bias=forget_bias)(Tensor(x), Tensor(w), Tensor(b), None, Tensor(h0), Tensor(c0))
    ref = _dynamic_rnn_ref(x, w, b, h0, c0, forget_bias)
    assert len(out) == 8 and all(o.shape == (3, 2, 4) and o.dtype is ms.float32 for o in out)
    for got, key in zip(out, ("h", "h", "c", "i", "j", "f", "o", "tanhc")):
        np.testing.assert_allclose(got.asnumpy(), ref[key], rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_documented_shapes_float16():
    rng = np.random.default_rng(1)
    x = Tensor(rng.random((2, 16, 64)).astype(np.float16))
    w = Tensor(rng.random((96, 128)).astype(np.float16))
    b = Tensor(rng.random(128).astype(np.float16))
    h = Tensor(rng.random((1, 16, 32)).astype(np.float16))
    c = Tensor(rng.random((1, 16, 32)).astype(np.float16))
    out = ops.DynamicRNN()(x, w, b, None, h, c)
    assert out[0].shape == (2, 16, 32) and out[0].dtype is ms.float16
    ref = _dynamic_rnn_ref(*(t.asnumpy().astype(np.float32) for t in (x, w, b, h, c)), 0.0)
    np.testing.assert_allclose(out[0].asnumpy().astype(np.float32), ref["h"], rtol=2e-2, atol=2e-2)


def test_dynamic_rnn_gradient_against_finite_differences():
    x, w, b, h0, c0 = _rnn_inputs(steps=2, batch=1, n_in=3, hidden=2, seed=3)
    rnn = P.DynamicRNN(forget_bias=0.5)
    weights = np.random.default_rng(4).standard_normal((2, 1, 2))

    def loss_np(wv):
        return float((_dynamic_rnn_ref(x, wv, b, h0, c0, 0.5)["h"] * weights).sum())

    def loss(wt):
        return (
            rnn(Tensor(x), wt, Tensor(b), None, Tensor(h0), Tensor(c0))[0] * Tensor(weights.astype(np.float32))
        ).sum()

    g = ops.GradOperation()(loss)(Tensor(w)).asnumpy()
    eps, num = 1e-5, np.zeros_like(w, dtype=np.float64)
    w64 = w.astype(np.float64)
    for idx in np.ndindex(*w.shape):
        wp, wm = w64.copy(), w64.copy()
        wp[idx] += eps
        wm[idx] -= eps
        num[idx] = (loss_np(wp) - loss_np(wm)) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-3, atol=1e-4)


class _RnnCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rnn = P.DynamicRNN(forget_bias=0.0)

    def construct(self, x, w, b, h, c):
        return self.rnn(x, w, b, None, h, c)[0]


def test_dynamic_rnn_graph_mode_matches_pynative():
    args = [Tensor(a) for a in _rnn_inputs()]
    try:
        context.set_context(mode=context.GRAPH_MODE)
        graph = _RnnCell()(*args).asnumpy()
    finally:
        context.set_context(mode=context.PYNATIVE_MODE)
    np.testing.assert_allclose(graph, _RnnCell()(*args).asnumpy(), rtol=1e-6)


def test_dynamic_rnn_checks_its_arguments():
    with pytest.raises(ValueError, match="direction"):
        P.DynamicRNN(direction="BIDIRECTIONAL")
    with pytest.raises(TypeError, match="forget_bias"):
        P.DynamicRNN(forget_bias=1)
    x, w, b, h0, c0 = (Tensor(a) for a in _rnn_inputs())
    with pytest.raises(ValueError, match="seq_length"):
        P.DynamicRNN()(x, w, b, Tensor(np.array([3, 3], np.int32)), h0, c0)
    with pytest.raises(ValueError, match="'w'"):
        P.DynamicRNN()(x, Tensor(np.zeros((8, 16), np.float32)), b, None, h0, c0)


# -- Tensor.repeat (LPCNet: ``cfeat.repeat(160, 1)``) ----------------------------------------------------


def test_tensor_repeat_documented_examples():
    np.testing.assert_array_equal(Tensor(np.array(3)).repeat(4).asnumpy(), [3, 3, 3, 3])
    x = Tensor(np.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(x.repeat(2).asnumpy(), [1, 1, 2, 2, 3, 3, 4, 4])
    np.testing.assert_array_equal(x.repeat(3, axis=1).asnumpy(), [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]])
    np.testing.assert_array_equal(x.repeat([1, 2], axis=0).asnumpy(), [[1, 2], [3, 4], [3, 4]])


def test_tensor_repeat_matches_numpy_and_differentiates():
    a = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(Tensor(a).repeat(5, 1).asnumpy(), np.repeat(a, 5, 1))
    g = ops.GradOperation()(lambda t: (t.repeat(3, -1) * t.repeat(3, -1)).sum())(Tensor(a)).asnumpy()
    np.testing.assert_allclose(g, 6 * a, rtol=1e-6)


def test_dropout_cells_primitive_takes_a_strategy_as_pangu_alpha_shards_it():
    """Pangu-alpha and Wide&Deep shard ``nn.Dropout(...).dropout`` (MindSpore's primitive attribute): a semi-auto
    step on a 1-rank world with that strategy draws the masks of the stand-alone cell (same seed, same step)."""
    from opforge import communication

    x = opforge.Tensor(np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32))
    plain = nn.Dropout(keep_prob=0.7, seed=11)
    plain.set_train()
    want = [plain(x).asnumpy() for _ in range(2)]
    communication.init()  # a world of one rank
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    try:
        sharded = nn.Dropout(keep_prob=0.7, seed=11)
        sharded.dropout.shard(((1, 1),))
        sharded.set_train()
        got = [sharded(x).asnumpy() for _ in range(2)]
    finally:
        opforge.reset_auto_parallel_context()
    assert sharded.dropout.in_strategy == ((1, 1),)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], got[1])  # a new mask each step
