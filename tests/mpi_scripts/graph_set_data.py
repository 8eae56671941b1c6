"""Run under ``mpiexec -n N``: a data-parallel step with the parallel optimizer, traced in GRAPH_MODE, reads a
weight set between its replays (``Parameter.set_data``) as the eager step does: the trace refills the block it
updates from the weight on every replay. Prints "SET-DATA-OK <max difference>" on every rank or exits 1."""

import sys

import numpy as np

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init

init()
rank, size = get_rank(), get_group_size()


def train(mode):
    opforge.set_context(mode=mode)
    opforge.set_auto_parallel_context(
        parallel_mode="data_parallel", gradients_mean=True, enable_parallel_optimizer=True
    )
    nn.set_seed(0)
    net = nn.SequentialCell(nn.Dense(16, 8 * size, activation="relu"), nn.Dense(8 * size, 4 * size))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Adam(net.trainable_params(), 0.01))
    rng = np.random.default_rng(rank)
    x = opforge.Tensor(rng.standard_normal((8, 16)).astype(np.float32))
    y = opforge.Tensor(rng.integers(0, 4, 8).astype(np.int32))
    for _ in range(3):  # graph: eager, traced, replayed
        step(x, y)
    w = net[0].weight
    w.set_data(opforge.Tensor(np.full(w.shape, 0.01, np.float32)))
    for _ in range(2):
        step(x, y)
    if mode == opforge.GRAPH_MODE:
        assert step._sharded_graph.traced == 1, step._sharded_graph
    opforge.reset_auto_parallel_context()
    return [p.asnumpy() for p in net.trainable_params()]


eager, graph = train(opforge.PYNATIVE_MODE), train(opforge.GRAPH_MODE)
worst = max(float(np.max(np.abs(a - b))) for a, b in zip(eager, graph))
if worst > 1e-6:
    print(f"SET-DATA-FAIL rank {rank}: max difference {worst:.3g}", flush=True)
    sys.exit(1)
print(f"SET-DATA-OK {worst:.3g}", flush=True)
