"""Run under ``mpiexec -n N``: MindSpore 2.7's ``DistributedDataParallel``. Each rank builds the network from its
own seed (``init_sync`` makes them rank 0's), then trains 3 steps with ``value_and_grad`` and SGD on its block of
the batch, the wrapper averaging the gradients in the backward pass; eagerly and with the step jitted, the
parameters equal one process's trained on the whole batch. Inside ``no_sync()`` the gradients are each rank's
own. Prints "DDP-OK <max relative difference>" on rank 0 or exits 1."""

import sys

import numpy as np
from mpi4py import MPI

import opforge as ms
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.parallel.distributed import DistributedDataParallel

init()
rank, size = get_rank(), get_group_size()
rng = np.random.default_rng(0)
x = rng.standard_normal((8, 16)).astype(np.float32)
y = rng.integers(0, 4, 8).astype(np.int32)
rows = slice(rank * 8 // size, (rank + 1) * 8 // size)
loss_fn = nn.CrossEntropyLoss()


def build(seed):
    nn.set_seed(seed)
    return nn.SequentialCell(nn.Dense(16, 32, activation="relu"), nn.Dense(32, 4))


def one_process() -> list:
    net = build(0)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), 0.1))
    for _ in range(3):
        step(ms.Tensor(x), ms.Tensor(y))
    return [p.asnumpy() for p in net.trainable_params()]


def with_ddp(jitted: bool):
    net = DistributedDataParallel(build(rank), bucket_cap_mb=1)
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, optimizer.parameters)

    def train_step(a, b):
        loss, grads = grad_fn(a, b)
        optimizer(grads)
        return loss

    step = ms.jit(train_step) if jitted else train_step
    for _ in range(3):
        step(ms.Tensor(x[rows]), ms.Tensor(y[rows]))
    with net.no_sync():  # this rank's own gradient: the ranks' differ
        _, grads = grad_fn(ms.Tensor(x[rows]), ms.Tensor(y[rows]))
    own = MPI.COMM_WORLD.allgather(grads[0].asnumpy())
    if size > 1 and np.allclose(own[0], own[1]):
        sys.exit("under no_sync() the gradients were reduced")
    return [p.asnumpy() for p in net.trainable_params()]


whole = one_process()
worst = 0.0
for jitted in (False, True):
    got = with_ddp(jitted)
    worst = max([worst] + [float(np.abs(g - w).max() / (np.abs(w).max() + 1e-12)) for g, w in zip(got, whole)])
    if worst > 1e-5:
        sys.exit(f"DistributedDataParallel (jit={jitted}): the parameters differ from one process's by {worst}")
if rank == 0:
    print("DDP-OK", worst)
