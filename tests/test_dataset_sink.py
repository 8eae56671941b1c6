"""Dataset sink mode (opforge/train/sink.py) as MindSpore's: Model.train/fit with dataset_sink_mode=True and
sink_size -1 or > 0 train on every batch (parameters against a NumPy SGD over the same batch stream and
against non-sink training), the callbacks' counts and cur_step_num sequences in GRAPH_MODE (once per sink)
and PYNATIVE_MODE (each step), LossMonitor/ModelCheckpoint/TimeMonitor under sinks, eval's sink mode,
ms.data_sink, and the errors."""

import os
import re

import numpy as np
import pytest

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Tensor, nn
from opforge import dtype as mstype
from opforge.dataset import NumpySlicesDataset
from opforge.train import (
    Callback,
    CheckpointConfig,
    History,
    LossMonitor,
    Model,
    ModelCheckpoint,
    TimeMonitor,
)

N, BATCH, IN = 20, 5, 3  # 4 batches an epoch
LR = 0.1


@pytest.fixture(autouse=True)
def _pynative():
    yield
    opforge.set_context(mode=PYNATIVE_MODE)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, IN)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def dataset(shuffle=False, seed=0):
    return NumpySlicesDataset(_data(seed), column_names=["x", "y"], shuffle=shuffle).batch(BATCH)


def linear_model(metrics=None):
    opforge.set_seed(0)
    net = nn.Dense(IN, 1)
    opt = nn.SGD(net.trainable_params(), learning_rate=LR)
    return Model(net, loss_fn=nn.MSELoss(), optimizer=opt, metrics=metrics), net


def params(net):
    return [p.asnumpy().copy() for p in net.trainable_params()]


def numpy_sgd(w, b, steps):
    """Plain SGD on the mean squared error over the batches 0, 1, 2, 3, 0, 1, ... (``steps`` of them)."""
    x, y = _data()
    w, b = w.astype(np.float64), b.astype(np.float64)
    for k in range(steps):
        i = (k % (N // BATCH)) * BATCH
        xb, yb = x[i : i + BATCH], y[i : i + BATCH]
        dout = 2.0 * (xb @ w.T + b - yb) / BATCH
        w, b = w - LR * dout.T @ xb, b - LR * dout.sum(0)
    return w, b


class Recorder(Callback):
    """(hook, cur_epoch_num, cur_step_num, batch_num) of every training hook, and each step end's loss."""

    def __init__(self):
        self.calls, self.losses, self.sink_mode = [], [], []

    def _record(self, name, run_context):
        cb = run_context.original_args()
        self.calls.append((name, cb.cur_epoch_num, cb.cur_step_num, cb.batch_num))
        self.sink_mode.append(cb.dataset_sink_mode)

    def on_train_epoch_begin(self, run_context):
        self._record("epoch_begin", run_context)

    def on_train_step_begin(self, run_context):
        self._record("step_begin", run_context)

    def on_train_step_end(self, run_context):
        self._record("step_end", run_context)
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))

    def on_train_epoch_end(self, run_context):
        self._record("epoch_end", run_context)


def step_ends(recorder):
    return [c[2] for c in recorder.calls if c[0] == "step_end"]


# -- every batch is trained on ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [PYNATIVE_MODE, GRAPH_MODE])
@pytest.mark.parametrize(
    "epochs, sink_size, steps",
    [(3, -1, 12), (4, 2, 8), (4, 3, 12), (2, 6, 12), (3, 4, 12)],  # (sink_size 6 > the 4 batches of a pass)
)
def test_sink_training_matches_numpy_sgd_over_the_batch_stream(mode, epochs, sink_size, steps):
    opforge.set_context(mode=mode)
    model, net = linear_model()
    w0, b0 = params(net)
    model.train(epochs, dataset(), dataset_sink_mode=True, sink_size=sink_size)
    w, b = numpy_sgd(w0, b0, steps)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sink_size, sink_epochs, plain_epochs", [(-1, 3, 3), (2, 4, 2), (3, 4, 3)])
def test_sink_training_equals_plain_training_on_a_shuffled_dataset(sink_size, sink_epochs, plain_epochs):
    """Each pass over the dataset is its next epoch (a new shuffle), in both modes."""
    opforge.dataset.config.set_seed(7)
    model, net = linear_model()
    model.train(sink_epochs, dataset(shuffle=True), dataset_sink_mode=True, sink_size=sink_size)
    opforge.dataset.config.set_seed(7)
    plain_model, plain_net = linear_model()
    plain_model.train(plain_epochs, dataset(shuffle=True), dataset_sink_mode=False)
    for got, want in zip(params(net), params(plain_net)):
        np.testing.assert_array_equal(got, want)


