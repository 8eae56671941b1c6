"""opforge.jit and graph mode: trace once per signature, replay the recorded plans.

The sweep part is generated from the kernel registry: every operator's first CPU kernel is traced
on its sweep record's samples and replayed on fresh inputs of the same signature, and the replay
must equal the eager call.
"""

from __future__ import annotations

import threading
import warnings
import weakref

import numpy as np
import pytest
from helpers import assert_same_outputs, called_primitive
from op_db import OP_DB
from test_op_sweep import KERNELS

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Parameter, Tensor, nn, ops
from opforge import dtype as mstype
from opforge.kernels import KernelAttr, register_kernel
from opforge.primitives import Primitive
from opforge.testing import _tensors
from opforge.tools.profiler import Profile


@pytest.fixture
def graph_mode():
    opforge.set_context(mode=GRAPH_MODE)
    try:
        yield
    finally:
        opforge.set_context(mode=PYNATIVE_MODE)


def _f32(*shape, seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


# -- functions ----------------------------------------------------------------------------------


def test_a_replay_runs_no_python_of_the_function_and_equals_eager():
    calls = []

    def f(x, y):
        calls.append(1)
        z = x * y + 1.0
        return ops.ReLU()(z) - y, ops.ReduceSum()(z, 1)

    jf = opforge.jit(f)
    x, y = _f32(4, 3), _f32(4, 3, seed=1)
    first = jf(x, y)
    for seed in range(3):
        x2 = _f32(4, 3, seed=10 + seed)
        got, want = jf(x2, y), f(x2, y)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
    assert len(calls) == 1 + 3  # the trace, then one eager reference per loop; no replay ran f
    assert jf.traced == 1 and len(jf.traces()[0]) == 5
    assert isinstance(first, tuple) and len(first) == 2


def test_a_new_signature_traces_again_and_the_cache_is_bounded():
    jf = opforge.jit(lambda x, k: x * k, max_traces=2)
    for n in (2, 3, 2, 4, 2):  # shapes 2 and 3, then 4 pushes out 3 (least recently used)
        out = jf(_f32(n), 2.0)
        np.testing.assert_allclose(out.asnumpy(), _f32(n).asnumpy() * 2)
    assert jf.traced == 3 and len(jf.traces()) == 2
    jf(_f32(2), 3.0)  # a constant argument is part of the signature
    assert jf.traced == 4
    np.testing.assert_allclose(jf(_f32(2), 3.0).asnumpy(), _f32(2).asnumpy() * 3)
    assert jf.traced == 4


def test_a_tensor_given_twice_gets_a_trace_of_its_own():
    jf = opforge.jit(lambda a, b: a - b * 2.0)
    x, y, z = _f32(3, seed=1), _f32(3, seed=2), _f32(3, seed=3)
    np.testing.assert_allclose(jf(x, x).asnumpy(), -x.asnumpy(), rtol=1e-6)  # traced with a == b
    np.testing.assert_allclose(jf(y, z).asnumpy(), y.asnumpy() - 2 * z.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(jf(z, z).asnumpy(), -z.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(jf(z, y).asnumpy(), z.asnumpy() - 2 * y.asnumpy(), rtol=1e-6)
    assert jf.traced == 2


def test_containers_in_and_out():
    @opforge.jit
    def f(d, pair):
        a, b = pair
        return {"sum": d["x"] + a, "list": [b, a * 2.0], "const": 7}

    x, a, b = _f32(3), _f32(3, seed=1), _f32(3, seed=2)
    f({"x": x}, (a, b))
    out = f({"x": a}, (b, x))
    np.testing.assert_allclose(out["sum"].asnumpy(), a.asnumpy() + b.asnumpy())
    assert out["list"][0] is x and out["const"] == 7


def test_reading_data_inside_a_trace_names_the_line():
    @opforge.jit(fullgraph=True)
    def f(x):
        if float(ops.ReduceSum()(x)) > 0:  # data-dependent Python
            return x
        return -x

    with pytest.raises(opforge.TraceError, match=r"float\(Tensor\).*jit\(.*f\).*test_jit.py:\d+"):
        f(_f32(3))


@pytest.mark.parametrize(
    "body",
    [
        lambda x, p: Tensor(x) * 2.0,
        lambda x, p: p.set_data(Tensor(np.ones(3, np.float32))),
        lambda x, p: x.asnumpy(),
        lambda x, p: p.asnumpy(),
    ],
    ids=["copy", "set_data", "asnumpy", "parameter_read"],
)
def test_what_a_trace_cannot_record_is_refused(body):
    p = Parameter(np.zeros(3, np.float32), name="p")
    with pytest.raises(opforge.TraceError, match="a trace records operators"):
        opforge.jit(lambda x: body(x, p), fullgraph=True)(_f32(3))


def test_a_graph_break_runs_eagerly_and_names_the_line():
    """By default (MindSpore's fullgraph=False) a read of traced data is a graph break: the first call finishes
    eagerly, one GraphBreakWarning names the line, and later calls with that signature run eagerly, so each
    takes the branch its own data decides."""

    @opforge.jit
    def f(x):
        if float(ops.ReduceSum()(x)) > 0:  # data-dependent Python
            return x * 2.0
        return -x

    positive = Tensor(np.array([1.0, 2.0], np.float32))
    with pytest.warns(opforge.GraphBreakWarning, match=r"float\(Tensor\).*test_jit.py:\d+.*runs eagerly"):
        np.testing.assert_array_equal(f(positive).asnumpy(), [2.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once
        np.testing.assert_array_equal(f(-positive).asnumpy(), [1.0, 2.0])
        np.testing.assert_array_equal(f(positive).asnumpy(), [2.0, 4.0])
    assert f.traces() == [] and "graph break" in f.explain()


def test_a_graph_break_keeps_in_place_updates_once_per_call():
    """The updates made before the read happen once per call, as eagerly: the broken trace is not run again."""
    count = Parameter(np.zeros((), np.float32), name="count")

    @opforge.jit
    def step(x):
        ops.AssignAdd()(count, Tensor(np.float32(1)))
        return x + 1.0 if bool(count > 2.0) else x

    x = Tensor(np.zeros(2, np.float32))
    with pytest.warns(opforge.GraphBreakWarning):
        outs = [float(step(x).asnumpy()[0]) for _ in range(5)]
    assert outs == [0.0, 0.0, 1.0, 1.0, 1.0] and float(count.asnumpy()) == 5.0


def test_a_graph_break_hands_printed_values_over_once(capfd):
    """What the broken first run printed (ops.Print: a value handed to the host) is printed once, as eagerly."""

    @opforge.jit
    def f(x):
        ops.Print()("x:", x)
        return x if float(ops.ReduceSum()(x)) > 0 else -x

    with pytest.warns(opforge.GraphBreakWarning):
        for _ in range(2):
            f(Tensor(np.array([3.0], np.float32)))
    assert capfd.readouterr().out.count("x:") == 2


def test_graph_mode_cell_with_a_tensor_condition_traces_its_inner_cells():
    """A MindSpore-style train step deciding ``if not overflow:`` in Python runs eagerly in GRAPH_MODE, as
    PyNative computes it, while the network it calls is traced and replayed."""

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = nn.Dense(3, 2)
            self.skipped = Parameter(np.zeros((), np.float32), name="skipped")

        def construct(self, x):
            out = self.net(x)
            if ops.ReduceMax()(ops.Abs()(out)) > 100.0:  # bool(Tensor)
                ops.AssignAdd()(self.skipped, Tensor(np.float32(1)))
            return out

    step = Step()
    small, large = _f32(4, 3), _f32(4, 3, seed=1) * 1e6
    want = [step.net(t).asnumpy() for t in (small, large, small)]
    opforge.set_context(mode=GRAPH_MODE)
    try:
        with pytest.warns(opforge.GraphBreakWarning, match="bool"):
            got = [step(t).asnumpy() for t in (small, large, small)]
    finally:
        opforge.set_context(mode=PYNATIVE_MODE)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert [float(np.abs(w).max() > 100) for w in want] == [0.0, 1.0, 0.0]
    assert float(step.skipped.asnumpy()) == 1.0
    assert step._graph.traces() == [] and len(step.net._graph.traces()) == 1


def test_in_place_updates_of_parameters_are_replayed():
    p = Parameter(np.zeros(3, np.float32), name="p")

    @opforge.jit
    def accumulate(x):
        ops.Assign()(p, p + x)
        return p * 1.0

    x = _f32(3)
    for i in range(1, 4):
        out = accumulate(x)
        np.testing.assert_allclose(p.asnumpy(), i * x.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(out.asnumpy(), i * x.asnumpy(), rtol=1e-6)
    assert accumulate.traced == 1


def test_gradients_through_a_jitted_function():
    f = lambda x: ops.ReduceSum()(ops.Tanh()(x) * x)  # noqa: E731
    jf = opforge.jit(f)
    x = _f32(5)
    jf(x)  # traced: the gradient replays through the tape
    np.testing.assert_allclose(opforge.grad(jf)(x).asnumpy(), opforge.grad(f)(x).asnumpy(), rtol=1e-6)
    # and a jitted gradient (forward and backward pass recorded in one trace)
    jg = opforge.jit(opforge.grad(f))
    for seed in range(3):
        x = _f32(5, seed=seed)
        np.testing.assert_allclose(jg(x).asnumpy(), opforge.grad(f)(x).asnumpy(), rtol=1e-6)
    assert jg.traced == 1


def test_a_profiler_sees_every_replayed_kernel():
    jf = opforge.jit(lambda x: ops.Exp()(x) + 1.0)
    x = _f32(4)
    jf(x)
    with Profile() as prof:
        jf(x)
    assert {s.op for s in prof.stats()} == {"Exp", "Add"}


def test_a_new_kernel_registration_makes_the_trace_stale(isolated_registries):
    class JitProbe(Primitive):
        def __init__(self):
            super().__init__("JitProbe")

        def infer_shape(self, x):
            return x

        def infer_dtype(self, x):
            return x

    attr = [KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)]
    register_kernel("JitProbe", "CPU", attr)(lambda x: x + 1)
    jf = opforge.jit(lambda x: JitProbe()(x))
    np.testing.assert_allclose(jf(_f32(2)).asnumpy(), _f32(2).asnumpy() + 1)
    with pytest.warns(UserWarning):
        register_kernel("JitProbe", "CPU", attr)(lambda x: x + 2)
    np.testing.assert_allclose(jf(_f32(2)).asnumpy(), _f32(2).asnumpy() + 2)
    assert jf.traced == 2


def test_replays_in_threads_at_once_are_independent():
    jf = opforge.jit(lambda x: ops.Sigmoid()(x) * x)
    jf(_f32(64))
    errors = []

    def work(seed):
        for i in range(50):
            x = _f32(64, seed=seed * 100 + i)
            want = ops.Sigmoid()(x).asnumpy() * x.asnumpy()
            if not np.allclose(jf(x).asnumpy(), want, rtol=1e-6):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and jf.traced == 1


def test_bad_arguments_of_jit():
    with pytest.raises(TypeError, match="'function' must be callable"):
        opforge.jit(3)
    with pytest.raises(ValueError, match="'max_traces' must be an int >= 1"):
        opforge.jit(lambda x: x, max_traces=0)
    with pytest.raises(TypeError, match="unknown options"):
        opforge.jit(lambda x: x, speed="max")
    with pytest.raises(TypeError, match="For 'jit', the 'argument' must be a Tensor, but got numpy.ndarray"):
        opforge.jit(lambda x: x)(np.ones(2))
    with pytest.raises(ValueError, match="'mode' must be GRAPH_MODE"):
        opforge.set_context(mode=5)


# -- Cells and graph mode -----------------------------------------------------------------------


def _train(mode, steps, batch_norm=False, dynamic_lr=True):
    opforge.set_context(mode=mode)
    try:
        rng = np.random.default_rng(0)
        layers = [nn.Dense(8, 16, weight_init="normal"), nn.ReLU(), nn.Dense(16, 4, weight_init="normal")]
        if batch_norm:
            layers.insert(1, nn.BatchNorm1d(16))
        net = nn.SequentialCell(layers)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        lr = [0.1, 0.05, 0.02] if dynamic_lr else 0.1
        opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        losses = []
        for _ in range(steps):
            x = Tensor(rng.standard_normal((6, 8)).astype(np.float32))
            y = Tensor(rng.integers(0, 4, 6).astype(np.int32))
            losses.append(float(step(x, y).asnumpy()))
        return losses, {p.name: p.asnumpy() for p in step.get_parameters()}, step
    finally:
        opforge.set_context(mode=PYNATIVE_MODE)


@pytest.mark.parametrize("batch_norm", [False, True], ids=["mlp", "batchnorm"])
def test_train_one_step_cell_in_graph_mode_equals_pynative(batch_norm):
    nn.set_seed(3)
    eager_losses, eager_params, _ = _train(PYNATIVE_MODE, 5, batch_norm)
    nn.set_seed(3)
    graph_losses, graph_params, step = _train(GRAPH_MODE, 5, batch_norm)
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-6)
    assert eager_params.keys() == graph_params.keys()
    for name in eager_params:
        np.testing.assert_allclose(graph_params[name], eager_params[name], rtol=1e-5, atol=1e-7, err_msg=name)
    assert graph_params["global_step"] == 5
    assert step._graph.traced == 1


def test_grad_operation_of_a_graph_mode_cell(graph_mode):
    net = nn.Dense(3, 2)
    x = _f32(4, 3)
    out = net(x)  # traced
    np.testing.assert_allclose(net(x).asnumpy(), out.asnumpy())
    grad_fn = ops.GradOperation(get_by_list=True)(net, net.trainable_params())
    graph_grads = grad_fn(x)
    opforge.set_context(mode=PYNATIVE_MODE)
    eager_grads = grad_fn(x)
    for g, e in zip(graph_grads, eager_grads):
        np.testing.assert_allclose(g.asnumpy(), e.asnumpy(), rtol=1e-6)


def test_a_cell_is_retraced_when_its_mode_changes(graph_mode):
    net = nn.SequentialCell([nn.Dense(4, 4), nn.BatchNorm1d(4)])
    x = _f32(8, 4)
    net.set_train(True)
    net(x)
    net.set_train(False)
    out = net(x)
    opforge.set_context(mode=PYNATIVE_MODE)
    np.testing.assert_allclose(out.asnumpy(), net(x).asnumpy(), rtol=1e-6)
    assert net._graph.traced == 2


def test_jit_on_construct_and_on_a_cell():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 2)

        @opforge.jit
        def construct(self, x):
            return ops.ReLU()(self.fc(x))

    net = Net()
    x = _f32(2, 3)
    want = ops.ReLU()(net.fc(x)).asnumpy()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    assert net._jit_construct.traced == 1
    jnet = opforge.jit(nn.Dense(3, 2))
    np.testing.assert_allclose(jnet(x).asnumpy(), jnet.fn(x).asnumpy(), rtol=1e-6)


def test_dropout_replays_a_new_mask_each_step_as_eager_calls_draw():
    """nn.Dropout under jit runs DropoutExt with its step as a Tensor each replay refills: the replayed
    steps draw the masks eager calls draw, each step a new one."""
    eager, traced = nn.Dropout(p=0.4, seed=7), nn.Dropout(p=0.4, seed=7)
    eager.set_train(True), traced.set_train(True)
    step = opforge.jit(lambda x: traced(x) * 2.0)
    x = Tensor(np.ones(64, np.float32))
    seen = []
    for _ in range(4):
        got = step(x).asnumpy()
        np.testing.assert_array_equal(got, eager(x).asnumpy() * 2.0)
        seen.append(tuple(got != 0))
    assert len(set(seen)) == 4 and len(step.traces()) == 1 and eager.step == traced.step == 4
    traced.set_train(False)
    assert traced(x) is x


def _dropout_net(seed):
    net = nn.SequentialCell(nn.Dense(6, 16), nn.ReLU(), nn.Dropout(p=0.3, seed=seed), nn.Dense(16, 3))
    for i, p in enumerate(net.trainable_params()):
        p.set_data(Tensor(np.random.default_rng(i).standard_normal(p.shape).astype(np.float32) * 0.3))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.1))
    step.set_train()
    return net, step


def test_a_graph_mode_training_step_with_dropout_equals_pynative(graph_mode):
    x, y = _f32(8, 6), Tensor(np.arange(8, dtype=np.int32) % 3)
    net_g, step_g = _dropout_net(5)
    losses_g = [step_g(x, y).asnumpy() for _ in range(4)]
    opforge.set_context(mode=PYNATIVE_MODE)
    net_p, step_p = _dropout_net(5)
    losses_p = [step_p(x, y).asnumpy() for _ in range(4)]
    np.testing.assert_allclose(losses_g, losses_p, rtol=1e-5)
    for a, b in zip(net_g.trainable_params(), net_p.trainable_params()):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    assert len(set(np.round(losses_g, 6))) == 4 and step_g._jit_construct.traced == 1


def test_attention_and_rnn_dropout_replay_new_masks():
    attention = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    rnn = nn.LSTM(4, 5, num_layers=2, dropout=0.5, batch_first=True)
    attention.set_train(True), rnn.set_train(True)
    q, seq = _f32(2, 3, 8), _f32(2, 6, 4)
    weights = opforge.jit(lambda t: attention(t, t, t)[1])
    no_weights = opforge.jit(lambda t: attention(t, t, t, need_weights=False)[0])
    hidden = opforge.jit(lambda t: rnn(t)[0])
    for fn, arg in ((weights, q), (no_weights, q), (hidden, seq)):
        outs = [fn(arg).asnumpy() for _ in range(3)]
        assert not np.allclose(outs[0], outs[1]) and not np.allclose(outs[1], outs[2])
        assert len(fn.traces()) == 1


def test_functional_attention_dropout_is_not_traced_silently():
    q = _f32(1, 1, 4, 8)
    fn = opforge.jit(lambda t: ops.scaled_dot_product_attention(t, t, t, dropout_p=0.5))
    with pytest.raises(opforge.TraceError, match="dropout draws a new mask per call"):
        fn(q)


# -- the registry sweep: every operator traced and replayed ---------------------------------------

_FIRST_CPU_KERNEL = {}
for _e in KERNELS:
    if _e.backend == "CPU" and _e.op_name in OP_DB:
        _FIRST_CPU_KERNEL.setdefault(_e.op_name, _e)


@pytest.mark.parametrize("entry", list(_FIRST_CPU_KERNEL.values()), ids=lambda e: e.op_name)
def test_every_operator_replays_like_eager(entry, rng):
    record = OP_DB[entry.op_name]
    in_dtypes = tuple(entry.attr.input_dtypes_for(record.nin))
    for factory in record.variants.values():
        variant = factory()
        prim = called_primitive(variant)
        if prim is None:  # op_db_nn's in-place wrappers copy their inputs into Parameters
            continue
        samples = list(record.sample_inputs(record, variant, in_dtypes, entry.attr.outputs, rng))
        for sample in samples[:3]:
            jf = opforge.jit(lambda *a, _p=prim, _kw=sample.kwargs: _p(*a, **_kw))
            args = _tensors(sample.args, "CPU", record.params)
            jf(*args)  # the trace
            fresh = _tensors(sample.args, "CPU", record.params)
            want = prim(*_tensors(sample.args, "CPU", record.params), **sample.kwargs)
            got = jf(*fresh)
            assert_same_outputs(got, want, entry.op_name)


# -- dry runs and dynamic shapes ------------------------------------------------------------------


def test_lower_gives_shapes_without_running_a_kernel():
    net = nn.SequentialCell([nn.Dense(784, 32), nn.ReLU(), nn.Dense(32, 10)])
    jf = opforge.jit(net)
    with Profile() as prof:
        out = jf.lower(Tensor(shape=[None, 784], dtype=mstype.float32))
    assert tuple(out.shape) == (-1, 10) and out.dtype == mstype.float32
    assert prof.stats() == [] and jf.traced == 0


def test_one_trace_serves_every_batch_size_of_a_dynamic_signature():
    net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 3)])
    spec = Tensor(shape=[None, 4], dtype=mstype.float32)
    jf = opforge.jit(lambda x: ops.ReduceSum()(net(x), 1), input_signature=(spec,))
    for batch in (2, 5, 7, 1, 9, 5):
        x = _f32(batch, 4, seed=batch)
        np.testing.assert_allclose(jf(x).asnumpy(), ops.ReduceSum()(net(x), 1).asnumpy(), rtol=1e-6)
    assert jf.traced == 1  # the first size traced; the others instantiated its symbolic program
    assert len(jf.traces()) == 5 and "one symbolic trace serves every size (s0=2" in jf.explain()


