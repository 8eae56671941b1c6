"""Fixes found by running the model zoo's official networks forward and for a training step (docs/zoo_api_survey.md,
"A forward/training sweep of the official networks"), each checked against NumPy or MindSpore's documented
behaviour."""

import numpy as np
import pytest

import opforge as ms
import opforge.numpy as mnp
from opforge import Parameter, Tensor, context, nn, ops
from opforge.ops import functional as F
from opforge.ops import operations as P


@pytest.fixture
def graph_mode():
    old = context.get_context("mode")
    context.set_context(mode=context.GRAPH_MODE)
    yield
    context.set_context(mode=old)


def test_tuple_to_array_takes_a_range():
    # MindSpore's TupleToArray takes a range as the tuple of its values (YOLOv3/v4/X: grids from range(w))
    out = P.TupleToArray()(range(2, 7))
    np.testing.assert_array_equal(out.asnumpy(), np.arange(2, 7))
    np.testing.assert_array_equal(F.tuple_to_array(range(3)).asnumpy(), np.arange(3))
    with pytest.raises(TypeError):
        F.tuple_to_array(range(0))  # empty, as an empty tuple


def test_parameter_clone():
    p = Parameter(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="bn.moving_mean", requires_grad=False)
    q = p.clone()
    assert isinstance(q, Parameter) and q is not p
    assert q.name == "bn.moving_mean" and q.requires_grad is False
    np.testing.assert_array_equal(q.asnumpy(), p.asnumpy())
    ops.Assign()(q, Tensor(np.zeros((2, 3), np.float32)))  # its own storage
    np.testing.assert_array_equal(p.asnumpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(p.clone(init="ones").asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(p.clone(init=2.5).asnumpy(), np.full((2, 3), 2.5))
    z = p.clone(init="zeros")
    assert z.dtype == ms.float32 and z.shape == (2, 3)


def test_tensor_clip_dtype():
    # MindSpore's documented example of Tensor.clip(xmin, xmax, dtype=None)
    x = Tensor([1, 2, 3, -4, 0, 3, 2, 0]).astype("float32")
    np.testing.assert_array_equal(x.clip(0, 2).asnumpy(), [1, 2, 2, 0, 0, 2, 2, 0])
    t = Tensor([1, 1, 1, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(x.clip(t, 2).asnumpy(), [1, 2, 2, 1, 1, 2, 2, 1])
    y = Tensor(np.array([0.2, 3.7, 9.0], np.float32)).clip(xmin=1, xmax=5, dtype=ms.int32)  # YOLOX's call
    assert y.dtype == ms.int32
    np.testing.assert_array_equal(y.asnumpy(), np.clip([0.2, 3.7, 9.0], 1, 5).astype(np.int32))


def test_mindspore_numpy_clip_signature():
    out = mnp.clip(mnp.asarray([1, 2, 3, -4, 0, 3, 2, 0]), xmin=0, xmax=2)
    np.testing.assert_array_equal(out.asnumpy(), [1, 2, 2, 0, 0, 2, 2, 0])
    assert mnp.clip(Tensor(np.array([1.5], np.float32)), 0, 1, dtype=ms.float16).dtype == ms.float16


class _Cut(nn.Cell):
    """loss = sum(h * stop_gradient(2h)), h = x * w: its gradient in w is 2h * x, not 4h * x."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.linspace(0.1, 1.2, 12, dtype=np.float32).reshape(3, 4)), name="w")

    def construct(self, x):
        h = x * self.w
        return (h * ops.stop_gradient(h * 2.0)).sum()


@pytest.mark.usefixtures("graph_mode")
def test_stop_gradient_holds_after_a_forward_call_in_graph_mode():
    # A graph-mode cell called forward first (a trace recorded without a tape), then differentiated: the replay
    # under the tape must keep stop_gradient's cut (YOLOX's and YOLOv3's losses: their gradients were wrong)
    x = Tensor(np.random.RandomState(0).rand(3, 4).astype(np.float32) + 0.5)
    net = _Cut()
    weights = ms.ParameterTuple(net.trainable_params())
    net(x)
    (g,) = ops.GradOperation(get_by_list=True)(net, weights)(x)
    w = net.w.asnumpy()
    xn = x.asnumpy()
    np.testing.assert_allclose(g.asnumpy(), 2.0 * (xn * w) * xn, rtol=1e-6)
    # and a second forward call still replays the trace
    np.testing.assert_allclose(net(x).asnumpy(), np.sum(2.0 * (xn * w) ** 2), rtol=1e-6)


@pytest.mark.usefixtures("graph_mode")
def test_stop_gradient_training_step_after_forward_in_graph_mode():
    x = Tensor(np.random.RandomState(1).rand(3, 4).astype(np.float32) + 0.5)
    net = _Cut()
    w0 = net.w.asnumpy().copy()
    net(x)
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), learning_rate=0.1))
    step(x)
    xn = x.asnumpy()
    np.testing.assert_allclose(net.w.asnumpy(), w0 - 0.1 * 2.0 * (xn * w0) * xn, rtol=1e-5)
