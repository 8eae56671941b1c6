"""Run under ``mpiexec -n N`` (N even; 8 is MindSpore's advanced operator-parallel tutorial): MindSpore's
functional training style in SEMI_AUTO_PARALLEL, imports changed: ``set_auto_parallel_context`` and a
``@jit`` training step of ``value_and_grad(..., has_aux=True)`` and an optimizer, no ``AutoParallel``, no
``Model``. The jitted step is the outermost call: its first call lays the weights out, later ones replay each
rank's trace.

The tutorial's network, a 3-layer MLP of raw MatMuls: on 8 ranks its ``Layout`` strategies (a dim split over two
device-matrix axes, ``layout("mp", ("sp", "dp"))``), on N ranks one ``Layout((N,), ("tp",))`` axis. Rank 0 trains
the same network in one process and prints "FUNC-OK <steps>" when every step's loss and every final weight are
equal, or exits 1. Each rank seeds its own initialisation (1 + rank): the first call makes every weight rank 0's
(``parameter_broadcast``, at each Parameter's first read: a function has no Cell listing its weights).
"""

import sys

import numpy as np

import opforge as ms
from opforge import Layout, nn, ops
from opforge import dataset as ds
from opforge.common.initializer import initializer
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = ops.Flatten()
        self.fc1_weight = ms.Parameter(initializer("normal", [28 * 28, 64], ms.float32))
        self.fc2_weight = ms.Parameter(initializer("normal", [64, 64], ms.float32))
        self.fc3_weight = ms.Parameter(initializer("normal", [64, 10], ms.float32))
        self.matmul1, self.matmul2, self.matmul3 = ops.MatMul(), ops.MatMul(), ops.MatMul()
        self.relu1, self.relu2 = ops.ReLU(), ops.ReLU()

    def construct(self, x):
        x = self.relu1(self.matmul1(self.flatten(x), self.fc1_weight))
        x = self.relu2(self.matmul2(x, self.fc2_weight))
        return self.matmul3(x, self.fc3_weight)


def shard(net, ranks: int) -> None:
    if ranks == 8:  # the tutorial's
        layout = Layout((2, 2, 2), ("dp", "sp", "mp"))
        net.matmul1.shard((layout("mp", ("sp", "dp")), layout(("sp", "dp"), "None")))
        net.relu1.shard(((4, 1),))
    else:
        layout = Layout((ranks,), ("tp",))
        net.matmul1.shard((layout("None", "tp"), layout("tp", "None")))
        net.relu1.shard(((ranks, 1),))
    layout2 = Layout((ranks,), ("tp",))
    net.matmul2.shard((layout2("None", "tp"), layout2("tp", "None")))
    net.relu2.shard(((ranks, 1),))


def train(ranks: int, seed: int = 1, jitted: bool = True):
    ms.set_seed(seed)
    net = Network()
    if ranks > 1:
        shard(net, ranks)
    rng = np.random.default_rng(0)
    images = rng.random((64, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, 64).astype(np.int32)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(32)
    optimizer = nn.SGD(net.trainable_params(), 1e-1)
    loss_fn = nn.CrossEntropyLoss()

    def forward_fn(x, y):
        logits = net(x)
        return loss_fn(logits, y), logits

    grad_fn = ms.value_and_grad(forward_fn, None, net.trainable_params(), has_aux=True)

    def train_step(x, y):
        (loss, _), grads = grad_fn(x, y)
        optimizer(grads)
        return loss

    if jitted:
        train_step = ms.jit(train_step)

    losses = [float(train_step(x, y).asnumpy()) for _ in range(3) for x, y in data]
    return losses, [gather_whole(p).asnumpy() for p in net.trainable_params()], train_step


ms.set_context(mode=ms.GRAPH_MODE)
init()
rank, size = get_rank(), get_group_size()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL)
losses, weights, step = train(size, seed=1 + rank)
assert step._parallel is not None and step._parallel.traced == 1, "the later steps replay one trace"
# MindSpore's PyNative training of shard functions: value_and_grad and the optimizer called un-jitted, each the
# outermost parallel call (the gradient function's tape inside it)
ms.set_context(mode=ms.PYNATIVE_MODE)
runs = {"jit": (losses, weights), "pynative": train(size, seed=1 + rank, jitted=False)[:2]}
ms.reset_auto_parallel_context()
if rank == 0:
    want_losses, want_weights, _ = train(1)
    for name, (losses, weights) in runs.items():
        if not np.allclose(losses, want_losses, rtol=1e-5, atol=1e-6):
            print(f"FUNC-FAIL {name}: losses {losses} != {want_losses}", flush=True)
            sys.exit(1)
        for got, want in zip(weights, want_weights):
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                print(f"FUNC-FAIL {name}: a weight differs by {np.max(np.abs(got - want))}", flush=True)
                sys.exit(1)
    print(f"FUNC-OK {len(losses)}", flush=True)
