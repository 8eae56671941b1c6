"""Mixed precision: loss-scale managers and cells (opforge/amp.py, opforge/nn/loss_scale.py) and float16
cells whose float32 Parameters are cast where their primitives read them (opforge/nn/mixed_precision.py)."""

from __future__ import annotations

import numpy as np
import pytest

import opforge as ms
from opforge import Tensor, nn, ops
from opforge.ops import composite as C
from opforge.ops import functional as F


def _f32(*shape, seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


@pytest.fixture
def graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_dynamic_manager_halves_on_overflow_and_doubles_after_a_clean_window():
    m = ms.DynamicLossScaleManager(init_loss_scale=16, scale_factor=2, scale_window=3)
    scales = []
    for overflow in (False, False, True, False, False, False, True):
        m.update_loss_scale(overflow)
        scales.append(m.get_loss_scale())
    assert scales == [16, 16, 8, 8, 8, 16, 8]
    cell = m.get_update_cell()
    assert isinstance(cell, nn.DynamicLossScaleUpdateCell) and cell.get_loss_scale() == 8


def test_managers_check_their_arguments():
    assert ms.FixedLossScaleManager(64, drop_overflow_update=False).get_update_cell() is None
    assert isinstance(ms.FixedLossScaleManager(64).get_update_cell(), nn.FixedLossScaleUpdateCell)
    with pytest.raises(ValueError, match="loss_scale"):
        ms.FixedLossScaleManager(0.5)
    with pytest.raises(ValueError, match="scale_factor"):
        ms.DynamicLossScaleManager(scale_factor=1)
    with pytest.raises(ValueError, match="scale_window"):
        ms.DynamicLossScaleManager(scale_window=0)
    with pytest.raises(TypeError, match="loss_scale_manager"):
        ms.Model(nn.Dense(2, 2), nn.MSELoss(), nn.SGD(nn.Dense(2, 2).trainable_params()), loss_scale_manager=2.0)


def _step(scale_sense, seed=0):
    net = nn.Dense(4, 3)
    for i, p in enumerate(net.trainable_params()):
        p.set_data(_f32(*p.shape, seed=i + seed))
    loss = nn.WithLossCell(net, nn.MSELoss())
    return net, nn.TrainOneStepWithLossScaleCell(loss, nn.SGD(net.trainable_params(), 0.1), scale_sense)


def test_a_scaled_step_updates_as_an_unscaled_one():
    x, y = _f32(5, 4, seed=7), _f32(5, 3, seed=8)
    net, step = _step(Tensor(np.float32(1024)))
    loss, overflow, scale = step(x, y)
    plain = nn.Dense(4, 3)
    for i, p in enumerate(plain.trainable_params()):
        p.set_data(_f32(*p.shape, seed=i))
    nn.TrainOneStepCell(nn.WithLossCell(plain, nn.MSELoss()), nn.SGD(plain.trainable_params(), 0.1))(x, y)
    for a, b in zip(net.trainable_params(), plain.trainable_params()):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    assert not bool(overflow.asnumpy()) and float(scale.asnumpy()) == 1024.0


def test_an_overflowing_step_is_skipped_and_the_dynamic_scale_falls():
    net, step = _step(nn.DynamicLossScaleUpdateCell(2.0**10, 2, 1000))
    before = [p.asnumpy().copy() for p in net.trainable_params()]
    bad = Tensor(np.full((5, 4), np.inf, np.float32))
    loss, overflow, scale = step(bad, _f32(5, 3))
    assert bool(overflow.asnumpy()) and float(scale.asnumpy()) == 1024.0
    assert float(step.scale_sense.asnumpy()) == 512.0
    for p, b in zip(net.trainable_params(), before):
        np.testing.assert_array_equal(p.asnumpy(), b)
    loss, overflow, scale = step(_f32(5, 4), _f32(5, 3))
    assert not bool(overflow.asnumpy()) and float(scale.asnumpy()) == 512.0
    assert any(not np.array_equal(p.asnumpy(), b) for p, b in zip(net.trainable_params(), before))
    step.set_sense_scale(Tensor(np.float32(8)))
    assert float(step.scale_sense.asnumpy()) == 8.0
    with pytest.raises(TypeError, match="scale_sense"):
        nn.TrainOneStepWithLossScaleCell(step.network, step.optimizer, 4.0)


def test_a_float16_cell_reads_its_float32_weights_cast_and_their_gradients_stay_float32():
    conv = nn.Conv2d(3, 4, 3).to_float(ms.float16)
    net = ms.amp.auto_mixed_precision(
        nn.SequentialCell(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.Dense(256, 2)), "O2"
    )
    x = _f32(2, 3, 8, 8)
    assert conv(x).dtype == ms.float16 and conv.weight.dtype == ms.float32
    net.set_train()
    out = net(x)
    assert out.dtype == ms.float32
    grads = ms.grad(lambda t: net(t).sum(), None, net.trainable_params())(x)
    assert all(g.dtype == ms.float32 for g in grads) and all(np.isfinite(g.asnumpy()).all() for g in grads)
    # O2 keeps the BatchNorm in float32; O3 runs it in float16 too
    assert net._backbone._cells["1"]._to_float == ms.float32


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_model_trains_in_float16_with_a_dynamic_loss_scale(mode, request):
    if mode == "graph":
        request.getfixturevalue("graph_mode")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
    net = nn.SequentialCell(nn.Dense(6, 16), nn.ReLU(), nn.Dense(16, 2))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    manager = ms.DynamicLossScaleManager(2.0**12, 2, 50)
    model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={"accuracy"},
                     amp_level="O2", loss_scale_manager=manager)  # fmt: skip
    assert isinstance(model.train_network, nn.TrainOneStepWithLossScaleCell)
    first = model.eval(data)["accuracy"]
    model.train(8, data)
    assert model.eval(data)["accuracy"] > max(first, 0.8)
    assert net._cells["0"]._to_float == ms.float16