class _ScaleAndFold(nn.Cell):
    """Constants computed from the batch size: a factor and a Reshape's target shape."""

    def construct(self, x):
        n = x.shape[0]
        folded = ops.Reshape()(x * float(n), (2 * n, x.shape[1] // 2))
        return ops.ReduceSum()(folded, 1) + 1.0 / self.scale(n)

    def scale(self, n):
        return 4.0


def test_constants_affine_in_a_size_are_computed_at_replay(graph_mode):
    cell = _ScaleAndFold()
    cell.set_inputs(Tensor(shape=[None, 6], dtype=mstype.float32))
    for n in (2, 3, 4, 5, 3):
        x = _f32(n, 6, seed=n)
        want = (x.asnumpy() * n).reshape(2 * n, 3).sum(1) + 0.25
        np.testing.assert_allclose(cell(x).asnumpy(), want, rtol=1e-6)
    assert cell._graph.traced == 1 and "2 constants fitted" in cell._graph.explain()


def test_a_constant_not_affine_in_a_size_keeps_a_trace_per_size(graph_mode):
    class Mean(nn.Cell):
        def construct(self, x):
            return ops.ReduceSum()(x) * (1.0 / x.shape[0])  # 1/n: not affine in n

    cell = Mean()
    cell.set_inputs(Tensor(shape=[None], dtype=mstype.float32))
    for n in (2, 3, 4, 5):
        x = _f32(n, seed=n)
        np.testing.assert_allclose(cell(x).asnumpy(), x.asnumpy().mean(), rtol=1e-6)
    assert cell._graph.traced == 4 and "a trace per size" in cell._graph.explain()


def test_a_training_step_with_a_dynamic_batch_is_traced_once():
    """Forward, backward and Momentum's update with the data's and the labels' batch dims one symbol:
    one trace, and the same weights as PyNative."""

    def run(mode):
        nn.set_seed(5)
        opforge.set_context(mode=mode)
        try:
            net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 4)])
            loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
            step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.1, 0.9))
            step.set_inputs(Tensor(shape=[None, 8], dtype=mstype.float32), Tensor(shape=[None], dtype=mstype.int32))
            rng = np.random.default_rng(0)
            losses = []
            for batch in (6, 3, 8, 3, 5):
                x = Tensor(rng.standard_normal((batch, 8)).astype(np.float32))
                y = Tensor(rng.integers(0, 4, batch).astype(np.int32))
                losses.append(float(step(x, y).asnumpy()))
            return losses, [p.asnumpy() for p in net.trainable_params()], step
        finally:
            opforge.set_context(mode=PYNATIVE_MODE)

    eager_losses, eager_weights, _ = run(PYNATIVE_MODE)
    graph_losses, graph_weights, step = run(GRAPH_MODE)
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-5)
    for g, e in zip(graph_weights, eager_weights):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)
    assert step._graph.traced == 1


