"""What the model zoo's BERT pretraining (tests/zoo/bert, tests/test_zoo_bert.py) needed of opforge, one focused
check each: ``mindspore.common.api``, ``ops.FloatStatus``, ``C.add_flags``, MultitypeFuncGraph's sparse kinds,
``Dataset.get_repeat_count``, a one-element sens of another shape, TrainOneStepCell's ``grad`` /
``grad_reducer`` / ``hyper_map``, ``Parameter.value()``, ``Cell.cls_name``, and MindSpore's Optimizer attributes
for optimizers users write (``is_group``, ``decay_flags``, ``optim_filter``, per-parameter ``weight_decay`` and a
``get_lr`` that steps the learning rate)."""

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
from opforge import Parameter, Tensor, nn, ops
from opforge.common import dtype as mstype
from opforge.ops import composite as C
from opforge.ops import functional as F
from opforge.ops import operations as P


def test_common_api_exports_jit():
    from opforge.common.api import jit

    assert jit is opforge.jit
    double = jit(lambda x: x * 2)
    np.testing.assert_array_equal(double(Tensor(np.arange(3, dtype=np.float32))).asnumpy(), [0, 2, 4])


# ---------------------------------------------------------------------------------------------
# FloatStatus


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_status_flags_nan_and_inf(dtype):
    status = P.FloatStatus()
    assert P.FloatStatus is ops.FloatStatus
    for values, want in (([1.0, -2.0, 3.0], 0.0), ([np.nan, 1.0, 2.0], 1.0), ([1.0, np.inf, 0.0], 1.0),
                         ([-np.inf, 1.0, 2.0], 1.0), ([65504.0, -65504.0, 0.0], 0.0)):  # fmt: skip
        x = np.array(values, dtype).reshape(3, 1)
        out = status(Tensor(x))
        assert out.shape == (1,) and out.dtype == mstype.float32
        ref = np.array([0.0 if np.all(np.isfinite(x)) else 1.0], np.float32)
        np.testing.assert_array_equal(out.asnumpy(), ref)
        assert ref[0] == want


def test_float_status_under_jit_and_hyper_map():
    grad_overflow = P.FloatStatus()
    _grad_overflow = C.MultitypeFuncGraph("_grad_overflow")

    @_grad_overflow.register("Tensor")
    def _(grad):
        return grad_overflow(grad)

    grads = (Tensor(np.ones(3, np.float32)), Tensor(np.array([1.0, np.inf], np.float32)))
    flags = C.HyperMap()(_grad_overflow, grads)
    assert [float(f.asnumpy()[0]) for f in flags] == [0.0, 1.0]
    jitted = opforge.jit(lambda x: grad_overflow(x))
    for x in (np.ones(4, np.float32), np.array([0, np.nan, 0, 0], np.float32)):
        np.testing.assert_array_equal(jitted(Tensor(x)).asnumpy(), grad_overflow(Tensor(x)).asnumpy())


def test_float_status_rejects_bad_inputs():
    with pytest.raises(TypeError, match="For 'FloatStatus', the 'x' must be a Tensor"):
        P.FloatStatus()(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="For 'FloatStatus', the dtype of 'x' must be float16, float32 or float64"):
        P.FloatStatus()(Tensor(np.ones(3, np.int32)))


# ---------------------------------------------------------------------------------------------
# add_flags, MultitypeFuncGraph kinds


def test_add_flags_records_and_returns_the_function():
    class Net(nn.Cell):
        @C.add_flags(has_effect=True)
        def construct(self, x):
            return x + 1

    assert Net.construct._func_graph_flags == {"has_effect": True}
    np.testing.assert_array_equal(Net()(Tensor(np.zeros(2, np.float32))).asnumpy(), [1, 1])

    def fn():
        return 1

    assert C.add_flags(fn, a=1, b=2) is fn and fn._func_graph_flags == {"a": 1, "b": 2}
    with pytest.raises(TypeError, match="For 'add_flags', the decorated object must be callable"):
        C.add_flags(3, x=1)