# -- callbacks ------------------------------------------------------------------------------------------
def test_graph_mode_sink_whole_dataset_calls_the_step_hooks_once_per_epoch():
    plain = Recorder()
    linear_model()[0].train(3, dataset(), callbacks=[plain])  # the per-step losses to compare with
    opforge.set_context(mode=GRAPH_MODE)
    model, _ = linear_model()
    rec = Recorder()
    model.train(3, dataset(), callbacks=[rec], dataset_sink_mode=True)
    sink = lambda e: [("epoch_begin", e, 4 * e - 4, 4), ("step_begin", e, 4 * e, 4),  # noqa: E731
                      ("step_end", e, 4 * e, 4), ("epoch_end", e, 4 * e, 4)]  # fmt: skip
    assert rec.calls == sink(1) + sink(2) + sink(3)
    assert all(rec.sink_mode) and not any(plain.sink_mode)
    np.testing.assert_allclose(rec.losses, [plain.losses[i] for i in (3, 7, 11)], rtol=1e-6)  # the last step's


def test_graph_mode_sink_size_gives_sink_size_steps_an_epoch():
    opforge.set_context(mode=GRAPH_MODE)
    model, _ = linear_model()
    rec = Recorder()
    model.train(4, dataset(), callbacks=[rec], dataset_sink_mode=True, sink_size=3)
    assert [c for c in rec.calls if c[0] == "step_end"] == [("step_end", e, 3 * e, 3) for e in (1, 2, 3, 4)]
    assert [c[0] for c in rec.calls] == ["epoch_begin", "step_begin", "step_end", "epoch_end"] * 4


def test_pynative_sink_calls_the_step_hooks_each_step():
    """MindSpore's PyNative sink feeds one step at a time: step hooks each step, epochs of sink_size."""
    model, _ = linear_model()
    rec = Recorder()
    model.train(4, dataset(), callbacks=[rec], dataset_sink_mode=True, sink_size=3)
    assert step_ends(rec) == list(range(1, 13))
    assert [(c[1], c[2], c[3]) for c in rec.calls if c[0] == "epoch_end"] == [(e, 3 * e, 3) for e in (1, 2, 3, 4)]


def test_old_hook_names_and_initial_epoch_in_graph_sink_mode():
    class Old(Callback):
        def __init__(self):
            self.steps = []

        def step_end(self, run_context):
            self.steps.append(run_context.original_args().cur_step_num)

    opforge.set_context(mode=GRAPH_MODE)
    old = Old()
    linear_model()[0].train(4, dataset(), callbacks=[old], dataset_sink_mode=True, sink_size=2, initial_epoch=1)
    assert old.steps == [4, 6, 8]  # resumed at epoch 2 of 2-step epochs


@pytest.mark.parametrize("mode, steps_run", [(GRAPH_MODE, [3]), (PYNATIVE_MODE, [1, 2, 3])])
def test_a_stop_request_ends_training_after_the_sink(mode, steps_run):
    class StopAtOnce(Callback):
        def on_train_step_end(self, run_context):
            run_context.request_stop()

    opforge.set_context(mode=mode)
    rec = Recorder()
    linear_model()[0].train(4, dataset(), callbacks=[rec, StopAtOnce()], dataset_sink_mode=True, sink_size=3)
    assert step_ends(rec) == steps_run and rec.calls[-1][0] == "epoch_end"


def test_loss_monitor_prints_per_mindspore_rule_in_sink_mode(capsys):
    opforge.set_context(mode=GRAPH_MODE)
    model, _ = linear_model()
    model.train(4, dataset(), callbacks=[LossMonitor(5)], dataset_sink_mode=True, sink_size=3)
    printed = re.findall(r"epoch: (\d) step: (\d), loss is [-\d.e]+", capsys.readouterr().out)
    assert printed == [("2", "3"), ("4", "3")]  # steps 6 and 12: 5 steps since the last print
    model.train(2, dataset(), callbacks=[LossMonitor()], dataset_sink_mode=True)
    assert re.findall(r"epoch: (\d) step: (\d)", capsys.readouterr().out) == [("1", "4"), ("2", "4")]


def test_loss_monitor_in_plain_mode_prints_every_per_print_times_steps(capsys):
    linear_model()[0].train(2, dataset(), callbacks=[LossMonitor(3)])
    assert re.findall(r"epoch: (\d) step: (\d)", capsys.readouterr().out) == [("1", "3"), ("2", "2")]


