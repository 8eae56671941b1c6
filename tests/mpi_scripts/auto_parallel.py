"""Run under ``mpiexec -n N``: MindSpore 2.6's ``AutoParallel`` cell, its settings in place of
``set_auto_parallel_context``. A network with a column-parallel MatMul then a row-parallel one (``shard``
strategies) trains 3 steps on each rank's block of the batch, to the parameters of one process trained on the
whole batch:

- the functional way of MindSpore's tutorials: ``value_and_grad`` and the optimizer in a ``train_step`` function,
  ``AutoParallel(train_step)`` with ``hsdp()`` (optimizer parallel), in PYNATIVE_MODE and GRAPH_MODE;
- through ``Model(AutoParallel(net), loss_fn, optimizer).train`` on a dataset sharded over the ranks;
- with ``dataset_strategy(((1, N), (1, 1)))``: each rank reads a block of the input's columns and the whole labels;
- data parallel with ``hsdp(shard_size, threshold)``: the optimizer states split over groups of ranks, the small
  ones whole.

The global context stays stand-alone throughout. Prints "AUTO-PARALLEL-OK <max relative difference>" or exits 1.
"""

import sys

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole, layout_of, local_of
from opforge.parallel.auto_parallel import AutoParallel

init()
size, rank = get_group_size(), get_rank()
rng = np.random.default_rng(0)
x = rng.standard_normal((8, 4 * size)).astype(np.float32)
y = rng.standard_normal((8, 4)).astype(np.float32)
layouts = {}  # each run's parameters' layouts, by name
rows = slice(rank * 8 // size, (rank + 1) * 8 // size)  # this rank's block of the batch


class Network(nn.Cell):
    def __init__(self, parallel: bool):
        super().__init__()
        self.w1 = opforge.Parameter(opforge.Tensor(rng_weights(4 * size, 8 * size, 1)), name="w1")
        self.w2 = opforge.Parameter(opforge.Tensor(rng_weights(8 * size, 4, 2)), name="w2")
        self.column = ops.MatMul()
        self.row = ops.MatMul()
        self.relu = ops.ReLU()
        if parallel:
            self.column.shard(((1, 1), (1, size)))
            self.row.shard(((1, size), (size, 1)))

    def construct(self, a):
        return self.row(self.relu(self.column(a, self.w1)), self.w2)


def rng_weights(n, m, seed):
    return (np.random.default_rng(seed).standard_normal((n, m)) / np.sqrt(n)).astype(np.float32)


def params_of(net) -> dict:
    layouts.update({p.name: str(layout_of(p)) for p in net.trainable_params()})
    return {p.name: gather_whole(p).asnumpy() for p in net.trainable_params()}


def one_process() -> dict:
    net = Network(parallel=False)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    for _ in range(3):
        step(opforge.Tensor(x), opforge.Tensor(y))
    return params_of(net)


def functional() -> dict:
    """MindSpore's tutorial: the step a function, AutoParallel around it. The ranks but the first start from other
    weights (as without set_seed): the first call broadcasts each Parameter at its first read."""
    net = Network(parallel=True)
    if rank:
        net.w1.set_data(opforge.Tensor(rng_weights(4 * size, 8 * size, 100 + rank)))
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    loss_fn = nn.MSELoss()

    def forward_fn(data, target):
        logits = net(data)
        return loss_fn(logits, target), logits

    grad_fn = opforge.value_and_grad(forward_fn, None, net.trainable_params(), has_aux=True)

    @opforge.jit
    def train_step(inputs, targets):
        (loss, _), grads = grad_fn(inputs, targets)
        optimizer(grads)
        return loss

    parallel_net = AutoParallel(train_step, parallel_mode="semi_auto")
    parallel_net.hsdp()
    for _ in range(3):
        parallel_net(opforge.Tensor(x[rows]), opforge.Tensor(y[rows]))
    return params_of(net)


def with_model() -> dict:
    net = Network(parallel=True)
    parallel_net = AutoParallel(net, parallel_mode="semi_auto")
    parallel_net.enable_gradients_mean()
    data = {"x": x, "y": y}
    dataset = opforge.dataset.NumpySlicesDataset(data, shuffle=False, num_shards=size, shard_id=rank).batch(8 // size)
    model = opforge.Model(parallel_net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    model.train(3, dataset)
    return params_of(net)


def column_blocks() -> dict:
    """dataset_strategy: each rank holds a block of the input's columns (the first MatMul's inner dim)."""
    net = Network(parallel=False)
    net.column.shard(((1, size), (size, 1)))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    parallel_step = AutoParallel(step)
    parallel_step.dataset_strategy(((1, size), (1, 1)))
    cols = slice(rank * 4, (rank + 1) * 4)
    for _ in range(3):
        parallel_step(opforge.Tensor(x[:, cols]), opforge.Tensor(y))
    return params_of(net)


def optimizer_groups() -> dict:
    """hsdp(shard_size, threshold): plain data parallel (no strategies), Momentum's states split over groups of
    shard_size ranks when the weight is large enough, else whole."""
    net = Network(parallel=False)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    parallel_step = AutoParallel(step)
    groups = 2 if size % 2 == 0 and size > 2 else size
    threshold = 1 if size >= 4 else 0  # KB: on 4 ranks w1 has 2 KB, w2 0.5 KB
    parallel_step.hsdp(shard_size=groups, threshold=threshold)
    for _ in range(3):
        parallel_step(opforge.Tensor(x[rows]), opforge.Tensor(y[rows]))
    moments = {p.name: local_of(m).shape for p, m in zip(net.trainable_params(), optimizer.moments)}
    w2_rows = 8 * size if threshold else 8 * size // groups
    if moments != {"w1": (4 * size // groups, 8 * size), "w2": (w2_rows, 4)}:
        sys.exit(f"hsdp(shard_size={groups}): the moments' blocks are {moments}")
    return params_of(net)


def differs(got: dict, want: dict) -> float:
    return max(float(np.abs(got[k] - want[k]).max() / (np.abs(want[k]).max() + 1e-12)) for k in want)


whole = one_process()
assert all("device_matrix=[]" in v for v in layouts.values()), layouts
worst = 0.0
runs = (("functional", functional), ("Model", with_model), ("dataset_strategy", column_blocks))
for name, run in runs + (("hsdp groups", optimizer_groups),):
    for mode in (opforge.PYNATIVE_MODE, opforge.GRAPH_MODE):
        opforge.set_context(mode=mode)
        layouts.clear()
        got = run()
        if run in (functional, with_model) and "tensor_map=[-1, 0]" not in layouts["w1"]:
            sys.exit(f"{name}: w1 was not split by columns: {layouts}")
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
        worst = max(worst, differs(got, whole))
        if differs(got, whole) > 1e-5:
            sys.exit(f"{name} in mode {mode}: the parameters differ from one process's by {differs(got, whole)}")
        if opforge.get_auto_parallel_context("parallel_mode") != "stand_alone":
            sys.exit(f"{name}: AutoParallel's settings stayed in the global context")
if rank == 0:
    print("AUTO-PARALLEL-OK", worst)