@pytest.mark.parametrize("model", ["mlp", "lenet"])
def test_the_demo_trains_the_same_in_graph_mode(model):
    from opforge.tools import demo

    data = demo.load_digits_dataset()
    _, eager = demo.train(data, epochs=1, max_steps=12, model=model)
    _, graph = demo.train(data, epochs=1, max_steps=12, model=model, graph=True)
    np.testing.assert_allclose(graph.step_loss, eager.step_loss, rtol=1e-5)


def test_a_replay_frees_each_value_after_its_last_reader():
    """Buffer planning: an unfused 20-call chain on 1M floats peaks at two live buffers (the value
    read and the value written), not one per call; the inputs and the outputs stay."""
    relu, add = ops.ReLU(), ops.Add()

    def chain(a):
        for _ in range(10):
            a = relu(add(a, 1.0))
        return a, a

    x = Tensor(np.ones(1 << 20, np.float32))
    jitted = opforge.jit(chain, fuse=False)
    jitted(x)
    opforge.memory.reset_stats()
    held = opforge.memory.stats()["bytes_in_use"]  # pooled arrays earlier tests in this process keep alive
    out, same = jitted(x)
    assert opforge.memory.stats()["peak_bytes_in_use"] - held <= 2 * x.nbytes
    np.testing.assert_array_equal(out.asnumpy(), np.full(1 << 20, 11, np.float32))
    assert same is out