def test_model_checkpoint_counts_the_sinks_steps(tmp_path):
    opforge.set_context(mode=GRAPH_MODE)
    model, net = linear_model()
    ckpt = ModelCheckpoint(prefix="lin", directory=str(tmp_path), config=CheckpointConfig(save_checkpoint_steps=5))
    model.train(4, dataset(), callbacks=[ckpt], dataset_sink_mode=True, sink_size=3)
    assert sorted(os.listdir(tmp_path)) == ["lin-2_3.ckpt", "lin-4_3.ckpt"]  # at steps 6 and 12, not again at the end
    saved = opforge.load_checkpoint(ckpt.latest_ckpt_file_name)
    np.testing.assert_array_equal(saved["weight"].asnumpy(), net.weight.asnumpy())


def test_model_checkpoint_saves_the_last_sink_at_the_end(tmp_path):
    opforge.set_context(mode=GRAPH_MODE)
    model, _ = linear_model()
    ckpt = ModelCheckpoint(prefix="lin", directory=str(tmp_path), config=CheckpointConfig(save_checkpoint_steps=10))
    model.train(3, dataset(), callbacks=[ckpt], dataset_sink_mode=True)
    assert sorted(os.listdir(tmp_path)) == ["lin-3_4.ckpt"]  # steps 4, 8 (< 10), 12: saved at 12, none at the end


def test_time_monitor_divides_by_the_sink_size(capsys):
    opforge.set_context(mode=GRAPH_MODE)
    model, _ = linear_model()
    model.train(2, dataset(), callbacks=[TimeMonitor(data_size=100)], dataset_sink_mode=True, sink_size=3)
    pairs = re.findall(r"epoch time: ([\d.]+) ms, per step time: ([\d.]+) ms", capsys.readouterr().out)
    assert len(pairs) == 2
    for epoch_ms, step_ms in pairs:  # batch_num (3) over data_size, as MindSpore
        assert float(step_ms) == pytest.approx(float(epoch_ms) / 3, abs=2e-3)


# -- eval and fit -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [PYNATIVE_MODE, GRAPH_MODE])
def test_eval_in_sink_mode_gives_the_same_metrics(mode):
    opforge.set_context(mode=mode)
    model, net = linear_model(metrics={"loss", "mae"})
    steps = []

    class EvalSteps(Callback):
        def on_eval_step_end(self, run_context):
            cb = run_context.original_args()
            steps.append((cb.cur_step_num, cb.dataset_sink_mode))

    sink = model.eval(dataset(), callbacks=[EvalSteps()], dataset_sink_mode=True)
    plain = model.eval(dataset(), dataset_sink_mode=False)
    assert sink == plain and steps == [(k, True) for k in (1, 2, 3, 4)]
    x, y = _data()
    pred = x @ net.weight.asnumpy().T + net.bias.asnumpy()
    assert sink["mae"] == pytest.approx(float(np.abs(pred - y).mean()), rel=1e-5)


def test_fit_in_sink_mode_trains_and_validates_each_epoch(capsys):
    opforge.set_context(mode=GRAPH_MODE)
    model, net = linear_model(metrics={"mae"})
    w0, b0 = params(net)
    history = History()
    model.fit(4, dataset(), dataset(), callbacks=[history], dataset_sink_mode=True, valid_dataset_sink_mode=True,
              sink_size=2)  # fmt: skip
    w, _ = numpy_sgd(w0, b0, 8)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    assert history.epoch == [1, 2, 3, 4] and len(history.history["mae"]) == 4
    assert history.history["mae"][-1] < history.history["mae"][0]
    assert capsys.readouterr().out.count("Eval result: epoch") == 4


# -- data_sink ----------------------------------------------------------------------------------------------
def test_data_sink_runs_fn_on_the_next_sink_size_batches():
    seen = []

    def fn(x, y):
        seen.append(x.asnumpy()[0, 0])
        return x.sum()

    sink_process = opforge.data_sink(fn, dataset(), sink_size=3)
    x, _ = _data()
    firsts = x[::BATCH, 0]
    outs = [float(sink_process().asnumpy()) for _ in range(3)]  # 9 batches: 2 passes and a batch
    np.testing.assert_array_equal(seen, [firsts[k % 4] for k in range(9)])
    np.testing.assert_allclose(outs, [x[i * BATCH : i * BATCH + BATCH].sum() for i in (2, 1, 0)], rtol=1e-5)
    assert opforge.train.data_sink is opforge.data_sink and sink_process.__name__ == "fn"


