"""Device graphs: a jitted GPU trace captured once and replayed by one launch
(``opforge/dispatch/device_graph.py``): on the host emulation a graph is its recorded calls, on a real GPU
a CUDA graph.

The sweep is generated from the registry: every operator's first GPU kernel is jitted and called past
the capture on fresh inputs, and every call must equal the eager one, whether the trace was captured
or the capture gave up (and said why).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import GPU, GPU_IS_EMULATED
from helpers import assert_same_outputs, called_primitive
from op_db import OP_DB
from test_op_sweep import KERNELS

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Parameter, Tensor, nn, ops
from opforge.dispatch.device_graph import CAPTURE_AT
from opforge.errors import KernelError
from opforge.testing import _tensors


def _gpu(*shape, seed=0, dtype=np.float32):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype), device="GPU")


def _graph_of(jf):
    return next(reversed(jf._traces.values())).device_graph


def _launches():
    return GPU.runtime.graphs_launched if GPU_IS_EMULATED else None


def _mlp(x, w1, w2):
    h = ops.ReLU()(ops.MatMul()(x, w1) + 0.5)
    return ops.ReduceSum()(ops.Tanh()(ops.MatMul()(h, w2)) * 2.0, 1), h


def test_a_gpu_trace_is_captured_once_and_each_later_call_is_one_launch():
    jf = opforge.jit(_mlp)
    before = _launches()
    results = []
    for i in range(CAPTURE_AT + 4):
        args = (_gpu(5, 7, seed=i), _gpu(7, 9, seed=100 + i), _gpu(9, 3, seed=200 + i))
        got, want = jf(*args), _mlp(*args)
        for g, w in zip(got, want):
            assert g.device == "GPU" and g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
        results.append((got, want))
    graph = _graph_of(jf)
    assert graph.graph is not None and graph.captures == 1 and graph.why_not is None
    assert "replayed as one device graph" in jf.explain()
    if GPU_IS_EMULATED:  # the trace's call, the replays before the capture, the capture's call: no launch
        assert _launches() - before == CAPTURE_AT + 4 - (CAPTURE_AT + 1)
    for got, want in results:  # each call's outputs are its own: later launches did not overwrite them
        np.testing.assert_array_equal(got[0].asnumpy(), want[0].asnumpy())


def test_device_graph_false_and_the_cpu_keep_launching_kernel_by_kernel():
    jf = opforge.jit(_mlp, device_graph=False)
    cpu = opforge.jit(_mlp)
    for i in range(CAPTURE_AT + 2):
        jf(_gpu(2, 3, seed=i), _gpu(3, 4), _gpu(4, 2))
        cpu(*(Tensor(np.ones(s, np.float32)) for s in ((2, 3), (3, 4), (4, 2))))
    assert _graph_of(jf) is None and _graph_of(cpu) is None
    assert "device graph" not in jf.explain()


def test_no_graph_where_copying_the_inputs_and_outputs_costs_more_than_the_launches_save():
    jf = opforge.jit(lambda x: ops.ReLU()(x) * 2.0)  # one fused kernel on 8 MiB in, 8 MiB out
    for i in range(CAPTURE_AT + 2):
        x = _gpu(2 << 20, seed=i)
        np.testing.assert_array_equal(jf(x).asnumpy(), np.maximum(x.asnumpy(), 0) * 2.0)
    graph = _graph_of(jf)
    assert graph.graph is None and "would take longer to copy in and out than the launches" in graph.why_not


def test_a_function_returning_its_input_or_a_parameter_returns_those_objects():
    p = Parameter(_gpu(3), name="p")
    jf = opforge.jit(lambda x: (x, p, x * 3.0))
    for i in range(CAPTURE_AT + 3):
        x = _gpu(3, seed=i)
        same, param, tripled = jf(x)
        assert same is x and param is p
        np.testing.assert_allclose(tripled.asnumpy(), x.asnumpy() * 3.0, rtol=1e-6)
    assert _graph_of(jf).graph is not None


def _train(mode, steps):
    opforge.set_context(mode=mode, device_target="GPU")
    try:
        nn.set_seed(5)
        rng = np.random.default_rng(0)
        net = nn.SequentialCell(nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 4))
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean")
        opt = nn.Momentum(net.trainable_params(), learning_rate=[0.1, 0.05, 0.02], momentum=0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        losses = []
        for _ in range(steps):
            x = Tensor(rng.standard_normal((6, 8)).astype(np.float32))
            y = Tensor(np.eye(4, dtype=np.float32)[rng.integers(0, 4, 6)])
            losses.append(float(step(x, y).asnumpy()))
        return losses, {p.name: p for p in step.get_parameters()}, step
    finally:
        opforge.set_context(mode=PYNATIVE_MODE, device_target="CPU")


def test_a_graph_mode_training_step_on_the_gpu_is_captured_and_equals_pynative():
    eager_losses, eager_params, _ = _train(PYNATIVE_MODE, 7)
    graph_losses, graph_params, step = _train(GRAPH_MODE, 7)
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-6)
    for name, p in eager_params.items():
        q = graph_params[name]
        np.testing.assert_allclose(q.asnumpy(), p.asnumpy(), rtol=1e-5, atol=1e-7, err_msg=name)
        assert q._version >= p._version, name  # the written Parameters' versions move at every launch
    assert int(graph_params["global_step"].asnumpy()) == 7
    graph = _graph_of(step._graph)
    assert graph is not None and graph.graph is not None, graph and graph.why_not


def test_a_parameter_given_a_new_array_is_captured_again():
    w = Parameter(_gpu(4, 4), name="w")
    jf = opforge.jit(lambda x: ops.MatMul()(x, w))
    for i in range(CAPTURE_AT + 2):
        jf(_gpu(2, 4, seed=i))
    w[0] = 5.0  # a Parameter's setitem gives it a new array: the graph holds the old address
    for i in range(CAPTURE_AT + 2):
        x = _gpu(2, 4, seed=i)
        np.testing.assert_allclose(jf(x).asnumpy(), x.asnumpy() @ w.asnumpy(), rtol=1e-5, atol=1e-6)
    assert _graph_of(jf).captures == 2


def test_what_a_graph_cannot_hold_gives_up_the_capture_and_says_why():
    table = Parameter(_gpu(3, 4), name="table")
    scatter = ops.ScatterNdAdd()  # into a Parameter: reads its index rows' check back before it writes
    jf = opforge.jit(lambda i, u: scatter(table, i, u) * 1)
    rows = Tensor(np.array([[0, 1], [2, 3]], np.int32), device="GPU")
    for i in range(CAPTURE_AT + 2):
        before = table.asnumpy()
        jf(rows, _gpu(2, seed=i))
        np.testing.assert_allclose(table.asnumpy()[[0, 2], [1, 3]], before[[0, 2], [1, 3]] + _gpu(2, seed=i).asnumpy())
    graph = _graph_of(jf)
    assert graph.graph is None
    assert graph.why_not == "a copy to the host while a graph was being captured (in 'ScatterNdAdd')"
    assert "no device graph: a copy to the host" in jf.explain()

    p = Parameter(_gpu(3), name="p")
    assign = opforge.jit(lambda q, v: ops.Assign()(q, v))
    for i in range(CAPTURE_AT + 2):
        assign(p, _gpu(3, seed=i))
        np.testing.assert_array_equal(p.asnumpy(), _gpu(3, seed=i).asnumpy())
    assert "input 0 is a Parameter" in _graph_of(assign).why_not


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_indices_out_of_range_raise_after_the_launch_of_a_graph(dtype):
    """Gather's indices and a sparse loss's labels, checked on the device inside a graph: the launch
    raises naming the operator, the position and the value, and an index in range runs on."""
    table = _gpu(5, 3)
    sparse = ops.SparseSoftmaxCrossEntropyWithLogits()
    jf = opforge.jit(lambda i, x, y: (ops.Gather()(table, i, 0), sparse(x, y)))

    def good():
        return Tensor(np.array([4, 0, 2], dtype), device="GPU")  # a new Tensor each time: not one input twice

    for _ in range(CAPTURE_AT + 1):
        jf(good(), _gpu(3, 5), good())
    assert _graph_of(jf).graph is not None
    bad_index = Tensor(np.array([1, 5, -1], dtype), device="GPU")
    with pytest.raises(
        KernelError,
        match=r"For 'Gather', every 'input_indices' value must be in \[0, 5\), but got input_indices\[1\] = 5",
    ):
        jf(bad_index, _gpu(3, 5), good())
    bad_label = Tensor(np.array([0, 1, 7], dtype), device="GPU")
    with pytest.raises(KernelError, match=r"'SparseSoftmaxCrossEntropyWithLogits'.*\[0, 5\), but got labels\[2\] = 7"):
        jf(good(), _gpu(3, 5), bad_label)
    got, want = (
        jf(good(), _gpu(3, 5, seed=4), good()),
        (ops.Gather()(table, good(), 0), sparse(_gpu(3, 5, seed=4), good())),
    )
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


# -- the registry sweep: every GPU operator replayed through a device graph -----------------------

_FIRST_GPU_KERNEL = {}
for _e in KERNELS:
    if _e.backend == "GPU" and _e.op_name in OP_DB and not _e.source.startswith("nccl:"):
        _FIRST_GPU_KERNEL.setdefault(_e.op_name, _e)


@pytest.mark.parametrize("entry", list(_FIRST_GPU_KERNEL.values()), ids=lambda e: e.op_name)
def test_every_gpu_operator_replays_through_a_device_graph_like_eager(entry, rng):
    record = OP_DB[entry.op_name]
    in_dtypes = tuple(entry.attr.input_dtypes_for(record.nin))
    variant = next(iter(record.variants.values()))()
    prim = called_primitive(variant)
    if prim is None:
        pytest.skip("op_db's wrapper copies its inputs into Parameters")
    sample = next(iter(record.sample_inputs(record, variant, in_dtypes, entry.attr.outputs, rng)))
    jf = opforge.jit(lambda *a: prim(*a, **sample.kwargs))
    for _ in range(CAPTURE_AT + 2):
        want = prim(*_tensors(sample.args, "GPU", record.params), **sample.kwargs)
        got = jf(*_tensors(sample.args, "GPU", record.params))
        assert_same_outputs(got, want, entry.op_name)
    graph = _graph_of(jf)
    assert graph is None or graph.graph is not None or graph.why_not, entry.op_name


def test_replays_in_threads_at_once_each_get_their_own_result():
    jf = opforge.jit(_mlp)
    w1, w2 = _gpu(7, 9, seed=1), _gpu(9, 3, seed=2)
    jf(_gpu(5, 7), w1, w2)
    errors = []

    def worker(k):
        try:
            for i in range(6):
                x = _gpu(5, 7, seed=10 * k + i)
                got, want = jf(x, w1, w2)[0], _mlp(x, w1, w2)[0]
                np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert _graph_of(jf).graph is not None