def test_a_replay_allocates_only_what_it_returns():
    """The arena: a released intermediate's buffer is kept by (dtype, shape) and written again by a
    later step, here and in the next replays; only the returned value is allocated. A buffer someone
    still holds (a view of it) is not reused."""
    relu, add, reshape = ops.ReLU(), ops.Add(), ops.Reshape()

    def chain(a):
        for _ in range(10):
            a = relu(add(a, 1.0))
        return a

    x = Tensor(np.ones(1 << 20, np.float32))
    jitted = opforge.jit(chain, fuse=False)
    jitted(x), jitted(x)  # the first replay fills the arena
    opforge.memory.reset_stats()
    outs = [jitted(x) for _ in range(3)]
    assert opforge.memory.stats()["allocations"] == 3  # one per replay: its output
    assert len({id(o._data) for o in outs}) == 3
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(1 << 20, 11, np.float32))

    def viewed(a):  # the reshaped intermediate is returned: its buffer must never be written again
        b = relu(add(a, 1.0))
        return reshape(b, (1024, 1024)), relu(add(b, 1.0))

    jitted = opforge.jit(viewed, fuse=False)
    first = [t.asnumpy().copy() for t in jitted(x)]
    kept = jitted(x)
    jitted(x * 2.0)
    np.testing.assert_array_equal(kept[0].asnumpy(), first[0])
    np.testing.assert_array_equal(kept[1].asnumpy(), first[1])


