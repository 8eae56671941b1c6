"""``Cell.to_float``: what a cell marked with a dtype casts (opforge/nn/mixed_precision.py). MindSpore's graph
mode casts the cell's inputs (in tuples and keyword arguments too), every float Parameter and every constant
float Tensor (a Tensor attribute) its construct reads; values computed inside the cell keep their dtype; ints and
bools are never cast; the innermost marked cell decides. Each test runs in PYNATIVE_MODE and GRAPH_MODE."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import opforge as ms
from opforge import Tensor, nn, ops
from opforge.ops import operations as P


@pytest.fixture(params=["pynative", "graph"])
def mode(request):
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    try:
        yield request.param
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


class _GoFrame(nn.Cell):
    """Tacotron2's decoder start: a float32 constant Tensor attribute joined to the float16 inputs."""

    def __init__(self, frame):
        super().__init__()
        self.go_frame = Tensor(frame, ms.float32)
        self.expand_dims = P.ExpandDims()
        self.concat = P.Concat(0)

    def construct(self, frames):
        return self.concat((self.expand_dims(self.go_frame, 0), frames))


class _Join(nn.Cell):
    """The constant read directly inside Concat's tuple, with the input."""

    def __init__(self, const):
        super().__init__()
        self.const = Tensor(const, ms.float32)
        self.concat = P.Concat(1)

    def construct(self, x):
        return self.concat((self.const, x))


def test_a_float32_constant_tensor_joins_float16_inputs(mode, rng):
    frame = rng.standard_normal(4).astype(np.float32)
    frames = rng.standard_normal((3, 4)).astype(np.float16)
    out = _GoFrame(frame).to_float(ms.float16)(Tensor(frames))
    assert out.dtype is ms.float16
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([frame[None].astype(np.float16), frames]))

    const = rng.standard_normal((2, 3)).astype(np.float32)
    x = rng.standard_normal((2, 2)).astype(np.float32)  # a float32 input: cast too
    out = _Join(const).to_float(ms.float16)(Tensor(x))
    assert out.dtype is ms.float16
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([const, x], 1).astype(np.float16))


def test_without_to_float_concat_still_refuses_two_dtypes(mode, rng):
    net = _Join(rng.standard_normal((2, 3)).astype(np.float32))
    with pytest.raises(TypeError, match="Concat"):
        net(Tensor(rng.standard_normal((2, 2)).astype(np.float16)))


class _Pair(nn.Cell):
    def __init__(self):
        super().__init__()
        self.concat = P.Concat(-1)

    def construct(self, a, pair, extra=None):
        out = self.concat((a, pair[0], pair[1]))
        return out if extra is None else self.concat((out, extra))


