"""opforge.train as MindSpore's mindspore.train: Model.train/eval/predict/fit over opforge.dataset, the
callbacks (order and run-context fields), ModelCheckpoint's files, the metrics, graph mode and early stop.
The data-parallel Model.train runs under ``mpiexec -n 2`` (tests/dp_scripts/model_train.py)."""

import io
import os
import re

import numpy as np
import pytest
from rich.console import Console
from test_data_parallel import SCRIPTS, needs_mpi, run_job

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Tensor, nn
from opforge.dataset import GeneratorDataset, NumpySlicesDataset
from opforge.train import (
    Accuracy,
    Callback,
    CheckpointConfig,
    EarlyStopping,
    History,
    LambdaCallback,
    Loss,
    LossMonitor,
    Model,
    ModelCheckpoint,
    Precision,
    ProgressBar,
    Recall,
    TimeMonitor,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
)

IN, CLASSES, N = 6, 3, 48


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(IN, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Dense(16, CLASSES)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Blobs:
    """A random-access source: three separable clusters of points."""

    def __init__(self, n=N, seed=0):
        centers = np.random.default_rng(99).standard_normal((CLASSES, IN)).astype(np.float32) * 3
        rng = np.random.default_rng(seed)
        self.y = rng.integers(0, CLASSES, n).astype(np.int32)
        self.x = (centers[self.y] + rng.standard_normal((n, IN))).astype(np.float32)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.y)


class StepLosses(Callback):
    def __init__(self):
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


@pytest.fixture(autouse=True)
def _pynative():
    yield
    opforge.set_context(mode=PYNATIVE_MODE)


def make_model(metrics=None, lr=0.05):
    opforge.set_seed(0)
    net = MLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    return Model(net, loss_fn=loss, optimizer=opt, metrics=metrics), net


def dataset(batch=8, source=None):
    return GeneratorDataset(source or Blobs(), ["data", "label"], shuffle=False).batch(batch)


def test_train_loses_loss_and_eval_equals_hand_computed_metrics():
    model, net = make_model(metrics={"acc": Accuracy(), "loss": Loss(), "top1": Top1CategoricalAccuracy()})
    steps = StepLosses()
    model.train(8, dataset(), callbacks=[steps])
    assert len(steps.losses) == 8 * 6 and all(np.isfinite(steps.losses))
    assert np.mean(steps.losses[-6:]) < 0.5 * np.mean(steps.losses[:6])

    valid = Blobs(30, seed=1)
    result = model.eval(dataset(7, valid))
    logits = net(Tensor(valid.x)).asnumpy()
    assert result["acc"] == pytest.approx(float((logits.argmax(1) == valid.y).mean()))
    assert result["top1"] == result["acc"] and result["acc"] > 0.8
    shifted = logits - logits.max(1, keepdims=True)
    nll = -(shifted[np.arange(30), valid.y] - np.log(np.exp(shifted).sum(1)))
    per_batch = [nll[i : i + 7].mean() for i in range(0, 30, 7)]  # Loss: the mean of the batches' losses
    assert result["loss"] == pytest.approx(float(np.mean(per_batch)), rel=1e-5)
    np.testing.assert_allclose(model.predict(Tensor(valid.x)).asnumpy(), logits, rtol=1e-6)


def test_metric_names_as_a_set_and_nn_reexports():
    model, _ = make_model(metrics={"acc", "loss"})
    assert set(model.eval(dataset())) == {"acc", "loss"}
    assert nn.Accuracy is Accuracy and opforge.train.metrics.Accuracy is Accuracy
    with pytest.raises(ValueError, match="'Model.eval'.*metrics"):
        make_model()[0].eval(dataset())


def test_precision_recall_topk_against_hand_counts():
    logits = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], np.float32)
    labels = np.array([0, 1, 2, 2])
    precision, recall = Precision(), Recall()
    precision.update(logits, labels)
    recall.update(Tensor(logits), Tensor(labels))
    np.testing.assert_allclose(precision.eval(), [1.0, 0.5, 1.0])  # predicted 0,1,1,2
    np.testing.assert_allclose(recall.eval(), [1.0, 1.0, 0.5])
    assert recall.eval(average=True) == pytest.approx(2.5 / 3)
    top5 = Top5CategoricalAccuracy()
    top5.update(np.eye(6)[[0, 1]], np.array([5, 1]))
    assert top5.eval() == 0.5  # sample 0's label 5 has the smallest logit of six, sixth of them
    accuracy = Accuracy()
    accuracy.update(logits, np.eye(3)[labels])  # one-hot labels too
    assert accuracy.eval() == 0.75
    accuracy.clear()
    with pytest.raises(RuntimeError, match="'Accuracy'.*update"):
        accuracy.eval()


