"""Run under ``mpiexec -n N``: optimizers whose update is written with ``Assign`` (``Lamb``,
``Adam(use_amsgrad=True)``) keep each weight in the layout the forward pass gave it, as MindSpore's do.

A Megatron-style MLP (column- then row-parallel Dense) reading its input scaled by a weight ``scale`` that the
forward pass keeps whole (a batch-parallel ``Mul``): its gradient is a partial sum over the ranks, which an update
written with operators may complete as a split (a ReduceScatter), and its ``Assign`` must write it back whole; and
mixed by a weight ``mix`` read whole through its transpose, of which a MatMul reads a slice: its gradient comes out
split. Checked after 3 steps in SEMI_AUTO_PARALLEL:
each weight's layout is the one its first forward pass gave it; each optimizer state has its weight's layout (MindSpore
lays a state out as the weight it was cloned from); the weights equal one process's (max relative difference 1e-5).
Prints "ASSIGN-OK <optimizers>" on rank 0, or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/assign_optimizers.py
"""

import numpy as np
from megatron import MLP, whole
from mpi4py import MPI

import opforge as ms
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import layout_of

init()
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, BATCH = 3 * size, 4 * size, 3, 8


def fail(message: str):
    print(f"ASSIGN-FAIL rank {rank}: {message}", flush=True)
    MPI.COMM_WORLD.Abort(1)


class Scaled(nn.Cell):
    def __init__(self, ranks: int):
        super().__init__()
        self.mlp = MLP(IN, HIDDEN, OUT, ranks)
        self.scale = ms.Parameter(ms.Tensor(np.linspace(0.5, 1.5, IN).astype(np.float32)), name="scale")
        self.mul = ops.Mul().shard(((ranks, 1), (1,)))  # batch rows split, scale whole
        self.mix = ms.Parameter(ms.Tensor(np.eye(IN, dtype=np.float32) + 0.1), name="mix")
        self.transpose = ops.Transpose()
        self.matmul = ops.MatMul().shard(((1, 1), (1, ranks)))  # reads a slice of mix's transpose

    def construct(self, x):
        x = self.matmul(self.mul(x, self.scale), self.transpose(self.mix, (1, 0)))
        return self.mlp(x)


OPTIMIZERS = {
    "Lamb": lambda params: nn.Lamb(params, 0.05, weight_decay=0.01),
    "AdamAmsgrad": lambda params: nn.Adam(params, 0.05, use_amsgrad=True),
}
rng = np.random.default_rng(3)
x = ms.Tensor(rng.standard_normal((BATCH, IN)).astype(np.float32))
y = ms.Tensor(rng.integers(0, OUT, BATCH).astype(np.int32))


def train(make_optimizer, ranks: int):
    ms.set_seed(0)
    net = Scaled(ranks)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = make_optimizer(net.trainable_params())
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)
    first = None
    for _ in range(3):
        step(x, y)
        if first is None:
            first = {p.name: layout_of(p) for p in net.trainable_params()}
    return net, optimizer, first


ms.set_context(mode=ms.PYNATIVE_MODE)
checked = []
for name, make in OPTIMIZERS.items():
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", device_num=size, full_batch=True)
    net, optimizer, first = train(make, size)
    for p in net.trainable_params():
        if layout_of(p) != first[p.name]:
            fail(f"{name} moved {p.name} from {first[p.name]} to {layout_of(p)}")
    if not layout_of(net.scale).is_replicated:
        fail(f"{name} split 'scale', which the forward pass reads whole")
    if not layout_of(net.mix).is_replicated:
        fail(f"{name} split 'mix', which the forward pass reads whole (and a slice of its transpose)")
    for state in optimizer.get_parameters():
        weight = next((p for p in net.trainable_params() if state.name.endswith("." + p.name)), None)
        if weight is not None and layout_of(state) != layout_of(weight):
            fail(f"{name}'s state {state.name} is laid out {layout_of(state)}, its weight {layout_of(weight)}")
    got = [whole(p) for p in net.trainable_params()]
    ms.reset_auto_parallel_context()
    want = [p.asnumpy() for p in train(make, 1)[0].trainable_params()]
    for p, a, b in zip(net.trainable_params(), got, want):
        if np.max(np.abs(a - b)) > 1e-5 * max(float(np.max(np.abs(b))), 1.0):
            fail(f"{name}: {p.name} differs from one process's by {np.max(np.abs(a - b))}")
    checked.append(name)
if rank == 0:
    print("ASSIGN-OK " + " ".join(checked), flush=True)