def test_float32_values_computed_before_the_cell_are_cast_where_they_enter(mode, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    computed = ops.exp(Tensor(x))  # float32, computed outside
    h = Tensor(rng.standard_normal((2, 2)).astype(np.float16))
    k = ops.sqrt(Tensor(np.abs(x)))
    out = _Pair().to_float(ms.float16)(computed, (h, computed), extra=k)  # in a tuple and as a keyword too
    assert out.dtype is ms.float16
    e = np.exp(x).astype(np.float16)
    want = np.concatenate([e, h.asnumpy(), e, np.sqrt(np.abs(x)).astype(np.float16)], -1)
    np.testing.assert_array_equal(out.asnumpy(), want)


_Batch = collections.namedtuple("_Batch", ["x", "steps"])


class _Unpack(nn.Cell):
    def construct(self, batch):
        return batch.x * 2, batch.steps


def test_a_namedtuple_input_keeps_its_type_and_its_ints(mode):
    x = np.array([0.1, 2.5], np.float32)
    doubled, steps = _Unpack().to_float(ms.float16)(_Batch(Tensor(x), Tensor(np.array([3], np.int32))))
    assert doubled.dtype is ms.float16 and steps.dtype is ms.int32
    np.testing.assert_array_equal(doubled.asnumpy(), x.astype(np.float16) * 2)


class _Explicit(nn.Cell):
    """A value cast to float32 inside the cell stays float32 (only what the cell reads is cast)."""

    def __init__(self, scale):
        super().__init__()
        self.scale = Tensor(scale, ms.float32)
        self.cast = P.Cast()

    def construct(self, x):
        y = self.cast(x, ms.float32)
        return ops.exp(y), y * self.scale  # the constant float16, the product promoted to float32


def test_values_computed_inside_the_cell_keep_their_dtype(mode, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    scale = np.float32(1.1)
    e, p = _Explicit(np.array(scale)).to_float(ms.float16)(Tensor(x))
    assert e.dtype is ms.float32 and p.dtype is ms.float32
    x16 = x.astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(e.asnumpy(), np.exp(x16), rtol=1e-6)
    np.testing.assert_allclose(p.asnumpy(), x16 * np.float32(np.float16(scale)), rtol=1e-6)


class _Inner(nn.Cell):
    def __init__(self, const):
        super().__init__()
        self.const = Tensor(const, ms.float16)
        self.dense = nn.Dense(5, 2)
        self.concat = P.Concat(1)

    def construct(self, h):
        return self.dense(self.concat((self.const, h)))


class _Outer(nn.Cell):
    def __init__(self, const16, const32):
        super().__init__()
        self.const = Tensor(const32, ms.float32)
        self.inner = _Inner(const16)
        self.concat = P.Concat(1)

    def construct(self, x):
        h = self.concat((self.const, x))
        return h, self.inner(h)


def test_a_float32_cell_inside_a_float16_cell_decides_for_itself(mode, rng):
    c16 = rng.standard_normal((2, 2)).astype(np.float16)
    c32 = rng.standard_normal((2, 1)).astype(np.float32)
    x = rng.standard_normal((2, 2)).astype(np.float32)
    net = _Outer(c16, c32).to_float(ms.float16)
    net.inner.to_float(ms.float32)
    h, y = net(Tensor(x))
    assert h.dtype is ms.float16 and y.dtype is ms.float32
    h_np = np.concatenate([c32, x], 1).astype(np.float16)
    np.testing.assert_array_equal(h.asnumpy(), h_np)
    w, b = net.inner.dense.weight.asnumpy(), net.inner.dense.bias.asnumpy()
    assert net.inner.dense.weight.dtype is ms.float32
    want = np.concatenate([c16, h_np], 1).astype(np.float32) @ w.T + b
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-6)


class _Ints(nn.Cell):
    def __init__(self):
        super().__init__()
        self.index = Tensor(np.array([2, 0], np.int32))
        self.offset = Tensor(np.array([5, 7], np.int32))
        self.keep = Tensor(np.array([True, False]))
        self.gather = P.Gather()

    def construct(self, x, i):
        picked = self.gather(x, self.index, 1)
        return picked, i + self.offset, ops.select(self.keep, i, self.offset)


def test_int_and_bool_values_are_not_cast(mode):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    i = np.array([1, 2], np.int32)
    picked, shifted, chosen = _Ints().to_float(ms.float16)(Tensor(x), Tensor(i))
    assert picked.dtype is ms.float16 and shifted.dtype is ms.int32 and chosen.dtype is ms.int32
    np.testing.assert_array_equal(picked.asnumpy(), x[:, [2, 0]].astype(np.float16))
    np.testing.assert_array_equal(shifted.asnumpy(), i + [5, 7])
    np.testing.assert_array_equal(chosen.asnumpy(), [1, 7])


class _Head(nn.Cell):
    """A parameter read inside Concat's tuple, a constant and the input: joined, then summed by a Dense."""

    def __init__(self, const):
        super().__init__()
        self.const = Tensor(const, ms.float32)
        self.extra = ms.Parameter(Tensor(np.full((2, 1), 0.5, np.float32)), name="extra")
        self.concat = P.Concat(1)
        self.dense = nn.Dense(5, 1)

    def construct(self, x):
        return self.dense(self.concat((self.const, x, self.extra))).sum()


def test_gradients_come_back_in_the_dtypes_of_the_inputs_and_parameters(mode, rng):
    const = rng.standard_normal((2, 2)).astype(np.float32)
    x = rng.standard_normal((2, 2)).astype(np.float32)
    net = _Head(const).to_float(ms.float16)
    params = ms.ParameterTuple(net.trainable_params())
    (gx,) = ops.GradOperation(get_all=True)(net)(Tensor(x))
    gw = ops.GradOperation(get_by_list=True)(net, params)(Tensor(x))
    assert gx.dtype is ms.float32  # the float32 input's gradient, cast back through the input's Cast
    assert [g.dtype for g in gw] == [ms.float32] * 3  # extra, weight, bias: float32 as the Parameters
    w = net.dense.weight.asnumpy()
    np.testing.assert_allclose(gx.asnumpy(), np.tile(w[0, 2:4].astype(np.float16), (2, 1)), rtol=1e-3)
    by_name = dict(zip([p.name for p in params], gw))
    np.testing.assert_allclose(by_name["extra"].asnumpy(), np.full((2, 1), w[0, 4]), rtol=1e-3)
    feats = np.concatenate([const, x, np.full((2, 1), 0.5)], 1).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(by_name["dense.weight"].asnumpy(), feats.sum(0, keepdims=True), rtol=1e-3)
    np.testing.assert_allclose(by_name["dense.bias"].asnumpy(), [2.0], rtol=1e-6)


def test_graph_mode_gives_what_pynative_gives(rng):
    const = rng.standard_normal((2, 2)).astype(np.float32)
    x = Tensor(rng.standard_normal((2, 2)).astype(np.float32))
    net = _Head(const).to_float(ms.float16)
    grad = ops.GradOperation(get_all=True)
    eager_out, (eager_gx,) = net(x), grad(net)(x)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph_out, (graph_gx,) = net(x), grad(net)(x)
        graph_again = net(x)  # a replay of the trace
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert graph_out.dtype is eager_out.dtype is ms.float16
    np.testing.assert_array_equal(graph_out.asnumpy(), eager_out.asnumpy())
    np.testing.assert_array_equal(graph_again.asnumpy(), eager_out.asnumpy())
    assert graph_gx.dtype is eager_gx.dtype is ms.float32
    np.testing.assert_array_equal(graph_gx.asnumpy(), eager_gx.asnumpy())


def test_mindspore_numpy_concatenate_promotes_as_mindspore(mode, rng):
    """``mindspore.numpy.concatenate`` casts its arrays to their promoted dtype before Concat (LPCNet joins
    a float32 and a float16 array with it); ``axis=None`` flattens; a single Tensor is its slices."""
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 1)).astype(np.float16)
    out = ms.numpy.concatenate([Tensor(a), Tensor(b)], axis=-1)
    assert out.dtype is ms.float32
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([a, b.astype(np.float32)], -1))
    i = np.array([[1], [2]], np.int32)
    assert ms.numpy.concatenate((Tensor(i), Tensor(b)), 1).dtype is ms.float16
    flat = ms.numpy.concatenate([Tensor(a), Tensor(b)], axis=None)
    np.testing.assert_array_equal(flat.asnumpy(), np.concatenate([a.ravel(), b.ravel().astype(np.float32)]))
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(ms.numpy.concatenate(Tensor(x), axis).asnumpy(), np.concatenate(x, axis))


