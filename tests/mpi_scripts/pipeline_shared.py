"""Run under ``mpiexec -n N`` (N even): a weight tied across pipeline stages (an embedding of stage 0 that the
output projection of stage 1 reads transposed, as language models tie them). Each stage keeps its copy, set to
the first stage's value at the first step (``sync_pipeline_shared_parameters``: here each stage starts from its
own seed), and both copies take the sum of the stages' gradients, so 3 steps of 1F1B over 2 micro-batches train
to one process's parameters, eagerly and in GRAPH_MODE. Prints "SHARED-OK <max relative difference>" on rank 0
or exits 1."""

import sys

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.tensor import is_placeholder

init()
rank, size = get_rank(), get_group_size()
rng = np.random.default_rng(1)
x = rng.standard_normal((8, 6)).astype(np.float32)
y = rng.integers(0, 6, 8).astype(np.int32)


class Embedding(nn.Cell):
    def __init__(self, table):
        super().__init__()
        self.table = table

    def construct(self, a):
        return ops.matmul(a, self.table)


class Projection(nn.Cell):
    def __init__(self, table):
        super().__init__()
        self.table = table

    def construct(self, h):
        return ops.matmul(h, self.table.T)


class Net(nn.Cell):
    def __init__(self, seed: int, staged: bool):
        super().__init__()
        values = np.random.default_rng(seed).standard_normal((6, 8)).astype(np.float32)
        table = opforge.Parameter(opforge.Tensor(values), name="table")
        nn.set_seed(0)
        self.embedding = Embedding(table)
        self.hidden = nn.Dense(8, 8, activation="tanh")
        self.projection = Projection(table)
        if staged:
            self.embedding.pipeline_stage, self.hidden.pipeline_stage, self.projection.pipeline_stage = 0, 1, 1

    def construct(self, a):
        return self.projection(self.hidden(self.embedding(a)))


def train(staged: bool, seed: int) -> dict:
    net = Net(seed, staged)
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = nn.TrainOneStepCell(  # (the pipeline's loss: the sum of its 2 micro-batches' means)
        nn.PipelineCell(loss, 2) if staged else loss,
        nn.Momentum(net.trainable_params(), 0.1, 0.9),
        sens=1 if staged else 2,
    )
    for _ in range(3):
        step(opforge.Tensor(x), opforge.Tensor(y))
    return {p.name: p.asnumpy() for p in net.trainable_params() if not is_placeholder(p)}


whole = train(False, seed=0)
worst = 0.0
for mode in (opforge.PYNATIVE_MODE, opforge.GRAPH_MODE):
    opforge.set_context(mode=mode)
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=2, full_batch=True)
    mine = train(True, seed=rank // (size // 2))  # the stages start from different tables: the first step syncs them
    opforge.reset_auto_parallel_context()
    opforge.set_context(mode=opforge.PYNATIVE_MODE)
    if not any(name.endswith("table") for name in mine):
        sys.exit(f"rank {rank} dropped the shared table: it holds {sorted(mine)}")
    for name, value in mine.items():
        worst = max(worst, float(np.abs(value - whole[name]).max() / np.abs(whole[name]).max()))
    if worst > 1e-5:
        sys.exit(f"rank {rank} (mode {mode}): the parameters differ from one process's by {worst}")
if rank == 0:
    print("SHARED-OK", worst)
