"""Run under ``mpiexec -n N``: ``Model.train`` data-parallel equals one process's ``Model.train``.

Every rank reads its shard of a ``GeneratorDataset`` (``num_shards``/``shard_id``, rows strided over the
ranks, so the ranks' batches of ``12 / N`` rows together are one process's batch of 12), in GRAPH_MODE,
with ``gradients_mean`` and a mean loss; rank 0 then trains one process (stand-alone, PYNATIVE_MODE) on
the whole batches from the same initial weights and compares every rank's parameters and its own
losses' mean with it. Prints "MODEL-DP-OK ..." on success; exits 1 naming what differs otherwise.

With ``--parallel-optimizer`` (``enable_parallel_optimizer=True``, ZeRO stage 1) the whole training step is
traced once and replayed (the gradients reduce-scattered, the weights all-gathered, as operators).

    mpiexec -n 2 python tests/dp_scripts/model_train.py [--parallel-optimizer]
"""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.context import ParallelMode
from opforge.dataset import GeneratorDataset
from opforge.train import Callback, Model

parser = argparse.ArgumentParser()
parser.add_argument("--parallel-optimizer", action="store_true")
args = parser.parse_args()

init()
rank, size = get_rank(), get_group_size()
comm = MPI.COMM_WORLD
opforge.set_context(num_threads=1)
BATCH, ROWS, EPOCHS = 12, 36, 2


class Source:
    def __init__(self):
        rng = np.random.default_rng(5)
        self.x = rng.standard_normal((ROWS, 8)).astype(np.float32)
        self.y = rng.integers(0, 3, ROWS).astype(np.int32)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return ROWS


class Losses(Callback):
    def __init__(self):
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


def train(shards):
    opforge.set_seed(0)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.Tanh(), nn.Dense(16, 3)])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))
    shard = {} if shards is None else {"num_shards": size, "shard_id": rank}
    data = GeneratorDataset(Source(), ["data", "label"], shuffle=False, **shard).batch(BATCH // (shards or 1))
    losses = Losses()
    model.train(EPOCHS, data, callbacks=[losses])
    if args.parallel_optimizer and shards:  # the first step eager (laying the states out), then one trace
        graph = model.train_network._sharded_graph
        assert graph.traced == 1 and "ReduceScatter" in graph.explain(), graph.explain()
    return [p.asnumpy() for p in net.trainable_params()], losses.losses


opforge.set_auto_parallel_context(
    parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True, enable_parallel_optimizer=args.parallel_optimizer
)
opforge.set_context(mode=opforge.GRAPH_MODE)
mine, my_losses = train(size)
everyone = comm.gather((mine, my_losses), root=0)

if rank == 0:
    opforge.reset_auto_parallel_context()
    opforge.set_context(mode=opforge.PYNATIVE_MODE)
    ref, ref_losses = train(None)
    rank_mean = np.mean([losses for _, losses in everyone], axis=0)  # each rank's loss is its shard's mean
    if not np.allclose(rank_mean, ref_losses, rtol=1e-5, atol=1e-6):
        print(f"MODEL-DP-FAIL losses {rank_mean} vs {ref_losses}", flush=True)
        comm.Abort(1)
    for r, (params, _) in enumerate(everyone):
        for i, (a, b) in enumerate(zip(params, ref)):
            if not np.allclose(a, b, rtol=2e-5, atol=2e-6):
                print(f"MODEL-DP-FAIL rank {r} parameter {i}: max |diff| {np.abs(a - b).max():.3g}", flush=True)
                comm.Abort(1)
    print(f"MODEL-DP-OK ranks={size} steps={len(ref_losses)} last_loss={ref_losses[-1]:.4f}", flush=True)
sys.exit(0)
