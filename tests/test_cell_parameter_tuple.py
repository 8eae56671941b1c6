"""A ParameterTuple assigned as a Cell attribute registers its Parameters in the cell (MindSpore's
``Cell._set_attr_for_parameter_tuple``): ``trainable_params()``, ``get_parameters()``, ``parameters_dict()``,
``parameters_and_names()`` and checkpoints list them, so an optimizer built from ``net.trainable_params()``
trains them; in PyNative mode the tuple is kept in ``_params_list``, in graph mode as a plain attribute."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Parameter, ParameterTuple, Tensor, nn, ops
from opforge.common.initializer import Uniform, initializer


@pytest.fixture(params=[PYNATIVE_MODE, GRAPH_MODE], ids=["pynative", "graph"])
def mode(request):
    opforge.set_context(mode=request.param)
    yield request.param
    opforge.set_context(mode=PYNATIVE_MODE)


class TupleDense(nn.Cell):
    """``x @ w + b`` with its weights in a ParameterTuple attribute (as the zoo's RNNs keep theirs)."""

    def __init__(self, w: np.ndarray, b: np.ndarray, reset: bool = False):
        super().__init__()
        self.w_list = []  # (a plain attribute first, as the zoo's RNNBase has)
        self.w_list = ParameterTuple(
            [
                Parameter(Tensor(w.astype(np.float32)), name="weight_l0"),
                Parameter(Tensor(b.astype(np.float32)), name="bias_l0"),
            ]
        )
        if reset:  # the zoo's RNNBase.reset_parameters: reaches the tuple's weights through get_parameters()
            stdv = 1 / math.sqrt(w.shape[1])
            for weight in self.get_parameters():
                weight.set_data(initializer(Uniform(stdv), weight.shape))

    def construct(self, x):
        return ops.matmul(x, self.w_list[0]) + self.w_list[1]


class Net(nn.Cell):
    def __init__(self, w, b, reset=False):
        super().__init__()
        self.scale = Parameter(Tensor(np.float32(1.5)), name="scale")
        self.layer = TupleDense(w, b, reset)

    def construct(self, x):
        return self.layer(x) * self.scale


def test_parameter_tuple_attribute_lists_its_parameters(mode, rng):
    net = Net(rng.standard_normal((3, 2)), rng.standard_normal(2))
    names = ["scale", "layer.weight_l0", "layer.bias_l0"]
    assert [p.name for p in net.trainable_params()] == names
    assert [p.name for p in net.get_parameters()] == names
    assert list(net.parameters_dict()) == names
    assert [n for n, _ in net.parameters_and_names()] == names
    assert [n for n, _ in net.layer.parameters_and_names()] == ["weight_l0", "bias_l0"]
    layer = net.layer
    assert isinstance(layer.w_list, ParameterTuple) and layer.w_list[0] is layer._params["weight_l0"]
    if mode == PYNATIVE_MODE:  # MindSpore's: kept in _params_list, not as a plain attribute
        assert "w_list" not in layer.__dict__ and layer._params_list["w_list"] is layer.w_list
    else:
        assert layer.__dict__["w_list"] is layer.w_list and "w_list" not in layer._params_list


def test_reset_parameters_reaches_the_tuple(rng):
    w = rng.standard_normal((4, 8)) * 10.0  # far outside Uniform(1/sqrt(8))
    net = Net(w, rng.standard_normal(8) * 10.0, reset=True)
    bound = 1 / math.sqrt(8)
    for p in net.layer.w_list:
        value = p.asnumpy()
        assert np.all(np.abs(value) <= bound) and np.std(value) > 0


def test_optimizer_from_trainable_params_trains_the_tuple(mode, rng):
    w, b = rng.standard_normal((3, 2)), rng.standard_normal(2)
    x, t = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32)
    net = Net(w, b)
    lr = 0.1
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=lr))
    ws, bs, s = w.astype(np.float32), b.astype(np.float32), np.float32(1.5)
    for _ in range(3):
        loss = step(Tensor(x), Tensor(t))
        z = x @ ws + bs
        y = z * s
        expected = np.mean((y - t) ** 2)
        dy = 2.0 * (y - t) / y.size
        dz = dy * s
        ws, bs, s = ws - lr * (x.T @ dz), bs - lr * dz.sum(0), s - lr * np.sum(dy * z)
        np.testing.assert_allclose(float(loss.asnumpy()), expected, rtol=1e-5)
    np.testing.assert_allclose(net.layer.w_list[0].asnumpy(), ws, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.layer.w_list[1].asnumpy(), bs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(net.scale.asnumpy()), s, rtol=1e-5)