class Recorder(Callback):
    """Every hook it sees, with the run context's fields at that point."""

    def __init__(self):
        self.calls = []

    def _record(self, name, run_context):
        cb = run_context.original_args()
        self.calls.append((name, cb.cur_epoch_num, cb.cur_step_num))
        assert cb.epoch_num == 3 and cb.batch_num == 2
        assert isinstance(cb.train_network, nn.TrainOneStepCell) and isinstance(cb.optimizer, nn.Momentum)
        assert cb.parallel_mode == "stand_alone" and cb.device_number == 1 and cb.dataset_sink_mode is False
        assert isinstance(cb.loss_fn, nn.SoftmaxCrossEntropyWithLogits) and self in cb.list_callback

    def on_train_begin(self, rc):
        self._record("train_begin", rc)

    def on_train_epoch_begin(self, rc):
        self._record("epoch_begin", rc)

    def on_train_step_begin(self, rc):
        self._record("step_begin", rc)

    def on_train_step_end(self, rc):
        self._record("step_end", rc)
        assert isinstance(rc.original_args().net_outputs, Tensor)

    def on_train_epoch_end(self, rc):
        self._record("epoch_end", rc)

    def on_train_end(self, rc):
        self._record("train_end", rc)


class OldNames(Callback):
    def __init__(self):
        self.calls = []

    def begin(self, rc):
        self.calls.append("begin")

    def epoch_begin(self, rc):
        self.calls.append("epoch_begin")

    def step_end(self, rc):
        self.calls.append("step_end")

    def epoch_end(self, rc):
        self.calls.append("epoch_end")

    def end(self, rc):
        self.calls.append("end")


def test_callbacks_in_mindsporess_order_with_the_run_context_fields(capsys):
    model, _ = make_model()
    recorder, old, history = Recorder(), OldNames(), History()
    lam = []
    data = dataset(batch=24)  # two steps per epoch
    model.train(3, data, callbacks=[recorder, old, history, LossMonitor(1), LambdaCallback(on_train_end=lam.append)])
    epoch = lambda e, s: [("epoch_begin", e, s), ("step_begin", e, s + 1), ("step_end", e, s + 1),  # noqa: E731
                          ("step_begin", e, s + 2), ("step_end", e, s + 2), ("epoch_end", e, s + 2)]  # fmt: skip
    want = [("train_begin", 0, 0), *epoch(1, 0), *epoch(2, 2), *epoch(3, 4), ("train_end", 3, 6)]
    assert recorder.calls == want
    assert old.calls == ["begin"] + ["epoch_begin", "step_end", "step_end", "epoch_end"] * 3 + ["end"]
    assert history.epoch == [1, 2, 3] and len(history.history["net_output"]) == 3
    assert len(lam) == 1 and lam[0].original_args().cur_step_num == 6
    printed = capsys.readouterr().out
    assert re.findall(r"epoch: (\d) step: (\d), loss is [-\d.e]+", printed) == [
        (str(e), str(s)) for e in (1, 2, 3) for s in (1, 2)
    ]


def test_initial_epoch_and_request_stop():
    model, _ = make_model()
    recorder = Recorder()

    class StopAtStep3(Callback):
        def on_train_step_end(self, run_context):
            if run_context.original_args().cur_step_num == 3:
                run_context.request_stop()

    model.train(3, dataset(batch=24), callbacks=[recorder, StopAtStep3()], initial_epoch=1)
    steps = [c for c in recorder.calls if c[0] == "step_end"]
    assert steps == [("step_end", 2, 3)] and recorder.calls[-1] == ("train_end", 2, 3)


def test_early_stopping_on_a_validation_metric():
    model, _ = make_model(metrics={"acc": Accuracy()}, lr=0.0)  # nothing improves: stop after patience
    stop, epochs = EarlyStopping(monitor="acc", patience=2), History()
    model.fit(10, dataset(), valid_dataset=dataset(), callbacks=[epochs, stop])
    assert epochs.epoch == [1, 2, 3] and stop.stopped_epoch == 3 and len(epochs.history["acc"]) == 3


