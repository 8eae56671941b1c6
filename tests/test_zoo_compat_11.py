"""Regressions for gaps the zoo's LSTM-CRF and TinyBERT met (tests/test_zoo_lstm_crf.py, tests/test_zoo_tinybert.py)."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn
from opforge.train.callback import TimeMonitor


def test_nn_metrics_module_holds_the_segmentation_metrics():
    # MindSpore's mindspore.nn.metrics exports ConfusionMatrixMetric (the LSTM-CRF's util.py imports it from there)
    from opforge.nn.metrics import ConfusionMatrixMetric, HausdorffDistance
    from opforge.train import metrics as train_metrics

    assert ConfusionMatrixMetric is nn.ConfusionMatrixMetric and HausdorffDistance is nn.HausdorffDistance
    assert train_metrics.ConfusionMatrixMetric is ConfusionMatrixMetric
    assert len(train_metrics.__all__) == len(set(train_metrics.__all__))
    metric = ConfusionMatrixMetric(
        skip_channel=False, metric_name="f1 score", calculation_method=False, decrease="mean"
    )
    metric.update(np.array([[[0, 1], [1, 0]]]), np.array([[[0, 1], [1, 0]]]))
    assert np.allclose(metric.eval(), 1.0)


class _Context:
    def __init__(self, **kw):
        self._kw = kw

    def original_args(self):
        return self._kw


def test_time_monitor_hooks_are_epoch_begin_and_epoch_end(capsys):
    # MindSpore's TimeMonitor defines epoch_begin / epoch_end, so a subclass overriding them replaces them
    calls = []

    class Eval(TimeMonitor):
        def __init__(self):  # the zoo's EvalCabllBack does not call TimeMonitor.__init__
            pass

        def epoch_begin(self, run_context):
            calls.append("begin")

        def epoch_end(self, run_context):
            calls.append("end")

    ctx = _Context(batch_num=2)
    cb = Eval()
    cb.on_train_epoch_begin(ctx)
    cb.on_train_epoch_end(ctx)
    assert calls == ["begin", "end"] and capsys.readouterr().out == ""
    monitor = TimeMonitor(4)
    monitor.on_train_epoch_begin(ctx)
    monitor.on_train_epoch_end(ctx)
    assert "epoch time:" in capsys.readouterr().out
    monitor = TimeMonitor()  # no data_size and no batch_num
    monitor.epoch_begin(_Context())
    with pytest.raises(ValueError, match="TimeMonitor"):
        monitor.epoch_end(_Context())


def test_cell_phase_follows_set_train_on_that_cell_only():
    # MindSpore's Cell._phase: 'train' at first, set_train(False) makes it 'predict' (the zoo's BertModelCLS reads it)
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 2)

        def construct(self, x):
            return x if self._phase == "train" else -x

    net = Net()
    assert net._phase == "train" and net.dense._phase == "train"
    net.set_train(False)
    assert net._phase == "predict" and net.dense._phase == "train" and not net.dense.training
    assert np.array_equal(net(Tensor(np.ones(2, np.float32))).asnumpy(), -np.ones(2))
    net.set_train()
    assert net._phase == "train" and net.dense.training
    with pytest.raises(TypeError, match="set_train"):
        net.set_train(1)
    assert opforge.nn.Cell()._phase == "train"
