"""The summary operators (opforge/ops/summary_ops.py): values kept in a network's construct and written by the next
SummaryRecord.record, eagerly and under jit (each replay hands over its own values: opforge/dispatch/side_outputs.py),
in Model.train's GRAPH_MODE steps next to SummaryCollector's own loss; read back with tests/summary_reader.py."""

import os
import threading

import numpy as np
import pytest
import summary_reader

import opforge
from opforge import Tensor, nn, ops
from opforge.dataset import NumpySlicesDataset
from opforge.ops.summary_ops import take_summary_values
from opforge.train import Model, SummaryCollector, SummaryRecord


def _events(directory):
    (name,) = [f for f in os.listdir(directory) if ".summary." in f]
    return summary_reader.events(os.path.join(directory, name))


class Logged(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.scalar, self.hist, self.image = ops.ScalarSummary(), ops.HistogramSummary(), ops.ImageSummary()

    def construct(self, x):
        y = self.fc(x)
        self.scalar("y_mean", y.mean())
        self.hist("y", y)
        self.image("x_image", x.reshape(x.shape[0], 1, 2, 2))
        return y


def test_eager_values_are_written_by_the_next_record(tmp_path, rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    net = Logged()
    with SummaryRecord(str(tmp_path)) as record:
        y = net(Tensor(x)).asnumpy()
        record.record(3)
        record.record(4)  # nothing new: no event
    events = _events(tmp_path)
    assert [e["step"] for e in events] == [0, 3]
    values = {tag: (kind, value) for tag, kind, value in events[1]["values"]}
    assert values["y_mean"][0] == "scalar" and np.isclose(values["y_mean"][1], y.mean(), rtol=1e-6)
    assert values["y"][0] == "histogram" and values["y"][1]["count"] == y.size
    assert np.isclose(values["y"][1]["max"], y.max()) and np.isclose(values["y"][1]["min"], y.min())
    assert values["x_image"][0] == "image" and values["x_image"][1][:2] == (2, 10)  # 5 images side by side


def test_under_jit_each_replay_hands_over_its_own_values(rng):
    take_summary_values()

    @opforge.jit
    def f(x):
        ops.ScalarSummary()("total", x.sum())
        return x * 2.0

    for i in range(3):
        x = rng.standard_normal(6).astype(np.float32) + i
        np.testing.assert_allclose(f(Tensor(x)).asnumpy(), 2 * x)
        kept = take_summary_values()
        assert list(kept) == ["total[:Scalar]"]
        np.testing.assert_allclose(kept["total[:Scalar]"].asnumpy(), x.sum(), rtol=1e-5)
    assert f.traced == 1  # replayed twice, and still handing over each call's value


class LossLogged(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net, self.loss, self.summary = net, nn.MSELoss(), ops.ScalarSummary()

    def construct(self, x, y):
        loss = self.loss(self.net(x), y)
        self.summary("my_loss", loss)
        return loss


def test_graph_mode_training_records_each_collected_steps_value(tmp_path, rng):
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = (x @ rng.standard_normal((4, 2))).astype(np.float32)
    net = nn.Dense(4, 2)
    opforge.set_context(mode=opforge.GRAPH_MODE)
    try:
        model = Model(LossLogged(net), optimizer=nn.Momentum(net.trainable_params(), 0.05, 0.9))
        data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(8)
        model.train(2, data, callbacks=[SummaryCollector(str(tmp_path), collect_freq=1)], dataset_sink_mode=False)
    finally:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    steps = {}
    for event in _events(tmp_path):
        for tag, _, value in event.get("values", []):
            steps.setdefault(event["step"], {})[tag] = value
    assert sorted(steps) == list(range(1, 9))
    losses = [steps[s]["my_loss"] for s in sorted(steps)]
    assert len(set(losses)) == 8  # each step's own loss, not the traced step's
    for s in sorted(steps):  # the summary operator's loss is the one SummaryCollector records
        assert np.isclose(steps[s]["my_loss"], steps[s]["loss/auto"], rtol=1e-6)


def test_eval_mode_keeps_the_values_and_tensor_summary_is_not_written(tmp_path):
    with SummaryRecord(str(tmp_path)) as record:
        ops.ScalarSummary()("a", Tensor(np.float32(1.0)))
        record.set_mode("eval")
        record.record(1)
        record.set_mode("train")
        ops.TensorSummary()("t", Tensor(np.ones((2, 2), np.float32)))
        with pytest.warns(UserWarning, match="TensorSummary 't' is not written"):
            record.record(2)
    events = _events(tmp_path)  # eval mode left "a" kept (MindSpore's cache); the train-mode record wrote it
    assert [e["step"] for e in events] == [0, 2]
    assert [(tag, kind) for tag, kind, _ in events[1]["values"]] == [("a", "scalar")]


def test_bad_arguments_name_the_operator():
    with pytest.raises(TypeError, match="For 'ScalarSummary', the 'name' must be a str"):
        ops.ScalarSummary()(1, Tensor(np.float32(1)))
    with pytest.raises(ValueError, match="'name' must not be empty"):
        ops.HistogramSummary()("", Tensor(np.ones(2)))
    with pytest.raises(TypeError, match="'value' must be a Tensor"):
        ops.TensorSummary()("t", np.ones(2))
    with pytest.raises(ValueError, match="ScalarSummary', the 'value' must have rank 0 or 1"):
        ops.ScalarSummary()("s", Tensor(np.ones((2, 2))))
    with pytest.raises(ValueError, match="ImageSummary', the 'value' must be 4-D"):
        ops.ImageSummary()("i", Tensor(np.ones((2, 2, 2))))
    take_summary_values()


def test_print_under_jit_prints_each_runs_values(capsys):
    @opforge.jit
    def f(x):
        y = x * 3.0
        ops.Print()("y:", y)
        return y + 1.0

    for v in (1.0, 2.0, 5.0):
        np.testing.assert_allclose(f(Tensor(np.array([v], np.float32))).asnumpy(), [3 * v + 1])
    out = capsys.readouterr().out
    assert f.traced == 1
    assert out.count("y:") == 3 and "[3.]" in out and "[6.]" in out and "[15.]" in out
    ops.Print()("eager", Tensor(np.array([7.0], np.float32)))  # eagerly: printed at once
    assert "eager" in capsys.readouterr().out


def test_a_trace_in_one_thread_does_not_take_another_threads_values():
    take_summary_values()
    started, release = threading.Event(), threading.Event()

    @opforge.jit
    def slow(x):
        ops.ScalarSummary()("traced", x.sum())
        started.set()
        release.wait(10)  # the trace stays open while the other thread emits
        return x + 1.0

    worker = threading.Thread(target=lambda: slow(Tensor(np.ones(2, np.float32))))
    worker.start()
    started.wait(10)
    ops.ScalarSummary()("eager", Tensor(np.float32(5.0)))  # this thread traces nothing: kept at once
    assert "eager[:Scalar]" in take_summary_values()
    release.set()
    worker.join(10)
    assert list(take_summary_values()) == ["traced[:Scalar]"]
