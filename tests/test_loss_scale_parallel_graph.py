"""A loss-scaled training step (``nn.TrainOneStepWithLossScaleCell``, what ``Model(..., loss_scale_manager=...)``
builds: Pangu-alpha's setup) traced in GRAPH_MODE: stand-alone, in DATA_PARALLEL and in SEMI_AUTO_PARALLEL (whose
whole sharded step is one trace from its second call), here in a world of one rank. The overflow check and the
scale's update are operators, so each step, one of which overflows, equals the same training in PYNATIVE_MODE:
the overflowing step leaves the parameters and the optimizer's state as they were, and the dynamic scale halves
there and doubles after each ``scale_window`` clean steps (MindSpore's counting, written out below). On 2 ranks,
with split weights: tests/mpi_scripts/loss_scale_graph.py."""

from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest
from test_data_parallel import needs_mpi, run_job

import opforge
from opforge import Tensor, nn
from opforge.dataset import GeneratorDataset
from opforge.dispatch.sharding import ShardingWarning
from opforge.train import DynamicLossScaleManager, FixedLossScaleManager, Model

SCRIPTS = pathlib.Path(__file__).parent / "mpi_scripts"


pytestmark = pytest.mark.usefixtures("one_rank_parallel")  # (tests/conftest.py)


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 6, activation="relu")
        self.fc2 = nn.Dense(6, 3)
        self.fc1.matmul.shard(((1, 1), (1, 1)))  # (read in SEMI_AUTO_PARALLEL only)

    def construct(self, x):
        return self.fc2(self.fc1(x))


_R = np.random.default_rng(11)
_STEPS = 6
_OVERFLOW_AT = 2  # this step's gradients, times the loss scale, overflow float32 (its loss is finite)
_BATCHES = []
for _i in range(_STEPS):
    _x = _R.standard_normal((8, 4)).astype(np.float32)
    if _i == _OVERFLOW_AT:
        _x[0] = 1e22  # (its loss, about 1e36, is finite)
    _BATCHES.append((_x, _R.standard_normal((8, 3)).astype(np.float32)))

_PARALLEL = {
    "stand_alone": {},
    "data_parallel": {"parallel_mode": "data_parallel", "gradients_mean": True},
    "semi_auto_parallel": {"parallel_mode": "semi_auto_parallel", "full_batch": True},
    "auto_parallel": {"parallel_mode": "auto_parallel", "full_batch": True},  # (its search records the step)
}


def _model(parallel: str, mode, manager):
    opforge.reset_auto_parallel_context()
    opforge.set_context(mode=mode)
    if _PARALLEL[parallel]:
        opforge.set_auto_parallel_context(**_PARALLEL[parallel])
    nn.set_seed(1)
    net = _Net()
    loss = nn.MSELoss()
    # a rate per step: a skipped step does not count (global_step), so the next one takes the skipped one's rate
    optimizer = nn.Momentum(net.trainable_params(), [0.1, 0.09, 0.08, 0.07, 0.06, 0.05], 0.9)
    return Model(net, loss, optimizer, loss_scale_manager=manager())


def _values(cell) -> dict:
    return {p.name: p.asnumpy().copy() for p in cell.get_parameters()}


def _steps(parallel: str, mode, manager) -> list:
    """Each step's (loss, overflow, scale used, every parameter of the step after it)."""
    step = _model(parallel, mode, manager).train_network
    out = []
    for x, y in _BATCHES:
        loss, overflow, scale = step(Tensor(x), Tensor(y))
        out.append((float(loss.asnumpy()), bool(overflow.asnumpy()), float(scale.asnumpy()), _values(step)))
    return out


def _dynamic_scales(init: float, factor: float, window: int, overflows: list) -> list:
    """The scale each step uses: MindSpore's DynamicLossScaleUpdateCell (cur_iter from 1), written out."""
    scale, cur, last, used = init, 1, 0, []
    for overflow in overflows:
        used.append(scale)
        grow = cur - last >= window
        if overflow:
            scale = max(scale / factor, 1.0)
        elif grow:
            scale *= factor
        if overflow or grow:
            last = cur
        cur += 1
    return used


def _dynamic():
    return DynamicLossScaleManager(init_loss_scale=2.0**10, scale_factor=2, scale_window=2)


def _fixed():
    return FixedLossScaleManager(loss_scale=2.0**7, drop_overflow_update=True)


def _check_against_pynative(graph: list, eager: list) -> None:
    for i, ((g_loss, g_over, g_scale, g_params), (e_loss, e_over, e_scale, e_params)) in enumerate(zip(graph, eager)):
        assert g_over == e_over == (i == _OVERFLOW_AT), i
        assert g_scale == e_scale, i
        if i != _OVERFLOW_AT:
            np.testing.assert_allclose(g_loss, e_loss, rtol=1e-6)
        assert g_params.keys() == e_params.keys()
        for name in e_params:
            np.testing.assert_allclose(g_params[name], e_params[name], rtol=1e-5, atol=1e-6, err_msg=f"{i} {name}")