def test_early_stopping_on_eval_loss_restores_the_best_weights():
    model, net = make_model(metrics={"loss"}, lr=1.0)  # too large a step: the validation loss grows

    class Weights(Callback):
        def __init__(self):
            self.after = []

        def on_train_epoch_end(self, run_context):
            self.after.append([p.asnumpy().copy() for p in net.trainable_params()])

    weights = Weights()
    stop = EarlyStopping(patience=1, restore_best_weights=True)  # monitor "eval_loss": fit's Loss metric
    model.fit(10, dataset(), valid_dataset=dataset(), callbacks=[weights, stop])
    assert 1 < stop.stopped_epoch < 10
    best_epoch = stop.stopped_epoch - stop.patience  # the wait counts the epochs since the best
    for p, w in zip(net.trainable_params(), weights.after[best_epoch - 1]):
        np.testing.assert_array_equal(p.asnumpy(), w)


def test_model_checkpoint_files_follow_mindspore_names(tmp_path):
    model, net = make_model()
    config = CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=2)
    ckpt = ModelCheckpoint(prefix="mlp", directory=str(tmp_path), config=config)
    model.train(2, dataset(), callbacks=[ckpt, TimeMonitor()])  # 6 steps an epoch: saves at 4, 8, 12
    assert sorted(os.listdir(tmp_path)) == ["mlp-2_2.ckpt", "mlp-2_6.ckpt"]  # kept the last 2
    assert ckpt.latest_ckpt_file_name == str(tmp_path / "mlp-2_6.ckpt")
    saved = opforge.load_checkpoint(ckpt.latest_ckpt_file_name)
    for p in net.trainable_params():
        np.testing.assert_array_equal(saved[p.name].asnumpy(), p.asnumpy())
    with pytest.raises(ValueError, match="'CheckpointConfig'.*'save_checkpoint_steps'"):
        CheckpointConfig(save_checkpoint_steps=-1)
    # a rerun into the folder (a resumed training) names its files mlp_1-..., then mlp_2-..., as MindSpore's
    assert ModelCheckpoint(prefix="mlp", directory=str(tmp_path)).prefix == "mlp_1"
    (tmp_path / "mlp_1-1_6.ckpt").write_bytes(b"")
    assert ModelCheckpoint(prefix="mlp", directory=str(tmp_path)).prefix == "mlp_2"
    assert ModelCheckpoint(prefix="other", directory=str(tmp_path)).prefix == "other"


def test_graph_mode_gives_the_losses_of_pynative():
    def losses(mode):
        opforge.set_context(mode=mode)
        model, net = make_model(metrics={"acc", "loss"})
        steps = StepLosses()
        model.train(2, dataset(), callbacks=[steps])
        steps.losses.append(model.eval(dataset())["loss"])
        return steps.losses, [p.asnumpy() for p in net.trainable_params()], model

    eager, eager_params, _ = losses(PYNATIVE_MODE)
    graph, graph_params, model = losses(GRAPH_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-6)  # the steps' losses, then eval's
    for g, e in zip(graph_params, eager_params):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert model.train_network._graph.traced >= 1  # the step was traced, then replayed


def test_progress_bar_shows_each_epoch_with_its_loss():
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    model, _ = make_model()
    model.train(2, dataset(), callbacks=[ProgressBar(console)])
    shown = console.file.getvalue()
    assert "epoch 1/2" in shown and "epoch 2/2" in shown and "6/6" in shown and "loss " in shown


def test_numpy_slices_dataset_and_sink_mode_accepted():
    blobs = Blobs()
    data = NumpySlicesDataset({"data": blobs.x, "label": blobs.y}, shuffle=False).batch(16)
    model, _ = make_model(metrics={"acc"})
    steps = StepLosses()
    model.train(2, data, callbacks=steps, dataset_sink_mode=True)
    assert len(steps.losses) == 6


def test_bad_arguments_name_model():
    net = MLP()
    with pytest.raises(TypeError, match="'Model'.*'network'"):
        Model(object())
    with pytest.raises(ValueError, match="'Model.train'.*'epoch'"):
        Model(net, nn.MSELoss(), nn.SGD(net.trainable_params())).train(0, dataset())
    with pytest.raises(RuntimeError, match="'Model.train'.*'optimizer'"):
        Model(net, nn.MSELoss()).train(1, dataset())