def test_build_train_network_is_the_step_model_builds():
    net = nn.Dense(3, 2)
    step = ms.amp.build_train_network(
        net,
        nn.SGD(net.trainable_params(), 0.1),
        nn.MSELoss(),
        level="O2",
        loss_scale_manager=ms.FixedLossScaleManager(),
    )
    assert isinstance(step, nn.TrainOneStepWithLossScaleCell) and net._to_float == ms.float16
    loss, overflow, scale = step(_f32(4, 3), _f32(4, 2))
    assert loss.dtype == ms.float32 and not bool(overflow.asnumpy()) and float(scale.asnumpy()) == 128.0
    other = nn.Dense(3, 2)
    assert type(ms.amp.build_train_network(other, nn.SGD(other.trainable_params(), 0.1))) is nn.TrainOneStepCell


def test_depend_and_print_as_mindspore(capsys):
    x = _f32(2)
    assert ops.depend(x, ops.Print()(x)) is x
    ops.print_("step", Tensor(np.array([1.5], np.float32)))
    assert "step" in capsys.readouterr().out


def test_a_bert_style_loss_scale_cell_written_with_the_mindspore_helpers():
    """A subclass's own construct, as MindSpore's model zoo writes one: self.grad with the scale as the
    sensitivity, HyperMap to unscale and clip, then the overflow helpers."""
    unscale = C.MultitypeFuncGraph("unscale")

    @unscale.register("Tensor", "Tensor")
    def _(scale, grad):
        return grad * ops.Reciprocal()(scale)

    class Step(nn.TrainOneStepWithLossScaleCell):
        def construct(self, x, y):
            loss = self.network(x, y)
            status, scale = self.start_overflow_check(loss, self.scale_sense)
            grads = self.grad(self.network, self.weights)(x, y, ops.Cast()(scale, ms.float32))
            grads = C.HyperMap()(F.partial(unscale, scale), grads)
            grads = C.HyperMap()(lambda g: nn.ClipByNorm()(g, F.tuple_to_array((1.0,))), grads)
            overflow = self.process_loss_scale(self.get_overflow_status(status, grads))
            if not overflow:
                self.optimizer(grads)
            return loss, overflow

    net, step = _step(Tensor(np.float32(64)))
    custom = Step(step.network, step.optimizer, nn.DynamicLossScaleUpdateCell(64.0, 2, 10))
    before = [p.asnumpy().copy() for p in net.trainable_params()]
    loss, overflow = custom(_f32(5, 4), _f32(5, 3))
    assert not overflow and F.dtype(loss) == ms.float32
    assert all(not np.array_equal(p.asnumpy(), b) for p, b in zip(net.trainable_params(), before))
    loss, overflow = custom(Tensor(np.full((5, 4), np.inf, np.float32)), _f32(5, 3))
    assert overflow and float(custom.scale_sense.asnumpy()) == 32.0


def test_clip_by_norm_and_tuple_to_array():
    x = Tensor(np.array([[3.0, 4.0], [0.0, 0.0]], np.float32))
    np.testing.assert_allclose(nn.ClipByNorm()(x, Tensor(np.float32(1.0))).asnumpy(), x.asnumpy() / 5, rtol=1e-6)
    np.testing.assert_allclose(nn.ClipByNorm(axis=1)(x, 10.0).asnumpy(), x.asnumpy(), rtol=1e-6)
    assert F.tuple_to_array((1, 2)).dtype == ms.int64 and F.tuple_to_array((1.0, 2)).dtype == ms.float32
    with pytest.raises(TypeError, match="tuple_to_array"):
        F.tuple_to_array([1, 2])


def _lamb_reference(w, grads, lr, weight_decay, beta1=0.9, beta2=0.999, eps=1e-6):
    w, m, v = w.astype(np.float64), np.zeros_like(w, np.float64), np.zeros_like(w, np.float64)
    for t, g in enumerate(grads, 1):
        m, v = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g
        u = (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps) + weight_decay * w
        wn, un = np.linalg.norm(w), np.linalg.norm(u)
        w = w - lr * (np.clip(wn / un, 0, 10) if wn > 0 and un > 0 else 1.0) * u
    return w


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lamb_follows_its_formula_eagerly_and_traced(mode, request):
    """nn.Lamb (BERT's optimizer, MindSpore's nn.Lamb): built from primitives, so a trace replays it."""
    if mode == "graph":
        request.getfixturevalue("graph_mode")
    rng = np.random.default_rng(0)
    w0, zero = rng.standard_normal((3, 4)).astype(np.float32), np.zeros(4, np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(4)]
    w, b = ms.Parameter(Tensor(w0.copy()), name="w"), ms.Parameter(Tensor(zero.copy()), name="b")
    opt = nn.Lamb([w, b], learning_rate=0.05, weight_decay=0.01)
    for g in grads:
        opt((Tensor(g), Tensor(zero)))  # b: a zero weight and gradient keep a trust ratio of 1, and stay 0
    np.testing.assert_allclose(w.asnumpy(), _lamb_reference(w0, grads, 0.05, 0.01), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(b.asnumpy(), zero)
    assert int(opt.global_step.asnumpy()) == 4