def test_a_repeated_call_is_computed_once_and_a_write_between_keeps_both():
    """Common subexpressions: the same primitive and attrs on the same arguments run once in the
    replay; a Parameter written in between (an in-place update) is read again."""
    matmul, relu = ops.MatMul(), ops.ReLU()

    def twice(x, w):
        return relu(matmul(x, w)) + relu(matmul(x, w))

    x, w = Tensor(np.ones((4, 3), np.float32)), Tensor(np.ones((3, 2), np.float32))
    jitted = opforge.jit(twice)
    jitted(x, w)
    trace = jitted.traces()[0]
    assert len(trace.steps) == 5 and len(trace.program) == 3
    np.testing.assert_array_equal(jitted(x, w).asnumpy(), twice(x, w).asnumpy())

    p = Parameter(Tensor(np.ones(3, np.float32)), name="p")
    assign, mul = ops.Assign(), ops.Mul()

    def read_write_read(x):
        before = mul(p, x)
        assign(p, x)
        return before, mul(p, x)

    jitted = opforge.jit(read_write_read)
    jitted(Tensor(np.full(3, 2.0, np.float32)))
    before, after = jitted(Tensor(np.full(3, 3.0, np.float32)))
    np.testing.assert_array_equal(before.asnumpy(), np.full(3, 6.0))  # p was 2 before this call
    np.testing.assert_array_equal(after.asnumpy(), np.full(3, 9.0))