def test_train_one_step_checkpoint_holds_each_parameter_once(mode, rng, tmp_path):
    net = Net(rng.standard_normal((3, 2)), rng.standard_normal(2))
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    step(Tensor(rng.standard_normal((4, 3)).astype(np.float32)), Tensor(np.zeros((4, 2), np.float32)))
    weights = ["scale", "layer.weight_l0", "layer.bias_l0"]
    expected = weights + ["learning_rate", "global_step"] + [f"moments.{n}" for n in weights]
    params = list(step.get_parameters())
    assert len(params) == len({id(p) for p in params}) == len(expected)
    assert sorted(p.name for p in params) == sorted(expected)
    path = str(tmp_path / "step.ckpt")
    opforge.save_checkpoint(step, path)
    loaded = opforge.load_checkpoint(path)
    assert sorted(loaded) == sorted(expected)
    np.testing.assert_array_equal(loaded["layer.weight_l0"].asnumpy(), net.layer.w_list[0].asnumpy())
    # the optimizer lists the trained Parameters too (MindSpore's), under their own names
    assert [p.name for p in opt.trainable_params()] == weights


def test_duplicate_names_raise_and_repeats_register_once():
    class Holder(nn.Cell):
        def __init__(self, params):
            super().__init__()
            self.weights = ParameterTuple(params)

    a = Parameter(Tensor(np.ones(2, np.float32)), name="w")
    b = Parameter(Tensor(np.zeros(2, np.float32)), name="w")
    with pytest.raises(ValueError, match=r"For 'Holder', the ParameterTuple 'weights' .*named 'w'"):
        Holder([a, b])
    holder = Holder([a, a])  # one object twice: registered once
    assert [n for n, _ in holder.parameters_and_names()] == ["w"] and len(holder.weights) == 2
    # default-named Parameters are renamed Parameter$1, Parameter$2 (MindSpore's)
    c, d = Parameter(Tensor(np.ones(1, np.float32))), Parameter(Tensor(np.ones(1, np.float32)))
    assert list(Holder([c, d]).parameters_dict()) == ["Parameter$1", "Parameter$2"]


def test_new_parameter_tuple_replaces_the_old(mode):
    class Holder(nn.Cell):
        def construct(self, x):
            return x * self.weights[0]

    holder = Holder()
    old = Parameter(Tensor(np.float32(2.0)), name="old")
    new = Parameter(Tensor(np.float32(3.0)), name="new")
    holder.weights = ParameterTuple([old])
    holder.weights = ParameterTuple([new])
    assert holder.weights[0] is new
    np.testing.assert_allclose(holder(Tensor(np.float32(2.0))).asnumpy(), 6.0)
    # as MindSpore's, the Parameters an earlier tuple registered stay registered
    assert list(holder.parameters_dict()) == ["old", "new"]
    holder.weights = None  # another value replaces the tuple
    assert holder.weights is None and "weights" not in holder._params_list
    holder.weights = ParameterTuple([new])
    del holder.weights
    assert not hasattr(holder, "weights") and "new" in holder.parameters_dict()


def test_auto_prefix_names_the_tuple_owner_not_the_borrower(rng):
    class Outer(nn.Cell):  # auto_prefix=True: names what is assigned to it
        def __init__(self, net, opt):
            super().__init__()
            self.network = net
            self.opt = opt  # its 'parameters' tuple lists the network's weights: they keep the network's names
            self.weights = ParameterTuple(net.trainable_params())

    net = Net(rng.standard_normal((3, 2)), rng.standard_normal(2))
    opt = nn.Adam(net.trainable_params())
    opt.again = ParameterTuple(net.trainable_params())  # a second tuple of the same weights changes nothing
    outer = Outer(net, opt)
    weights = ["network.scale", "network.layer.weight_l0", "network.layer.bias_l0"]
    assert [p.name for p in net.trainable_params()] == weights
    assert [p.name for p in outer.trainable_params()] == weights
    names = [p.name for p in outer.get_parameters()]
    assert len(names) == len(set(names)) and "opt.moment1.layer.weight_l0" in names


def test_insert_param_to_cell_checks_names():
    cell = nn.Cell()
    p = Parameter(Tensor(np.ones(1, np.float32)))
    with pytest.raises(KeyError, match="should not contain"):
        cell.insert_param_to_cell("a.b", p)
    cell.insert_param_to_cell("a.b", p, check_name_contain_dot=False)
    assert cell.parameters_dict()["a.b"] is p  # a default-named Parameter takes the name
    cell.extra = 1
    with pytest.raises(KeyError, match="already exists"):
        cell.insert_param_to_cell("extra", Parameter(Tensor(np.ones(1, np.float32)), name="extra"))
    with pytest.raises(KeyError):
        cell.insert_param_to_cell("", p)
