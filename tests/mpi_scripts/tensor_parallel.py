"""Run under ``mpiexec -n N``: semi-auto parallel training (``Primitive.shard``) equals one process.

A Megatron-style MLP: the first Dense column-parallel (its weight split by output rows), the second
row-parallel (its weight split by input columns, an AllReduce completing its MatMul), every rank holding
the whole batch (full_batch). Each rank trains STEPS steps; rank 0 gathers every rank's parameter blocks and
compares the whole parameters with one process trained from the same initial weights. Prints
"TP-OK <max relative difference> <param bytes per rank> <param bytes one process>" or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/tensor_parallel.py [--optimizer momentum|adam] [--steps 4]
"""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.context import ParallelMode
from opforge.dispatch.sharding import local_of

parser = argparse.ArgumentParser()
parser.add_argument("--optimizer", default="momentum", choices=["momentum", "adam", "sgd"])
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--mode", default="semi_auto_parallel")
args = parser.parse_args()

init()
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, BATCH = 12, 8 * size, 4, 16


class MLP(nn.Cell):
    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal")
        self.act = nn.ReLU()
        self.fc2 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform", bias_init="normal")
        if tensor_parallel:
            self.fc1.matmul.shard(((1, 1), (size, 1)))  # column parallel: W1 (HIDDEN, IN) split by rows
            self.fc1.bias_add.shard(((1, size), (size,)))
            self.fc2.matmul.shard(((1, size), (1, size)))  # row parallel: W2 (OUT, HIDDEN) split by columns

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


def train(tensor_parallel: bool, data):
    nn.set_seed(0)
    net = MLP(tensor_parallel)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    params = net.trainable_params()
    if args.optimizer == "adam":
        opt = nn.Adam(params, learning_rate=0.01)
    elif args.optimizer == "momentum":
        opt = nn.Momentum(params, learning_rate=0.05, momentum=0.9)
    else:
        opt = nn.SGD(params, learning_rate=0.1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    losses = [float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) for x, y in data]
    return net, losses


rng = np.random.default_rng(1)
data = [
    (rng.standard_normal((BATCH, IN)).astype(np.float32), rng.integers(0, OUT, BATCH).astype(np.int32))
    for _ in range(args.steps)
]

opforge.set_auto_parallel_context(parallel_mode=args.mode, device_num=size, full_batch=True)
net, losses = train(True, data)
blocks = {p.name: local_of(p).asnumpy() for p in net.trainable_params()}
local_bytes = sum(b.nbytes for b in blocks.values())
gathered = MPI.COMM_WORLD.gather(blocks, root=0)
opforge.reset_auto_parallel_context()

if rank == 0:
    ref_net, ref_losses = train(False, data)
    worst = 0.0
    for p in ref_net.trainable_params():
        whole = p.asnumpy()
        parts = [g[p.name] for g in gathered]
        if parts[0].shape == whole.shape:
            got = parts[0]
        else:
            axis = next(i for i, (a, b) in enumerate(zip(parts[0].shape, whole.shape)) if a != b)
            got = np.concatenate(parts, axis=axis)
        diff = float(np.max(np.abs(got - whole)) / (np.max(np.abs(whole)) + 1e-12))
        worst = max(worst, diff)
        if diff > 1e-5:
            print(f"TP-FAIL {p.name}: relative difference {diff:.3g}", flush=True)
            MPI.COMM_WORLD.Abort(1)
    ref_bytes = sum(p.asnumpy().nbytes for p in ref_net.trainable_params())
    if not np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6):
        print(f"TP-FAIL losses {losses} != {ref_losses}", flush=True)
        MPI.COMM_WORLD.Abort(1)
    print(f"TP-OK {worst:.3g} {local_bytes} {ref_bytes}", flush=True)
sys.exit(0)
