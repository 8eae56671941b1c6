"""The demo: its training loop learns (synthetic data, no scikit-learn needed) and the
``opforge demo`` command runs end to end on the digits (skipped without scikit-learn)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import opforge
from opforge.tools import cli, demo


def _small_dataset() -> demo.Dataset:
    return demo.synthetic_dataset(n_train=256, n_test=64, num_features=16, num_classes=4, seed=1)


def test_loss_falls_within_a_few_steps():
    data = _small_dataset()
    _, history = demo.train(data, epochs=2, batch_size=32, optimizer="momentum", seed=0)
    steps = history.step_loss
    assert len(steps) == 16 and len(history.loss) == 2
    assert np.mean(steps[-4:]) < 0.5 * steps[0]
    assert history.loss[1] < history.loss[0]
    assert history.final_test_acc > 0.5  # four classes: chance is 0.25


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_each_optimizer_learns_and_runs_are_deterministic(optimizer):
    data = _small_dataset()
    net, first = demo.train(data, epochs=1, batch_size=32, optimizer=optimizer, seed=3, max_steps=6)
    _, again = demo.train(data, epochs=1, batch_size=32, optimizer=optimizer, seed=3, max_steps=6)
    assert len(first.step_loss) == 6 and first.step_loss == again.step_loss
    assert first.step_loss[-1] < first.step_loss[0]
    assert not net.training  # left in evaluation mode
    _, other = demo.train(data, epochs=1, batch_size=32, optimizer=optimizer, seed=4, max_steps=6)
    assert other.step_loss != first.step_loss


def test_demo_helpers_validate_their_arguments():
    params = demo.MLP(4, 8, 2).trainable_params()
    assert isinstance(demo.make_optimizer("SGD", params), opforge.nn.SGD)
    with pytest.raises(ValueError, match="unknown optimizer"):
        demo.make_optimizer("rmsprop", params)
    with pytest.raises(ValueError, match="epochs and batch_size"):
        demo.train(_small_dataset(), epochs=0)


def test_missing_scikit_learn_gives_an_install_hint(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(demo.MissingDependencyError, match=r'pip install "opforge\[demo\]"'):
        demo.load_digits_dataset()
    assert cli.main(["demo", "--epochs", "1"]) == 1
    assert 'pip install "opforge[demo]"' in capsys.readouterr().out


def test_digits_dataset_is_standardised_with_a_fixed_split():
    pytest.importorskip("sklearn")
    a, b = demo.load_digits_dataset(), demo.load_digits_dataset()
    assert a.x_train.shape == (1438, 64) and a.x_test.shape == (359, 64) and a.num_classes == 10
    assert a.x_train.dtype == np.float32 and a.y_train.dtype == np.int32
    np.testing.assert_array_equal(a.y_test, b.y_test)
    np.testing.assert_allclose(a.x_train.mean(axis=0), 0, atol=1e-5)
    assert set(np.unique(a.y_train)) == set(range(10))


def test_cli_demo_runs_one_epoch(tmp_path, capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    threads = opforge.get_context("num_threads")
    plot = tmp_path / "curves.png"
    assert cli.main(["demo", "--epochs", "1", "--optimizer", "momentum", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "epoch   1" in out and "final test accuracy" in out
    accuracy = float(out.split("final test accuracy: ")[1].split("%")[0])
    assert accuracy > 85.0
    assert "Kernels that ran" in out and "MatMul" in out and "ApplyMomentum" in out
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert opforge.get_context("num_threads") == threads  # restored after the run
    assert cli.main(["demo", "--epochs", "0"]) == 2


@pytest.mark.parametrize("optimizer", ["adam", "momentum"])
def test_default_training_reaches_95_percent_on_digits(optimizer):
    pytest.importorskip("sklearn")
    threads = opforge.get_context("num_threads")
    opforge.set_context(num_threads=1)
    try:
        _, history = demo.train(demo.load_digits_dataset(), epochs=20, batch_size=32, optimizer=optimizer, seed=0)
    finally:
        opforge.set_context(num_threads=threads)
    assert history.final_test_acc >= 0.95
    assert history.loss[-1] < 0.1 * history.loss[0]


def test_lenet_reaches_97_percent_on_digits():
    """`opforge demo --model lenet`: Conv2D, MaxPool, Flatten and Dense trained end to end."""
    history = demo.train(demo.load_digits_dataset(), epochs=20, seed=0, model="lenet")[1]
    assert history.final_test_acc >= 0.97
    assert history.loss[-1] < history.loss[0] / 10


def test_cli_demo_trains_lenet(capsys):
    assert cli.main(["demo", "--model", "lenet", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert "LeNet-5" in out and "Conv2D" in out  # the banner and the profiler's kernel table
