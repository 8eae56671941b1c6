"""A Cell's own bprop (MindSpore's custom Cell.bprop, opforge/bprop/cell_bprop.py): the straight-through estimator,
the output and its gradient handed to bprop, several inputs and a tuple output, the cell's Parameters left without
a gradient, grad of grad, jit, a training step in GRAPH_MODE, and a wrong bprop's errors."""

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, nn, ops
from opforge.testing import numeric_grad


class StraightThrough(nn.Cell):
    """Rounds forward; passes the gradient through, scaled (so a test sees the bprop ran)."""

    def construct(self, x):
        return ops.Round()(x)

    def bprop(self, x, out, dout):
        return (dout * 2.0,)


class Quantised(nn.Cell):
    def __init__(self):
        super().__init__()
        self.quant = StraightThrough()
        self.w = Parameter(Tensor(np.array([1.5, -2.0, 0.25], np.float32)), name="w")

    def construct(self, x):
        return (self.quant(x * self.w) * 3.0).sum()


def test_the_straight_through_estimator_replaces_the_rounding_gradient():
    net = Quantised()
    x = np.array([0.7, 1.2, -3.0], np.float32)
    w = net.w.asnumpy()
    assert float(net(Tensor(x)).asnumpy()) == pytest.approx(3 * np.round(x * w).sum())
    np.testing.assert_allclose(opforge.grad(net)(Tensor(x)).asnumpy(), 3 * 2 * w)  # Round's own gradient is 0
    (dw,) = ops.GradOperation(get_by_list=True)(net, net.trainable_params())(Tensor(x))
    np.testing.assert_allclose(dw.asnumpy(), 3 * 2 * x, rtol=1e-6)


class Exp(nn.Cell):
    """exp with a bprop written from its output: d exp(x) = exp(x) dout."""

    def construct(self, x):
        return ops.Exp()(x)

    def bprop(self, x, out, dout):
        return (out * dout,)


def test_bprop_sees_the_output_and_grad_of_grad_differentiates_it():
    x = np.array([0.3, -1.1], np.float64)
    f = lambda t: Exp()(t * t).sum()  # noqa: E731
    np.testing.assert_allclose(opforge.grad(f)(Tensor(x)).asnumpy(), 2 * x * np.exp(x * x), rtol=1e-12)
    second = opforge.grad(lambda t: opforge.grad(f)(t).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(second, (2 + 4 * x * x) * np.exp(x * x), rtol=1e-10)


class MulAdd(nn.Cell):
    """Two inputs, a tuple output (x y, x + y), and a bprop taking the tuple of output gradients."""

    def __init__(self):
        super().__init__()
        self.hidden = Parameter(Tensor(np.ones(2, np.float64)), name="hidden")

    def construct(self, x, y):
        return x * y * self.hidden, x + y

    def bprop(self, x, y, out, dout):
        d_prod, d_sum = dout
        return d_prod * y + d_sum, d_prod * x + d_sum


def test_several_inputs_a_tuple_output_and_parameters_without_gradient():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(2), rng.standard_normal(2)
    cell = MulAdd()

    def loss(a, b):
        prod, total = cell(a, b)
        return (prod * prod).sum() + (3.0 * total).sum()

    gx, gy = opforge.grad(loss, grad_position=(0, 1))(Tensor(x), Tensor(y))
    np.testing.assert_allclose(gx.asnumpy(), numeric_grad(lambda v: float(loss(Tensor(v), Tensor(y)).asnumpy()), x))
    np.testing.assert_allclose(gy.asnumpy(), numeric_grad(lambda v: float(loss(Tensor(x), Tensor(v)).asnumpy()), y))
    (g_hidden,) = ops.GradOperation(get_by_list=True)(loss, [cell.hidden])(Tensor(x), Tensor(y))
    assert not g_hidden.asnumpy().any()  # the cell's bprop gives its Parameters no gradient, as in MindSpore


def test_jit_and_a_graph_mode_training_step_use_the_bprop():
    net = Quantised()
    x = Tensor(np.array([0.7, 1.2, -3.0], np.float32))
    eager = opforge.grad(net)(x).asnumpy()
    np.testing.assert_allclose(opforge.jit(opforge.grad(net))(x).asnumpy(), eager)
    opforge.set_context(mode=opforge.GRAPH_MODE)
    try:
        model = nn.Dense(3, 1)
        head = nn.SequentialCell([model, StraightThrough()])
        step = nn.TrainOneStepCell(nn.WithLossCell(head, nn.MSELoss()), nn.SGD(model.trainable_params(), 0.05))
        data = np.random.default_rng(1).standard_normal((16, 3)).astype(np.float32)
        target = Tensor(np.round(data @ np.array([[2.0], [-1.0], [0.5]], np.float32)))
        losses = [float(step(Tensor(data), target).asnumpy()) for _ in range(30)]
    finally:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    assert losses[-1] < 0.5 * losses[0]  # the rounded head still trains: its gradient passes straight through


def test_a_wrong_bprop_names_the_cell():
    class Wrong(nn.Cell):
        def construct(self, x, y):
            return x * y

        def bprop(self, x, y, out, dout):
            return (dout,)

    x = Tensor(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="For 'Wrong', the bprop must return one gradient per input \\(2\\)"):
        opforge.grad(lambda a, b: Wrong()(a, b).sum(), grad_position=(0, 1))(x, x)

    class NotATuple(nn.Cell):
        def construct(self, x, y):
            return x + y

        def bprop(self, x, y, out, dout):
            return {"x": dout}

    with pytest.raises(TypeError, match="For 'NotATuple', the Cell's bprop must return a tuple"):
        opforge.grad(lambda a, b: NotATuple()(a, b).sum())(x, x)
