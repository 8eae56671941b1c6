"""Run under ``mpiexec -n N``: data-parallel THOR (``nn.thor`` + ``ConvertModelUtils``) keeps the ranks equal.

Each rank trains on its shard; its layers' statistics are its own, so only the all-reduce of the inverses (as
MindSpore's ThorGpu does in a distributed run) keeps the preconditioned updates, and so the weights, the same on
every rank. Prints "THOR-DP-OK" on success; exits 1 naming what differs otherwise.

    mpiexec -n 2 python tests/dp_scripts/thor_train.py
"""

import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import Tensor, nn
from opforge.communication import get_group_size, get_rank, init
from opforge.context import ParallelMode
from opforge.dataset import GeneratorDataset
from opforge.train import Callback, Model
from opforge.train.train_thor import ConvertModelUtils

init()
rank, size = get_rank(), get_group_size()
opforge.set_context(num_threads=1)
opforge.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
opforge.set_seed(1)


class Losses(Callback):
    def __init__(self):
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


rng = np.random.default_rng(5)
x = rng.standard_normal((32, 8)).astype(np.float32)
y = np.argmax(x[:, :3], axis=1).astype(np.int32)
dataset = GeneratorDataset(list(zip(x, y)), ["x", "y"], shuffle=False, num_shards=size, shard_id=rank).batch(4)
net = nn.SequentialCell(nn.Dense(8, 6, activation="relu"), nn.Dense(6, 3))
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
steps = Tensor(np.full(16, 0.1, np.float32))
opt = nn.thor(net, steps, Tensor(np.full(16, 0.05, np.float32)), 0.9, batch_size=4, frequency=2)
model = ConvertModelUtils.convert_to_thor_model(Model(net, loss, opt), net, loss, opt)
losses = Losses()
model.train(2, dataset, callbacks=[losses])

state = np.concatenate([p.asnumpy().ravel() for p in (*net.trainable_params(), *opt.matrix_a, *opt.matrix_g)])
states = MPI.COMM_WORLD.allgather(state)
problems = []
if not all(np.array_equal(s, states[0]) for s in states):
    problems.append("the ranks' weights or inverses differ")
if not (np.all(np.isfinite(losses.losses)) and len(losses.losses) == 32 // (4 * size) * 2):
    problems.append(f"the losses are {losses.losses}")
if problems:
    print(f"rank {rank}: " + "; ".join(problems), flush=True)
    sys.exit(1)
print(f"THOR-DP-OK rank {rank}", flush=True)
