"""MindSpore's amp levels (opforge/amp.py, opforge/nn/amp_levels.py, opforge/nn/amp_auto.py): which operators
compute in which dtype at O0, O1, O2, O3 and auto (recorded below every cast), what each level's cells output,
a training step per level, build_train_network's and Model's rules (the float32 loss cell, keep_batchnorm_fp32,
the default loss scale), custom_mixed_precision's lists, the functional loss scalers (opforge/amp_loss_scaler.py)
against NumPy, and bad arguments."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import opforge as ms
from opforge import Tensor, amp, nn, ops
from opforge.dispatch.interpreter import Interpreter
from opforge.nn.amp_levels import OutputTo16, OutputTo32
from opforge.testing import numeric_grad

F16, F32 = ms.float16, ms.float32
LEVELS = ["O0", "O1", "O2", "O3", "auto"]


def _dtypes(a):
    return tuple(_dtypes(t) for t in a) if isinstance(a, (tuple, list)) else getattr(a, "dtype", None)


class _Recorder(Interpreter):
    """Installed outside the network: sees each primitive call with the inputs it computes on (after amp's casts)."""

    def __init__(self, names):
        self.names, self.calls = names, []

    def process_primitive(self, prim, args):
        if prim.name in self.names:
            self.calls.append((prim.name, tuple(_dtypes(a) for a in args)))
        return self.parent.process_primitive(prim, args)


class Net(nn.Cell):
    """Conv2d + BatchNorm2d + ReLU (the cell and the primitive) + Dense, recording what each step outputs."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="valid", weight_init="normal")
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.relu_op = ops.ReLU()
        self.flatten = nn.Flatten()
        self.dense = nn.Dense(4 * 4 * 4, 2)
        object.__setattr__(self, "seen", {})

    def construct(self, x):
        for name, step in (("conv", self.conv), ("bn", self.bn), ("relu", self.relu), ("relu_op", self.relu_op)):
            x = step(x)
            self.seen[name] = x.dtype
        x = self.dense(self.flatten(x))
        self.seen["dense"] = x.dtype
        return x


def _x(n=4, seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal((n, 3, 6, 6)).astype(np.float32))


def _run(level, train=True):
    ms.set_seed(1)
    net = Net().set_train(train)
    model = amp.auto_mixed_precision(net, level)
    recorder = _Recorder({"Conv2D", "BatchNorm", "ReLU", "MatMul", "BiasAdd"})
    with recorder:
        out = model(_x())
    return net, model, out, recorder.calls


# (operator, input dtypes) per level: what MindSpore's level computes in
COMPUTED = {
    "O0": [("Conv2D", (F32, F32)), ("BatchNorm", (F32,) * 5), ("ReLU", (F32,)), ("ReLU", (F32,)),
           ("MatMul", (F32, F32)), ("BiasAdd", (F32, F32))],
    # O1: the white-list cells (Conv2d, Dense) and operator (ops.ReLU) in float16, the rest in float32
    "O1": [("Conv2D", (F16, F16)), ("BatchNorm", (F32,) * 5), ("ReLU", (F32,)), ("ReLU", (F16,)),
           ("MatMul", (F16, F16)), ("BiasAdd", (F16, F16))],
    # O2: everything in float16 but the BatchNorm cell, in float32
    "O2": [("Conv2D", (F16, F16)), ("BatchNorm", (F32,) * 5), ("ReLU", (F16,)), ("ReLU", (F16,)),
           ("MatMul", (F16, F16)), ("BiasAdd", (F16, F16))],
    # O3: BatchNorm too gets a float16 x; its parameters stay float32 (MindSpore's RW_WRITE inputs in training)
    "O3": [("Conv2D", (F16, F16)), ("BatchNorm", (F16, F32, F32, F32, F32)), ("ReLU", (F16,)), ("ReLU", (F16,)),
           ("MatMul", (F16, F16)), ("BiasAdd", (F16, F16))],
    # auto: Conv2D and MatMul in float16, BatchNorm in float32, ReLU as it comes, BiasAdd promoted
    "auto": [("Conv2D", (F16, F16)), ("BatchNorm", (F32,) * 5), ("ReLU", (F32,)), ("ReLU", (F32,)),
             ("MatMul", (F16, F16)), ("BiasAdd", (F32, F32))],
}  # fmt: skip

# what each step of Net outputs (as its construct sees it), and the network's output
OUTPUTS = {
    "O0": ({"conv": F32, "bn": F32, "relu": F32, "relu_op": F32, "dense": F32}, F32),
    "O1": ({"conv": F32, "bn": F32, "relu": F32, "relu_op": F32, "dense": F32}, F32),
    "O2": ({"conv": F16, "bn": F16, "relu": F16, "relu_op": F16, "dense": F16}, F32),
    "O3": ({"conv": F16, "bn": F16, "relu": F16, "relu_op": F16, "dense": F16}, F32),
    "auto": ({"conv": F16, "bn": F32, "relu": F32, "relu_op": F32, "dense": F32}, F32),
}


@pytest.mark.parametrize("level", LEVELS)
def test_each_level_computes_each_operator_in_mindsporess_dtype(level):
    net, model, out, calls = _run(level)
    assert calls == COMPUTED[level]
    seen, final = OUTPUTS[level]
    assert net.seen == seen and out.dtype == final
    assert all(p.dtype == F32 for p in net.trainable_params())  # the weights stay float32
    assert np.isfinite(out.asnumpy()).all()


def test_o3_batchnorm_in_evaluation_reads_its_statistics_in_float16():
    net, _, out, calls = _run("O3", train=False)
    assert ("BatchNorm", (F16,) * 5) in calls and net.seen["bn"] == F16
    # training: float16 y from float32 statistics, which update in float32
    net, _, _, _ = _run("O3")
    assert net.bn.moving_mean.dtype == F32 and np.abs(net.bn.moving_mean.asnumpy()).sum() > 0


def test_each_level_wraps_as_mindspore():
    for level, kind in (("O0", Net), ("O1", Net), ("O2", OutputTo32), ("O3", OutputTo32)):
        net = Net()
        got = amp.auto_mixed_precision(net, level)
        assert type(got) is kind
        assert level == "O0" or got._amp_level == level
    net = Net()
    amp.auto_mixed_precision(net, "O1")
    assert isinstance(net._cells["conv"], OutputTo32) and net._cells["conv"]._backbone._to_float == F16
    assert net._cells["bn"].__dict__.get("_to_float") is None and "relu" in net._cells  # the rest untouched
    net = Net()
    amp.auto_mixed_precision(net, "O2")
    kept = net._cells["bn"]
    assert isinstance(kept, OutputTo16) and kept._to_float == F32 and kept._backbone._to_float == F32
    assert net._to_float == F16 and net._cells["dense"]._to_float == F16
    # a white-list cell as the network itself comes back wrapped; parameter names never change
    dense = nn.Dense(3, 2)
    wrapped = amp.auto_mixed_precision(dense, "O1", ms.bfloat16)
    assert isinstance(wrapped, OutputTo32) and dense._to_float == ms.bfloat16
    assert [p.name for p in wrapped.get_parameters()] == ["weight", "bias"]
    assert wrapped(Tensor(np.ones((2, 3), np.float32))).dtype == F32


def test_o1_matches_a_numpy_reference_with_float16_rounding_and_its_gradient():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    dense = nn.Dense(4, 3)
    net = amp.auto_mixed_precision(nn.SequentialCell(dense, nn.ReLU()), "O1")
    w, b = dense.weight.asnumpy(), dense.bias.asnumpy()

    def ref(x64, half=True):
        r = (lambda a: a.astype(np.float16).astype(np.float64)) if half else (lambda a: a)
        return np.maximum(r(r(x64) @ r(w.astype(np.float64)).T + r(b.astype(np.float64))), 0.0)

    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref(x.astype(np.float64)), rtol=2e-3, atol=2e-3)
    grad = ms.grad(lambda t: net(t).sum())(Tensor(x))
    assert grad.dtype == F32
    want = numeric_grad(lambda a: ref(a, half=False).sum(), x.astype(np.float64), eps=1e-4)
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-2, atol=1e-2)


def test_o1_white_list_operator_casts_and_keeps_its_attributes():
    class Cell(nn.Cell):
        def __init__(self):
            super().__init__()
            self.matmul = ops.MatMul(transpose_b=True)
            self.w = ms.Parameter(Tensor(np.full((2, 3), 0.5, np.float32)), name="w")

        def construct(self, x):
            return self.matmul(x, self.w)

    cell = copy.deepcopy(amp.auto_mixed_precision(Cell(), "O1"))  # (a copy keeps the wrapper)
    assert cell.matmul.transpose_b is True and cell.matmul.name == "MatMul"
    recorder = _Recorder({"MatMul"})
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    with recorder:
        out = cell(x)
    assert recorder.calls == [("MatMul", (F16, F16))] and out.dtype == F32
    np.testing.assert_allclose(out.asnumpy(), np.arange(6).reshape(2, 3).sum(1, keepdims=True) * 0.5 * np.ones((1, 2)))
    (grad,) = ms.grad(lambda t: cell(t).sum(), None, [cell.w])(x)
    assert grad.dtype == F32
    np.testing.assert_allclose(grad.asnumpy(), np.tile(np.arange(6).reshape(2, 3).sum(0), (2, 1)))


def test_o1_leaves_a_cell_the_user_set_to_float_alone():
    net = Net()
    dense, conv = net.dense.to_float(F16), net.conv.to_float(ms.bfloat16)
    amp.auto_mixed_precision(net, "O1")
    assert net._cells["dense"] is dense and dense._to_float == F16  # the user's to_float(float16): not wrapped
    assert net._cells["conv"]._backbone is conv and conv._to_float == F16  # another dtype: O1's
    whole = Net().to_float(F16)
    assert amp.auto_mixed_precision(whole, "O1") is whole and isinstance(whole._cells["conv"], nn.Conv2d)


@pytest.mark.parametrize("level", ["O1", "O3", "auto"])
def test_graph_mode_equals_pynative(level):
    _, _, eager, _ = _run(level, train=False)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        _, _, graph, _ = _run(level, train=False)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert graph.dtype == eager.dtype
    np.testing.assert_allclose(graph.asnumpy(), eager.asnumpy(), rtol=1e-3, atol=1e-3)


def _data():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 3, 6, 6)).astype(np.float32)
    return Tensor(x), Tensor((x.mean(axis=(1, 2, 3)) > 0).astype(np.int32))


def _losses(step, steps=6):
    x, y = _data()
    out = [step(x, y) for _ in range(steps)]
    return [float((o[0] if isinstance(o, tuple) else o).asnumpy()) for o in out]


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "O3"])
def test_a_training_step_at_each_level_decreases_the_loss(level):
    ms.set_seed(2)
    net = Net()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = amp.build_train_network(net, nn.Momentum(net.trainable_params(), 0.05, 0.9), loss, level=level,
                                   loss_scale_manager=None)  # fmt: skip
    assert type(step) is nn.TrainOneStepCell
    losses = _losses(step)
    assert all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    assert all(p.dtype == F32 for p in net.trainable_params())
    # the loss cell: float16 models compute their loss in float32
    assert (type(step.network).__name__ == "_WithFloat32Loss") == (level in ("O2", "O3"))


def test_a_training_step_at_auto_decreases_the_loss():
    ms.set_seed(2)
    net = Net()
    loss = nn.WithLossCell(amp.auto_mixed_precision(net, "auto"), nn.SoftmaxCrossEntropyWithLogits(True, "mean"))
    losses = _losses(nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.05, 0.9)))
    assert losses[-1] < losses[0], losses


def test_build_train_network_follows_mindspores_configuration():
    net = Net()
    opt = nn.SGD(net.trainable_params(), 0.01)
    step = amp.build_train_network(net, opt, nn.SoftmaxCrossEntropyWithLogits(True, "mean"), level="O2")
    # O2's default: a DynamicLossScaleManager (2**24, 2, 2000)
    assert isinstance(step, nn.TrainOneStepWithLossScaleCell) and float(step.scale_sense.asnumpy()) == 2.0**24
    assert isinstance(net._cells["bn"], OutputTo16) and net._to_float == F16
    loss, overflow, _ = step(*_data())
    assert loss.dtype == F32 and bool(overflow.asnumpy())  # 2**24 overflows float16: the step is skipped
    # keep_batchnorm_fp32=False at O2 runs as O3; cast_model_type=float32 leaves the network as it is
    net = Net()
    amp.build_train_network(net, nn.SGD(net.trainable_params()), level="O2", keep_batchnorm_fp32=False)
    assert isinstance(net._cells["bn"], nn.BatchNorm2d) and net.bn._to_float == F16
    net = Net()
    amp.build_train_network(net, nn.SGD(net.trainable_params()), level="O3", cast_model_type=F32)
    assert net.__dict__.get("_to_float") is None
    net = Net()
    amp.build_train_network(net, nn.SGD(net.trainable_params()), level="O3", keep_batchnorm_fp32=True)
    assert isinstance(net._cells["bn"], OutputTo16)


def test_model_at_o2_and_o3_casts_the_network_in_place_and_evaluates_in_float32():
    x, y = _data()
    data = ms.dataset.NumpySlicesDataset({"x": x.asnumpy(), "y": y.asnumpy()}, shuffle=False).batch(4)
    for level, kwargs, bn_input in (("O2", {}, F32), ("O3", {}, F16), ("O2", {"keep_batchnorm_fp32": False}, F16)):
        net = Net()
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.05, 0.9), metrics={"acc"},
                         amp_level=level, loss_scale_manager=None, **kwargs)  # fmt: skip
        assert model.eval_network.add_cast_fp32 and model.predict_network is net
        recorder = _Recorder({"BatchNorm"})
        with recorder:
            out = model.predict(x)
        assert recorder.calls[0][1][0] == bn_input and out.dtype == F16  # MindSpore predicts in float16
        model.train(2, data)
        assert 0.0 <= model.eval(data)["acc"] <= 1.0
    net = Net()
    model = ms.Model(
        net, nn.SoftmaxCrossEntropyWithLogits(True, "mean"), nn.SGD(net.trainable_params()), amp_level="O1"
    )
    assert isinstance(net._cells["conv"], OutputTo32) and model.predict(x).dtype == F32
    assert not model.eval_network.add_cast_fp32


def test_custom_mixed_precision_lists():
    net = Net()
    amp.custom_mixed_precision(net, white_list=[nn.Dense])
    recorder = _Recorder({"Conv2D", "MatMul"})
    with recorder:
        net(_x())
    assert recorder.calls == [("Conv2D", (F32, F32)), ("MatMul", (F16, F16))]
    net = Net()
    got = amp.custom_mixed_precision(net, black_list=[nn.BatchNorm2d, nn.Dense], dtype=ms.bfloat16)
    recorder = _Recorder({"Conv2D", "BatchNorm", "MatMul"})
    with recorder:
        out = got(_x())
    assert recorder.calls == [("Conv2D", (ms.bfloat16,) * 2), ("BatchNorm", (F32,) * 5), ("MatMul", (F32, F32))]
    assert out.dtype == F32 and net.seen["bn"] == ms.bfloat16
    white = amp.get_white_list()
    white.append(nn.Flatten)
    assert nn.Flatten not in amp.get_white_list()  # a copy
    assert amp.get_black_list() == [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm]
    for cls in (nn.Conv2d, nn.Dense, nn.LSTMCell, nn.GRUCell, ops.Conv2D, ops.MatMul, ops.BatchMatMul, ops.ReLU):
        assert cls in amp.get_white_list()


def test_auto_level_runs_functions_and_keeps_low_precision_outputs():
    def f(x, y):
        return ops.MatMul()(x, y)

    x = Tensor(np.ones((2, 2), np.float32))
    assert amp.auto_mixed_precision(f, "auto")(x, x).dtype == F16
    assert amp.auto_mixed_precision(lambda t: ops.log(t), "auto")(Tensor(np.ones(2, np.float16))).dtype == F32
    bias = ops.BiasAdd()
    out = amp.auto_mixed_precision(lambda a, b: bias(a, b), "auto")(
        Tensor(np.ones((2, 3), np.float16)), Tensor(np.ones(3, np.float32))
    )  # noqa: E501
    assert out.dtype == F32  # promoted
    concat = amp.auto_mixed_precision(lambda a, b: ops.Concat()((a, b)), "auto")
    recorder = _Recorder({"Concat"})
    with recorder:
        concat(Tensor(np.ones((1, 2), np.float16)), Tensor(np.ones((1, 2), np.float32)))
    assert recorder.calls[0][1][0] == (F32, F32)


def test_loss_scalers_match_numpy():
    static = amp.StaticLossScaler(1024)
    loss = Tensor(np.array([1.5], np.float32))
    np.testing.assert_array_equal(static.scale(loss).asnumpy(), [1536.0])
    grads = (Tensor(np.array([1.5, 1.0], np.float16)), Tensor(np.array([1.2], np.float16)))
    unscaled = static.unscale(grads)
    assert isinstance(unscaled, tuple) and unscaled[0].dtype == F16
    np.testing.assert_allclose(unscaled[1].asnumpy(), np.float16(1.2) * np.float16(1 / 1024), rtol=1e-3)
    assert static.adjust(Tensor(True)) is False and float(static.scale_value.asnumpy()) == 1024.0

    dynamic = amp.DynamicLossScaler(scale_value=2**10, scale_factor=2, scale_window=2)
    scale, counter = 2.0**10, 0  # the NumPy reference of adjust
    for finite in (False, True, True, True, False, True, True):
        assert dynamic.adjust(Tensor(np.array(finite))) is True
        if finite:
            scale = scale * 2 if counter == 1 and np.isfinite(np.float32(scale * 2)) else scale
            counter = (counter + 1) % 2
        else:
            scale, counter = max(1.0, scale / 2), 0
        assert float(dynamic.scale_value.asnumpy()) == scale and int(dynamic.counter.asnumpy()) == counter
    # the docs' example: a NaN gradient halves the scale
    dynamic = amp.DynamicLossScaler(scale_value=2**10, scale_factor=2, scale_window=1)
    grads = (Tensor(np.array([np.log(-1), 1.0], np.float16)), Tensor(np.array([0.2], np.float16)))
    assert dynamic.adjust(amp.all_finite(dynamic.unscale(grads))) and float(dynamic.scale_value.asnumpy()) == 512.0
    # scale is differentiable: d(sum(scale(x)))/dx = scale
    x = np.random.default_rng(0).standard_normal(3)
    got = ms.grad(lambda t: dynamic.scale(t).sum())(Tensor(x))
    np.testing.assert_allclose(got.asnumpy(), numeric_grad(lambda a: (a * 512.0).sum(), x), rtol=1e-6)


def test_all_finite():
    ok = (Tensor(np.ones(3, np.float32)), Tensor(np.array([1], np.int32)))
    assert amp.all_finite(ok).dtype == ms.bool_ and bool(amp.all_finite(ok).asnumpy())
    for bad in (np.inf, -np.inf, np.nan):
        assert not bool(amp.all_finite([Tensor(np.array([0.0, bad], np.float32))]).asnumpy())
    assert bool(ms.jit(amp.all_finite)(ok).asnumpy())
    with pytest.raises(ValueError, match="all_finite"):
        amp.all_finite(())
    with pytest.raises(ValueError, match="all_finite"):
        amp.all_finite(None)
    with pytest.raises(TypeError, match="all_finite"):
        amp.all_finite((1.0,))


def test_bad_arguments():
    with pytest.raises(ValueError, match="'amp_level' must be one of"):
        amp.auto_mixed_precision(Net(), "O4")
    with pytest.raises(ValueError, match="'amp_level'"):
        amp.auto_mixed_precision(Net(), 2)
    for dtype in (F32, ms.float64, "float16"):
        with pytest.raises(ValueError, match="'dtype' must be mstype.float16 or mstype.bfloat16"):
            amp.auto_mixed_precision(Net(), "O2", dtype)
    with pytest.raises(TypeError, match="'network' must be a Cell"):
        amp.auto_mixed_precision(lambda x: x, "O2")
    with pytest.raises(TypeError, match="'network' must be a Cell"):
        amp.custom_mixed_precision(lambda x: x, white_list=[nn.Dense])
    with pytest.raises(ValueError, match="one of the 'white_list' and the 'black_list'"):
        amp.custom_mixed_precision(Net())
    with pytest.raises(ValueError, match="cannot both"):
        amp.custom_mixed_precision(Net(), white_list=[nn.Dense], black_list=[nn.BatchNorm2d])
    with pytest.raises(ValueError, match="'dtype'"):
        amp.custom_mixed_precision(Net(), white_list=[nn.Dense], dtype=F32)
    with pytest.raises(TypeError, match="'white_list' must be a list"):
        amp.custom_mixed_precision(Net(), white_list=(nn.Dense,))
    with pytest.raises(TypeError, match="must be a class"):
        amp.custom_mixed_precision(Net(), white_list=[nn.Dense(2, 2)])
    with pytest.raises(TypeError, match="a Cell or a Primitive class"):
        amp.custom_mixed_precision(Net(), white_list=[int])
    with pytest.raises(TypeError, match="must be a Cell class"):
        amp.custom_mixed_precision(Net(), black_list=[ops.MatMul])
    opt = nn.SGD(Net().trainable_params())
    with pytest.raises(ValueError, match="'level' must be one of"):
        amp.build_train_network(Net(), opt, level="O5")
    with pytest.raises(TypeError, match="'level' must be a str"):
        amp.build_train_network(Net(), opt, level=3)
    with pytest.raises(ValueError, match="'boost_level'"):
        amp.build_train_network(Net(), opt, boost_level="O3")
    with pytest.raises(ValueError, match="'auto' is only supported when the 'device_target' is GPU or Ascend"):
        amp.build_train_network(Net(), opt, level="auto")
    with pytest.raises(ValueError, match="keyword arguments"):
        amp.build_train_network(Net(), opt, level="O2", keep_bn_fp32=True)
    with pytest.raises(TypeError, match="'keep_batchnorm_fp32' must be bool"):
        amp.build_train_network(Net(), opt, level="O2", keep_batchnorm_fp32=1)
    with pytest.raises(TypeError, match="'cast_model_type'"):
        amp.build_train_network(Net(), opt, level="O2", cast_model_type=ms.bfloat16)
    with pytest.raises(TypeError, match="'loss_scale_manager'"):
        amp.build_train_network(Net(), opt, level="O2", loss_scale_manager=128)
    with pytest.raises(TypeError, match="'optimizer' must be an Optimizer"):
        amp.build_train_network(Net(), None)
    with pytest.raises(ValueError, match="'amp_level' must be one of"):
        ms.Model(Net(), nn.MSELoss(), opt, amp_level="O9")
    with pytest.raises(ValueError, match="needs an 'optimizer'"):
        ms.Model(Net(), nn.MSELoss(), amp_level="O2")
    with pytest.raises(ValueError, match="keyword arguments"):
        ms.Model(Net(), nn.MSELoss(), opt, amp_level="O2", cast_model_type=F16)
    with pytest.raises(ValueError, match="'loss_scale_manager' needs an 'optimizer'"):
        ms.Model(Net(), nn.MSELoss(), loss_scale_manager=ms.FixedLossScaleManager())
    with pytest.raises(TypeError, match="add_cast_fp32"):
        nn.WithEvalCell(Net(), nn.MSELoss(), add_cast_fp32=1)
    with pytest.raises(ValueError, match="'scale_value' must be at least 1"):
        amp.StaticLossScaler(0.5)
    with pytest.raises(TypeError, match="'scale_value' must be a float or an int"):
        amp.DynamicLossScaler("8", 2, 10)
    with pytest.raises(ValueError, match="'scale_window' must be a positive int"):
        amp.DynamicLossScaler(8, 2, 0)
    with pytest.raises(TypeError, match="'scale_factor' must be an int"):
        amp.DynamicLossScaler(8, 1.5, 10)
    with pytest.raises(TypeError, match="'grads_finite' must be a bool Tensor"):
        amp.DynamicLossScaler(8, 2, 10).adjust(True)
    with pytest.raises(TypeError, match="'inputs' must be a Tensor"):
        amp.StaticLossScaler(8).scale(2.0)
    with pytest.raises(TypeError):
        amp.LossScaler()  # abstract
