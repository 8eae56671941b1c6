"""DatasetHelper and connect_network_with_dataset (opforge/train/dataset_helper.py): a hand-written training loop's
iterator, without sink mode (one epoch per pass, the next pass the next epoch) and in sink mode (the connected
network takes each batch itself, sink_size steps a pass); dataset.config.set_enable_shared_mem."""

import numpy as np
import pytest

import opforge
from opforge import nn
from opforge.dataset import NumpySlicesDataset
from opforge.dataset import config as ds_config
from opforge.parallel._cost_model_context import _get_multi_subgraphs, _set_multi_subgraphs


def _dataset(rows=12, batch=4):
    x = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
    return NumpySlicesDataset((x, x.sum(1, keepdims=True)), ["x", "y"], shuffle=False).batch(batch), x


class Recorder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.seen = []

    def construct(self, x, y):
        self.seen.append(x.asnumpy()[:, 0].tolist())
        return y


def test_without_sink_mode_each_pass_is_the_next_epoch():
    data, x = _dataset()
    helper = opforge.DatasetHelper(data, dataset_sink_mode=False, epoch_num=2)
    assert len(helper) == 3 and helper.sink_size() == 3
    for _ in range(2):
        batches = [inputs for inputs in helper]
        assert len(batches) == 3 and all(len(b) == 2 for b in batches)
        np.testing.assert_array_equal(np.concatenate([b[0].asnumpy() for b in batches]), x)
    types, shapes = helper.types_shapes()
    assert shapes == [[4, 2], [4, 1]] and len(types) == 2


def test_sink_mode_with_a_connected_network_reads_the_stream_sink_size_steps_a_pass():
    data, x = _dataset()
    helper = opforge.DatasetHelper(data, dataset_sink_mode=True, sink_size=2, epoch_num=2)
    recorder = Recorder()
    network = opforge.connect_network_with_dataset(recorder, helper)
    steps = 0
    for _ in range(3):  # 3 passes of 2 steps: the 6 batches of 2 epochs
        for inputs in helper:
            assert inputs == ()
            network(*inputs)
            steps += 1
    assert steps == 6
    firsts = [row[0] for row in recorder.seen]
    assert firsts == [0.0, 8.0, 16.0, 0.0, 8.0, 16.0]  # the stream runs on across passes and epochs
    assert opforge.connect_network_with_dataset(recorder, opforge.DatasetHelper(data, False)) is recorder


def test_a_hand_written_loop_trains():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(8)
    net = nn.Dense(3, 1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    helper = opforge.train.DatasetHelper(data, dataset_sink_mode=False, epoch_num=10)
    losses = []
    for _ in range(10):
        for inputs in helper:
            losses.append(float(step(*inputs).asnumpy()))
    assert len(losses) == 40 and losses[-1] < 0.05 * losses[0]


def test_bad_arguments():
    data, _ = _dataset()
    with pytest.raises(TypeError, match="'dataset' must be a Dataset"):
        opforge.DatasetHelper([1, 2])
    with pytest.raises(ValueError, match="'sink_size' must be an int"):
        opforge.DatasetHelper(data, sink_size=0)
    with pytest.raises(ValueError, match="'epoch_num' must be an int"):
        opforge.DatasetHelper(data, epoch_num=0)
    with pytest.raises(TypeError, match="'dataset_helper' must be a DatasetHelper"):
        opforge.connect_network_with_dataset(nn.Dense(1, 1), data)


def test_set_enable_shared_mem_is_checked_and_kept():
    assert ds_config.get_enable_shared_mem() is True
    ds_config.set_enable_shared_mem(False)
    try:
        assert ds_config.get_enable_shared_mem() is False
    finally:
        ds_config.set_enable_shared_mem(True)
    with pytest.raises(TypeError, match="'enable' must be a bool"):
        ds_config.set_enable_shared_mem(1)


def test_parameter_server_context_is_checked_and_kept():
    with pytest.warns(UserWarning, match="no parameter server"):
        opforge.set_ps_context(enable_ps=True)
    try:
        assert opforge.get_ps_context("enable_ps") is True and opforge.context.get_ps_context("enable_ssl") is False
        with pytest.raises(TypeError, match="'scheduler_manage_port' must be int"):
            opforge.set_ps_context(scheduler_manage_port="1")
        with pytest.raises(ValueError, match="unknown option 'ps'"):
            opforge.set_ps_context(ps=True)
    finally:
        opforge.reset_ps_context()
    assert opforge.get_ps_context("enable_ps") is False
    w = opforge.Parameter(opforge.Tensor(np.ones(2, np.float32)), name="w")
    w.set_param_ps()
    assert w.is_param_ps is True and w.init_in_server is False
    dense = opforge.nn.Dense(2, 2)
    dense.set_param_ps(init_in_server=True)  # MindSpore 2.6's Cell.set_param_ps (its parameter_server sample)
    assert all(p.is_param_ps and p.init_in_server for p in dense.trainable_params())
    _set_multi_subgraphs()
    assert _get_multi_subgraphs() is True
    _set_multi_subgraphs(False)