def test_multitype_func_graph_accepts_sparse_kinds_that_never_match():
    _opt = C.MultitypeFuncGraph("adam_opt")

    @_opt.register("Tensor", "RowTensor")
    def _sparse(lr, gradient):
        raise AssertionError("opforge's gradients are dense")

    @_opt.register("Tensor", "Tensor")
    def _dense(lr, gradient):
        return gradient * lr

    @_opt.register("Dictionary")
    def _dict(d):
        return sorted(d)

    out = _opt(Tensor(np.float32(2.0)), Tensor(np.ones(2, np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), [2, 2])
    assert _opt({"b": 1, "a": 2}) == ["a", "b"]
    for kind in ("COOTensor", "CSRTensor", "MapTensor"):
        _opt.register(kind)(lambda x: x)
    with pytest.raises(ValueError, match="type name 'Sparse' is not one of"):
        _opt.register("Sparse")


# ---------------------------------------------------------------------------------------------
# Datasets


def test_get_repeat_count():
    data = ds.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False)
    assert data.get_repeat_count() == 1 and data.batch(2).get_repeat_count() == 1
    assert data.repeat(3).get_repeat_count() == 3
    assert data.repeat(3).batch(2).map(lambda x: x, input_columns="x").get_repeat_count() == 3
    assert data.repeat(2).repeat(5).get_repeat_count() == 5  # the nearest repeat
    assert data.repeat().get_repeat_count() == -1 and data.repeat(-1).get_repeat_count() == -1


# ---------------------------------------------------------------------------------------------
# Autodiff and training cells


def test_sens_of_one_element_and_another_shape():
    """A [1] loss with a scalar loss scale as its sens (BERT's loss and loss-scale Parameter)."""
    w = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    fn = lambda x: ops.ReduceSum()(x * w, (0,)).reshape((1,))  # noqa: E731
    x = Tensor(np.array([3.0, 4.0], np.float32))
    grads = C.GradOperation(get_by_list=True, sens_param=True)(fn, opforge.ParameterTuple([w]))
    got = grads(x, Tensor(np.float32(8.0)))[0]
    np.testing.assert_allclose(got.asnumpy(), 8.0 * np.array([3.0, 4.0]), rtol=1e-6)
    got = grads(x, Tensor(np.full((1, 1), 8.0, np.float32)))[0]
    np.testing.assert_allclose(got.asnumpy(), 8.0 * np.array([3.0, 4.0]), rtol=1e-6)
    with pytest.raises(ValueError, match=r"sens of output 0 must match it \(Float32\[1\]\)"):
        grads(x, Tensor(np.ones(2, np.float32)))  # two elements
    with pytest.raises(ValueError, match=r"sens of output 0 must match it \(Float32\[1\]\)"):
        grads(x, Tensor(np.float64(8.0)))  # another dtype


class _Loss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="w")

    def construct(self, x):
        return ops.ReduceSum()(self.w * self.w * x, ()).reshape((1,))


class _Step(nn.TrainOneStepWithLossScaleCell):
    """A MindSpore-style subclass: its own construct through self.grad, self.grad_reducer, self.hyper_map."""

    def construct(self, x):
        loss = self.network(x)
        scaling_sens = self.scale_sense
        status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
        grads = self.grad(self.network, self.weights)(x, F.cast(scaling_sens, mstype.float32))
        grads = self.grad_reducer(grads)
        grads = self.hyper_map(F.partial(lambda s, g: g / s, scaling_sens), grads)
        cond = self.get_overflow_status(status, grads)
        if not self.process_loss_scale(cond):
            self.optimizer(grads)
        return loss, cond, scaling_sens.value()


def test_train_one_step_cell_attributes_for_subclasses():
    net = _Loss()
    step = _Step(net, nn.SGD(net.trainable_params(), 0.1), nn.FixedLossScaleUpdateCell(1024.0))
    assert isinstance(step.grad, C.GradOperation) and step.grad.sens_param and step.grad.get_by_list
    assert not step.grad_no_sens.sens_param and not step.reducer_flag
    grads = (Tensor(np.ones(2, np.float32)),)
    assert step.grad_reducer(grads)[0] is grads[0]  # the identity when not data parallel
    x = Tensor(np.array([3.0, 1.0], np.float32))
    loss, cond, scale = step(x)
    assert float(loss.asnumpy()[0]) == pytest.approx(3.0 + 4.0) and not bool(cond.asnumpy())
    assert float(scale.asnumpy()) == 1024.0
    np.testing.assert_allclose(net.w.asnumpy(), [1.0 - 0.1 * 6.0, -2.0 + 0.1 * 4.0], rtol=1e-6)