def test_a_native_in_place_step_writes_the_parameter_and_moves_its_version():
    w = Parameter(_f32(3), name="w")
    jf = opforge.jit(lambda d: ops.Assign()(w, d * 2.0))
    for i in range(3):
        before = w._version
        d = _f32(3, seed=i)
        assert jf(d) is w
        np.testing.assert_array_equal(w.asnumpy(), d.asnumpy() * 2.0)
        assert w._version == before + 1
    assert "2 steps replayed" in jf.explain() and "2 run without entering Python" in jf.explain()


def test_a_tuple_of_tensors_runs_natively_in_a_replay():
    """Concat and AddN take a tuple: their FastPlans read its elements (``take``), so the whole replay
    runs without entering Python (a tuple once sent the whole replay to Python, then its step)."""
    cat, add_n, relu = ops.Concat(1), ops.AddN(), ops.ReLU()

    def fn(a, b):
        h = relu(a)
        return relu(add_n([h, b, h])), cat((h, b))

    jf = opforge.jit(fn)
    for seed in range(3):
        a, b = _f32(3, 4, seed=seed), _f32(3, 4, seed=seed + 10)
        total, joined = jf(a, b)
        h = np.maximum(a.asnumpy(), 0)
        np.testing.assert_allclose(total.asnumpy(), np.maximum(2 * h + b.asnumpy(), 0), rtol=1e-6)
        np.testing.assert_array_equal(joined.asnumpy(), np.concatenate([h, b.asnumpy()], 1))
    text = jf.explain()
    assert "4 run without entering Python" in text.splitlines()[0], text