@pytest.mark.parametrize("parallel", list(_PARALLEL))
def test_graph_steps_with_a_dynamic_scale_equal_pynative(parallel):
    with warnings.catch_warnings():
        # AUTO_PARALLEL's strategy search records the step from shapes: no value is read, no fallback
        warnings.simplefilter("error", ShardingWarning)
        graph = _steps(parallel, opforge.GRAPH_MODE, _dynamic)
    eager = _steps(parallel, opforge.PYNATIVE_MODE, _dynamic)
    _check_against_pynative(graph, eager)
    overflows = [over for _, over, _, _ in eager]
    assert [scale for _, _, scale, _ in graph] == _dynamic_scales(2.0**10, 2, 2, overflows)
    assert len({scale for _, _, scale, _ in graph}) == 2  # halved and doubled
    # the overflowing step changed nothing but the scale and its counters (MindSpore skips the update)
    before, after = graph[_OVERFLOW_AT - 1][3], graph[_OVERFLOW_AT][3]
    moved = {"scale_sense", "current_iterator_step", "last_overflow_iterator_step"}
    for name in before:
        if name not in moved:
            np.testing.assert_array_equal(after[name], before[name], err_msg=name)
    assert after["global_step"] == before["global_step"] == _OVERFLOW_AT
    assert graph[-1][3]["current_iterator_step"] == _STEPS + 1
    # and the step did not change between the other steps' updates: it trained
    assert not np.array_equal(graph[-1][3]["fc1.weight"], graph[0][3]["fc1.weight"])


@pytest.mark.parametrize("parallel", ["data_parallel", "semi_auto_parallel"])
def test_graph_steps_with_a_fixed_scale_that_drops_overflows_equal_pynative(parallel):
    graph = _steps(parallel, opforge.GRAPH_MODE, _fixed)
    eager = _steps(parallel, opforge.PYNATIVE_MODE, _fixed)
    _check_against_pynative(graph, eager)
    assert {scale for _, _, scale, _ in graph} == {2.0**7}
    assert graph[-1][3]["global_step"] == _STEPS - 1  # one step skipped


def test_the_parallel_step_is_one_trace_replayed():
    model = _model("semi_auto_parallel", opforge.GRAPH_MODE, _dynamic)
    step = model.train_network
    for x, y in _BATCHES:
        step(Tensor(x), Tensor(y))
    assert step.__dict__["_jit_sharded"].traced == 1  # the first step lays out, the second traces, then replays
    model = _model("stand_alone", opforge.GRAPH_MODE, _dynamic)
    step = model.train_network
    for x, y in _BATCHES:
        step(Tensor(x), Tensor(y))
    assert step.__dict__["_jit_construct"].traced == 1


def test_model_train_in_semi_auto_parallel_graph_mode_equals_pynative():
    """The reported failure: Model.train's second step in GRAPH_MODE under SEMI_AUTO_PARALLEL."""
    finals = []
    for mode in (opforge.GRAPH_MODE, opforge.PYNATIVE_MODE):
        model = _model("semi_auto_parallel", mode, _dynamic)
        dataset = GeneratorDataset(lambda: iter(_BATCHES), ["x", "y"], shuffle=False)
        model.train(2, dataset, dataset_sink_mode=False)
        finals.append(_values(model.train_network))
    graph, eager = finals
    assert graph["scale_sense"] == eager["scale_sense"]
    assert graph["current_iterator_step"] == 2 * _STEPS + 1 and graph["global_step"] == 2 * _STEPS - 2
    for name in eager:
        np.testing.assert_allclose(graph[name], eager[name], rtol=1e-5, atol=1e-6, err_msg=name)


class _OwnStep(nn.TrainOneStepWithLossScaleCell):
    """A subclass's construct as the model zoo writes one (Pangu-alpha's, BERT's): it decides in Python."""

    def construct(self, x, y):
        loss = self.network(x, y)
        status, scaling_sens = self.start_overflow_check(loss, self.scale_sense)
        grads = self.grad(self.network, self.weights)(x, y, scaling_sens)
        grads = tuple(g / scaling_sens for g in grads)
        cond = self.get_overflow_status(status, grads)
        overflow = self.process_loss_scale(cond)
        if not overflow:
            self.optimizer(grads)
        return loss, cond, scaling_sens


@pytest.mark.parametrize("mode", [opforge.GRAPH_MODE, opforge.PYNATIVE_MODE])
def test_a_subclass_deciding_in_python_runs_eagerly_in_semi_auto_parallel(mode):
    model = _model("semi_auto_parallel", mode, _dynamic)
    base = model.train_network
    step = _OwnStep(base.network, base.optimizer, base.loss_scaling_manager)
    scales, flags = [], []
    for x, y in _BATCHES:
        _, overflow, scale = step(Tensor(x), Tensor(y))
        flags.append(bool(overflow.asnumpy()))
        scales.append(float(step.scale_sense.asnumpy()))
    assert flags == [i == _OVERFLOW_AT for i in range(_STEPS)]
    # (the scale after each step: the schedule's next use)
    assert scales == _dynamic_scales(2.0**10, 2, 2, flags + [False])[1:]
    assert "_jit_sharded" not in step.__dict__


@needs_mpi
@pytest.mark.parametrize("options", [[], ["--parallel-optimizer"]])
def test_two_ranks_with_split_weights_train_as_one_process(options):
    """Column- and row-parallel Dense in SEMI_AUTO_PARALLEL GRAPH_MODE (with the optimizer split too, or not), one
    step overflowing: each step's flag, scale and whole parameters equal one PYNATIVE_MODE process's
    (tests/mpi_scripts/loss_scale_graph.py)."""
    job = run_job([str(SCRIPTS / "loss_scale_graph.py"), *options], n=2, timeout=120)
    assert job.returncode == 0 and "LOSS-SCALE-OK" in job.stdout, job.stdout + job.stderr