@pytest.mark.parametrize("jit_config", [None, {"jit_level": "O1"}])
def test_data_sink_training_loop_matches_numpy_sgd(jit_config):
    """MindSpore 2.x's functional loop: value_and_grad, an optimizer, data_sink; with jit_config, traced."""
    opforge.set_seed(0)
    net = nn.Dense(IN, 1)
    w0, b0 = params(net)
    opt = nn.SGD(net.trainable_params(), learning_rate=LR)
    loss_fn = nn.MSELoss()
    grad_fn = opforge.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    sink_process = opforge.data_sink(train_step, dataset(), sink_size=2, jit_config=jit_config)
    losses = [float(sink_process().asnumpy()) for _ in range(5)]  # 10 steps
    w, b = numpy_sgd(w0, b0, 10)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0]


def test_data_sink_input_signature():
    spec = (Tensor(shape=[None, IN], dtype=mstype.float32), Tensor(shape=[None, 1], dtype=mstype.float32))
    sink_process = opforge.data_sink(lambda x, y: x.shape, dataset(), sink_size=1, jit_config={}, input_signature=spec)
    assert tuple(sink_process()) == (BATCH, IN)
    with pytest.raises(TypeError, match="'data_sink'.*dtype"):
        opforge.data_sink(lambda x, y: x, dataset(), input_signature=(Tensor(shape=[None, IN], dtype=mstype.int32),
                                                                      spec[1]))  # fmt: skip
    with pytest.raises(ValueError, match=r"'data_sink'.*'input_signature' is \[-1, 4\]"):
        opforge.data_sink(lambda x, y: x, dataset(), input_signature=(Tensor(shape=[None, 4], dtype=mstype.float32),
                                                                      spec[1]))  # fmt: skip
    with pytest.raises(ValueError, match="'data_sink'.*1 Tensor"):
        opforge.data_sink(lambda x, y: x, dataset(), input_signature=spec[0])


# -- errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sink_size", [0, -2])
@pytest.mark.parametrize("sink_mode", [True, False])
def test_bad_sink_size_is_a_value_error_in_either_mode(sink_size, sink_mode):
    model, _ = linear_model(metrics={"mae"})
    with pytest.raises(ValueError, match=f"'Model.train'.*'sink_size' must be -1 or positive, but got {sink_size}"):
        model.train(1, dataset(), dataset_sink_mode=sink_mode, sink_size=sink_size)
    with pytest.raises(ValueError, match="'Model.fit'.*'sink_size'"):
        model.fit(1, dataset(), dataset(), dataset_sink_mode=sink_mode, sink_size=sink_size)


def test_bad_sink_arguments_are_type_errors():
    model, _ = linear_model(metrics={"mae"})
    with pytest.raises(TypeError, match="'Model.train'.*'sink_size' must be an int, but got float"):
        model.train(1, dataset(), dataset_sink_mode=True, sink_size=2.0)
    with pytest.raises(TypeError, match="'Model.train'.*'dataset_sink_mode' must be a bool, but got str"):
        model.train(1, dataset(), dataset_sink_mode="True")
    with pytest.raises(TypeError, match="'Model.eval'.*'dataset_sink_mode'"):
        model.eval(dataset(), dataset_sink_mode=1)
    with pytest.raises(TypeError, match="'Model.fit'.*'valid_dataset_sink_mode'"):
        model.fit(1, dataset(), dataset(), valid_dataset_sink_mode=None)


def test_an_empty_dataset_is_a_value_error():
    empty = NumpySlicesDataset((np.zeros((0, IN), np.float32), np.zeros((0, 1), np.float32)), ["x", "y"],
                               shuffle=False).batch(BATCH)  # fmt: skip
    with pytest.raises(ValueError, match="'Model.train'.*no data"):
        linear_model()[0].train(1, empty, dataset_sink_mode=True)
    with pytest.raises(ValueError, match="'data_sink'.*no rows"):
        opforge.data_sink(lambda x, y: x, empty)()


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"sink_size": 0}, ValueError, "'sink_size' must be positive, but got 0"),
        ({"sink_size": -1}, ValueError, "'sink_size' must be positive, but got -1"),
        ({"sink_size": "2"}, TypeError, "'sink_size' must be an int, but got str"),
        ({"fn": 3}, TypeError, "'fn' must be callable, but got int"),
        ({"dataset": [1, 2]}, TypeError, "'dataset' must be a Dataset, but got list"),
        ({"input_signature": 3}, TypeError, "'input_signature' must be a Tensor or a tuple"),
    ],
)
def test_data_sink_bad_arguments(kwargs, exc, match):
    args = {"fn": lambda x, y: x, "dataset": dataset(), **kwargs}
    with pytest.raises(exc, match=f"For 'data_sink', the {match}"):
        opforge.data_sink(**args)