def test_explain_says_which_steps_enter_python_and_why():
    net = nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = opforge.jit(nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt))
    step(_f32(8, 4), Tensor(np.zeros(8, np.int32)))
    text = step.explain()
    assert "run without entering Python" in text.splitlines()[0]
    assert "  MatMul\n" in text and "  FusedMatMulApplyGradientDescent\n" in text  # native steps carry no mark
    # a Parameter the trace holds is written natively; one given as an argument goes through its plan,
    # which checks at every call that it is a writable Parameter
    assign = opforge.jit(lambda p, v: ops.Assign()(p, v))
    assign(Parameter(_f32(3), name="p"), _f32(3, seed=1))
    assert "Assign  [Python: writes a Parameter in place" in assign.explain()
    reshape = opforge.jit(lambda x: ops.Reshape()(x, (3, 2)))
    reshape(_f32(6))
    assert "0 repeated calls merged; 1 run without entering Python" in reshape.explain()  # the tuple folded in


def test_a_recording_lets_intermediates_die():
    """A trace records each value's meta, not the value: an intermediate dies when the function drops it, as it
    would eagerly (a detection network's recording held 20 GB when every intermediate was kept), and a new
    Tensor given a dead one's id is not read as it."""
    gone = []

    def fn(x):
        previous = None
        for _ in range(4):
            y = ops.relu(x) * 2.0
            if previous is not None:
                gone.append(previous() is None)
            previous = weakref.ref(y)
            x = y - 1.0
        return x

    jf = opforge.jit(fn)
    for seed in range(3):  # the recording, then replays
        x = _f32(64, 64, seed=seed)
        want = x.asnumpy()
        for _ in range(4):
            want = np.maximum(want, 0) * 2.0 - 1.0
        np.testing.assert_allclose(jf(x).asnumpy(), want, rtol=1e-6)
    assert gone and all(gone), gone


def test_a_replayed_in_place_step_moves_every_written_parameter_s_version():
    """ApplyMomentum writes var (its output) and the accumulation (not returned): a replay runs it in C and
    moves both versions, as an eager call does, so a backward pass that saved either one raises."""
    momentum = ops.ApplyMomentum()
    var = Parameter(np.ones(4, np.float32), name="var")
    accum = Parameter(np.zeros(4, np.float32), name="accum")
    lr, grad, mom = Tensor(np.float32(0.1)), _f32(4, seed=1), Tensor(np.float32(0.9))
    jf = opforge.jit(lambda g: momentum(var, accum, lr, g, mom))  # the Parameters a step's constants
    for k in range(1, 5):
        assert jf(grad) is var
        assert (var._version, accum._version) == (k, k)
    assert "1 run without entering Python" in jf.explain().splitlines()[0], jf.explain()