class _Recurrent(nn.Cell):
    """CRNN's BidirectionalLSTM: float32 initial states as constants of a to_float(float16) cell."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(6, 5, bidirectional=True)
        self.h0 = Tensor(np.zeros((2, 3, 5), np.float32))
        self.c0 = Tensor(np.zeros((2, 3, 5), np.float32))

    def construct(self, x):
        return self.rnn(x, (self.h0, self.c0))[0]


def test_an_lstm_in_a_float16_cell_runs_its_recurrence_in_float32(mode):
    ms.set_seed(0)
    net = _Recurrent()
    x = np.random.default_rng(0).standard_normal((4, 3, 6)).astype(np.float32)
    want = net(Tensor(x)).asnumpy()  # float32 throughout
    net.to_float(ms.float16)
    got = net(Tensor(x))
    assert got.dtype == ms.float16
    # the inputs and weights rounded to float16, the recurrence in float32, the output rounded once more
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), want, rtol=0, atol=5e-3)
    grads = ms.grad(lambda t: net(t).sum())(Tensor(x))
    assert grads.dtype == ms.float32 and np.isfinite(grads.asnumpy()).all()


def test_a_constant_assigned_between_calls_is_cast_too(rng):
    frames = rng.standard_normal((3, 4)).astype(np.float16)
    net = _GoFrame(np.zeros(4, np.float32)).to_float(ms.float16)
    assert net(Tensor(frames)).dtype is ms.float16
    frame = rng.standard_normal(4).astype(np.float32)
    net.go_frame = Tensor(frame, ms.float32)  # a new constant: the cell's cached set of them is stale
    out = net(Tensor(frames))
    assert out.dtype is ms.float16
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([frame[None].astype(np.float16), frames]))