@needs_mpi
@pytest.mark.parametrize("parallel_optimizer", [False, True])
def test_data_parallel_model_train_equals_one_process(parallel_optimizer):
    """In GRAPH_MODE; with the parallel optimizer the whole step is one trace (the script checks it)."""
    argv = [str(SCRIPTS / "model_train.py")] + (["--parallel-optimizer"] if parallel_optimizer else [])
    result = run_job(argv, n=2, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MODEL-DP-OK" in result.stdout, result.stdout + result.stderr


def _exit_model():
    opforge.set_seed(0)
    net = nn.Dense(4, 2)
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    rng = np.random.default_rng(0)
    data = NumpySlicesDataset(
        {"x": rng.standard_normal((10, 4)).astype(np.float32), "y": rng.standard_normal((10, 2)).astype(np.float32)},
        shuffle=False,
    ).batch(2)  # 5 steps an epoch
    return model, data


@pytest.mark.parametrize("mode", [PYNATIVE_MODE, GRAPH_MODE])
def test_on_request_exit_stops_after_the_step_and_saves(tmp_path, monkeypatch, mode):
    """MindSpore's graceful exit (its graceful_exit sample): with MS_ENABLE_GRACEFUL_EXIT=1 the training step
    holds the flags, OnRequestExit reads {"GracefulExit": 1} at a step's beginning, and the run stops after that
    step with rank_<id>/<name>_train.ckpt (its epoch, step and global step) and .mindir written; a new run loads
    that checkpoint when it begins."""
    from opforge.train import OnRequestExit, RunContext
    from opforge.train.callback import CallbackParam

    monkeypatch.setenv("MS_ENABLE_GRACEFUL_EXIT", "1")
    opforge.set_context(mode=mode)
    config = tmp_path / "exit.json"

    class AskAtStep2(Callback):
        def on_train_step_end(self, run_context):
            if run_context.original_args().cur_step_num == 2:
                config.write_text('{"GracefulExit": 1}')

    model, data = _exit_model()
    steps = []
    record = LambdaCallback(on_train_step_end=lambda rc: steps.append(rc.original_args().cur_step_num))
    exit_cb = OnRequestExit(file_name="Net", directory=str(tmp_path), config_file=str(config))
    model.train(3, data, callbacks=[AskAtStep2(), exit_cb, record], dataset_sink_mode=False)
    assert steps == [1, 2, 3]  # the request read at step 3's beginning, the run stopped after it
    names = {p.name for p in model.train_network.get_parameters()}
    assert {"graceful_exit", "graceful_init"} <= names
    saved = opforge.load_checkpoint(str(tmp_path / "rank_0" / "Net_train.ckpt"))
    assert int(saved["step_num"].asnumpy()) == 3 and int(saved["global_step"].asnumpy()) == 3
    assert (tmp_path / "rank_0" / "Net_train.mindir").is_file()
    np.testing.assert_array_equal(saved["weight"].asnumpy(), model.train_network.network._backbone.weight.asnumpy())
    fresh, _ = _exit_model()
    OnRequestExit(file_name="Net", directory=str(tmp_path)).on_train_begin(
        RunContext(CallbackParam(train_network=fresh.train_network))
    )
    np.testing.assert_array_equal(fresh.train_network.network._backbone.weight.asnumpy(), saved["weight"].asnumpy())


def test_on_request_exit_in_graph_mode_sink_training(tmp_path, monkeypatch):
    """GRAPH_MODE with dataset_sink_mode=True: the sink's first batch is the callbacks' train_dataset_element (as
    MindSpore gives it), so the graceful exit exports the MINDIR too (it raised on a None)."""
    from opforge.train import OnRequestExit

    monkeypatch.setenv("MS_ENABLE_GRACEFUL_EXIT", "1")
    opforge.set_context(mode=GRAPH_MODE)
    config = tmp_path / "exit.json"
    config.write_text('{"GracefulExit": 1}')
    model, data = _exit_model()
    model.train(3, data, callbacks=[OnRequestExit(directory=str(tmp_path), config_file=str(config))])
    assert (tmp_path / "rank_0" / "Net_train.ckpt").is_file() and (tmp_path / "rank_0" / "Net_train.mindir").is_file()


def test_on_request_exit_signal_and_argument_errors(tmp_path):
    """Without MS_ENABLE_GRACEFUL_EXIT a signal makes the training's end save (MindSpore's); bad arguments are
    ValueErrors; SIGKILL cannot be asked for."""
    import signal

    from opforge.train import OnRequestExit

    class Signal(Callback):
        def on_train_step_end(self, run_context):
            if run_context.original_args().cur_step_num == 2:
                os.kill(os.getpid(), signal.SIGUSR1)

    model, data = _exit_model()
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        exit_cb = OnRequestExit(save_mindir=False, file_name="Sig", directory=str(tmp_path), sig=signal.SIGUSR1)
        model.train(1, data, callbacks=[Signal(), exit_cb], dataset_sink_mode=False)
        # the handler given back when training ends (a SIGTERM handler left behind kept forked dataset workers
        # alive through their pool's terminate: the suite hung)
        assert signal.getsignal(signal.SIGUSR1) is previous
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert exit_cb.exit and (tmp_path / "rank_0" / "Sig_train.ckpt").is_file()
    for kwargs in ({"save_ckpt": 1}, {"file_name": 3}, {"sig": "TERM"}, {"sig": signal.SIGKILL}):
        with pytest.raises(ValueError, match="OnRequestExit"):
            OnRequestExit(directory=str(tmp_path), **kwargs)


@needs_mpi
def test_on_request_exit_stops_every_rank_after_the_same_step(tmp_path):
    """Data parallel on 2 ranks: the request reaches the ranks at different steps, and ExitByRequest's AllReduce
    stops them all after the first step at which every rank has asked (MindSpore's graceful_exit sample)."""
    job = run_job(
        [str(SCRIPTS / "graceful_exit.py"), str(tmp_path)], n=2, timeout=180, env={"MS_ENABLE_GRACEFUL_EXIT": "1"}
    )
    assert job.returncode == 0 and "GRACEFUL-OK" in job.stdout, job.stdout + job.stderr


def test_reduce_lr_on_plateau_multiplies_the_rate_after_patience_epochs():
    """MindSpore's ReduceLROnPlateau: each epoch's loss (a constant network: no improvement after the first epoch)
    waits ``patience`` epochs, then the rate times ``factor`` (not below ``min_lr``), ``cooldown`` epochs not
    counting after; a dynamic learning rate is refused; the arguments are checked."""
    from opforge.train import ReduceLROnPlateau, RunContext
    from opforge.train.callback import CallbackParam

    class Flat(nn.Cell):  # a loss that does not move: every epoch after the first is a plateau
        def __init__(self):
            super().__init__()
            self.w = opforge.Parameter(Tensor(np.zeros(1, np.float32)), name="w")

        def construct(self, x, y):
            return (self.w * 0.0).sum() + 1.0

    rates = []
    for patience, cooldown, want in ((1, 0, [1.0, 0.1, 0.01, 0.001]), (2, 1, [1.0, 1.0, 0.1, 0.1])):
        net = Flat()
        optimizer = nn.SGD(net.trainable_params(), 1.0)
        model = Model(net, optimizer=optimizer)  # (the network computes its loss)
        data = NumpySlicesDataset({"x": np.ones((2, 1), np.float32), "y": np.ones((2, 1), np.float32)}).batch(2)
        rate = optimizer.learning_rate
        record = LambdaCallback(on_train_epoch_end=lambda rc, rate=rate: rates.append(float(rate.asnumpy())))
        plateau = ReduceLROnPlateau(monitor="loss", patience=patience, cooldown=cooldown, min_lr=0.001)
        model.train(4, data, callbacks=[plateau, record], dataset_sink_mode=False)
        np.testing.assert_allclose(rates, want, rtol=1e-6)
        rates.clear()
    dynamic = nn.SGD(Flat().trainable_params(), [0.1, 0.01])
    with pytest.raises(ValueError, match="dynamic learning rate"):
        ReduceLROnPlateau(monitor="loss").on_train_epoch_end(
            RunContext(CallbackParam(optimizer=dynamic, net_outputs=Tensor(1.0), cur_epoch_num=1))
        )
    for kwargs in ({"factor": 1.0}, {"patience": -1}, {"mode": "up"}, {"min_lr": "0"}):
        with pytest.raises(ValueError, match="ReduceLROnPlateau"):
            ReduceLROnPlateau(**kwargs)


def test_backup_and_restore_resumes_the_weights_of_an_interrupted_run(tmp_path):
    """MindSpore's BackupAndRestore: the training network saved each epoch to backup.ckpt; a run interrupted
    (an exception in epoch 3) leaves it, and a new run loads it when it begins; a finished run deletes it."""
    from opforge.train import BackupAndRestore

    class Interrupt(Callback):
        def on_train_epoch_begin(self, run_context):
            if run_context.original_args().cur_epoch_num == 3:
                raise KeyboardInterrupt

    model, data = _exit_model()
    backup = BackupAndRestore(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        model.train(5, data, callbacks=[backup, Interrupt()], dataset_sink_mode=False)
    saved = opforge.load_checkpoint(str(tmp_path / "backup.ckpt"))
    fresh, _ = _exit_model()
    seen = []
    probe = LambdaCallback(
        on_train_begin=lambda rc: seen.append(rc.original_args().train_network.network._backbone.weight.asnumpy())
    )
    fresh.train(1, data, callbacks=[BackupAndRestore(str(tmp_path)), probe], dataset_sink_mode=False)
    np.testing.assert_array_equal(seen[0], saved["weight"].asnumpy())
    assert not (tmp_path / "backup.ckpt").exists()
    with pytest.raises(ValueError, match="save_freq"):
        BackupAndRestore(str(tmp_path), save_freq=0)