def test_parameter_value_is_a_differentiable_snapshot():
    p = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="p")
    v = p.value()
    assert type(v) is Tensor and v.shape == p.shape and v.dtype == p.dtype
    ops.Assign()(p, Tensor(np.array([5.0, 6.0], np.float32)))
    np.testing.assert_array_equal(v.asnumpy(), [1.0, 2.0])  # taken before the update
    g = C.GradOperation(get_by_list=True)(lambda x: ops.ReduceSum()(p.value() * x), opforge.ParameterTuple([p]))
    np.testing.assert_array_equal(g(Tensor(np.array([3.0, 4.0], np.float32)))[0].asnumpy(), [3.0, 4.0])


def test_cell_cls_name():
    assert nn.Dense(2, 3).cls_name == "Dense" and _Loss().cls_name == "_Loss"
    cell = nn.ReLU()
    cell.cls_name = "Mine"
    assert cell.cls_name == "Mine" and nn.ReLU().cls_name == "ReLU"


# ---------------------------------------------------------------------------------------------
# Optimizers users write, as MindSpore's base class sees them


def test_optimizer_attributes_with_and_without_groups():
    net = nn.SequentialCell(nn.Dense(2, 2), nn.LayerNorm((2,)))
    params = net.trainable_params()
    names = [p.name for p in params]
    plain = nn.SGD(params, 0.1, weight_decay=0.01)
    assert not plain.is_group and plain.weight_decay == 0.01 and plain.use_parallel is False
    assert plain.decay_flags == tuple("beta" not in n and "gamma" not in n for n in names)
    assert plain.optim_filter == (True,) * 4 and plain.param_length == 4
    decayed = ["bias" not in p.name and "beta" not in p.name for p in params]
    decay = [p for p, d in zip(params, decayed) if d]
    rest = [p for p, d in zip(params, decayed) if not d]
    groups = nn.SGD([{"params": decay, "weight_decay": 0.01}, {"params": rest}, {"order_params": params}], 0.1)
    assert groups.is_group and groups.decay_flags == tuple(decayed)
    assert all(isinstance(w, Tensor) and w.dtype == mstype.float32 for w in groups.weight_decay)
    np.testing.assert_allclose([float(w.asnumpy()) for w in groups.weight_decay],
                               [0.01 if d else 0.0 for d in decayed], rtol=1e-6)  # fmt: skip
    assert "weight_decay=0.01" in repr(groups)  # the first parameter's


class _PlainSGD(nn.Optimizer):
    """An optimizer written MindSpore's way: get_lr() in construct, a HyperMap over the parameters."""

    def __init__(self, params, learning_rate):
        super().__init__(learning_rate, params)
        self.assign = ops.Assign()

    def construct(self, gradients):
        lr = self.get_lr()
        if self.is_group_lr:
            return self.hyper_map(lambda r, p, g: self.assign(p, p - r * g), lr, self.parameters, gradients)
        return self.hyper_map(F.partial(lambda r, p, g: self.assign(p, p - r * g), lr), self.parameters, gradients)


def test_get_lr_in_a_users_construct_steps_the_schedule():
    w = Parameter(Tensor(np.array([1.0], np.float32)), name="w")
    opt = _PlainSGD([w], nn.PolynomialDecayLR(0.4, 0.0, 4, 1.0))
    rates = []
    for _ in range(3):
        before = float(w.asnumpy()[0])
        opt((Tensor(np.array([1.0], np.float32)),))
        rates.append(before - float(w.asnumpy()[0]))
    np.testing.assert_allclose(rates, [0.4, 0.3, 0.2], rtol=1e-6)  # 0.4 * (1 - step / 4)
    assert int(opt.global_step.asnumpy()) == 3
    assert float(opt.get_lr().asnumpy()) == pytest.approx(0.2)  # outside a step: only reads
    assert int(opt.global_step.asnumpy()) == 3


def test_get_lr_with_group_rates_gives_one_per_parameter():
    a = Parameter(Tensor(np.array([1.0], np.float32)), name="a")
    b = Parameter(Tensor(np.array([1.0], np.float32)), name="b")
    opt = _PlainSGD([{"params": [a], "lr": 0.5}, {"params": [b]}], 0.1)
    lrs = opt.get_lr()
    assert isinstance(lrs, tuple) and [float(r.asnumpy()) for r in lrs] == pytest.approx([0.5, 0.1])
    opt((Tensor(np.array([1.0], np.float32)), Tensor(np.array([1.0], np.float32))))
    np.testing.assert_allclose([a.asnumpy()[0], b.asnumpy()[0]], [0.5, 0.9], rtol=1e-6)
