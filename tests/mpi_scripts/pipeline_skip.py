"""Run under ``mpiexec -n N`` (N = 2 or 4: one rank a stage): tensors that skip pipeline stages. MindSpore's
pipeline-inference network (an embedding of stage 0 returning its table, read by the head of the last stage),
trained with ``PipelineCell`` in 4 micro-batches: the table, the embedding's output scaled outside any cell, a
residual added outside any cell (the embedding's output read by the last layer's stage), and a network input read
by the head. A tensor made by stage p and read by stage t crosses each boundary between them
(passed on by the stages in between, its gradient back the same way); the network's input, which every rank has,
crosses none (each stage used to send what it read, and the hop past stage 1 hung). 3 steps equal one process's:
each step's loss, and every parameter on the rank holding it. Prints "SKIP-OK <max relative difference>" on rank 0
or exits 1."""

import sys

import numpy as np
from pipeline_nets import Head, VocabEmbedding

import opforge as ms
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.tensor import is_placeholder

init()
rank, size = get_rank(), get_group_size()
V, H, BATCH, MICRO = 12, 8, 8, 4


class WeightedHead(Head):
    def construct(self, state, embed, weight):
        return super().construct(state, embed) * weight


class Network(nn.Cell):
    def __init__(self, stages: int):
        super().__init__()
        ms.set_seed(1)
        self.word_embedding = VocabEmbedding(V, H)
        self.layer1, self.layer2 = nn.Dense(H, H), nn.Dense(H, H)
        self.head = WeightedHead()
        if stages > 1:
            self.word_embedding.pipeline_stage = 0
            self.layer1.pipeline_stage = 1 if stages == 4 else 0
            self.layer2.pipeline_stage = stages // 2
            self.head.pipeline_stage = stages - 1

    def construct(self, x, weight, y):
        x, embed = self.word_embedding(x)
        embed = embed * 0.5  # (outside any cell: made by stage 0, as its input)
        x = self.layer2(self.layer1(x)) + x  # (a residual outside any cell: stage 0's x read by layer2's stage)
        return self.head(x, embed, weight), y


class Loss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net, self.loss = net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, x, weight, y):
        return self.loss(*self.net(x, weight, y))


class MicroSum(nn.Cell):  # one process: the sum of the micro-batches' losses, as PipelineCell's step
    def __init__(self, net):
        super().__init__()
        self.net, self.rows = net, BATCH // MICRO

    def construct(self, x, weight, y):
        total = 0
        for i in range(MICRO):
            part = slice(i * self.rows, (i + 1) * self.rows)
            total = total + self.net(x[part], weight[part], y[part])
        return total


def train(stages: int):
    net = Network(stages)
    loss = Loss(net)
    wrapped = nn.PipelineCell(loss, MICRO) if stages > 1 else MicroSum(loss)
    step = nn.TrainOneStepCell(wrapped, nn.SGD(net.trainable_params(), 0.1))
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.integers(0, V, (BATCH, 1)).astype(np.int32))
    weight = ms.Tensor(rng.uniform(0.5, 1.5, (BATCH, V)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, V, BATCH).astype(np.int32))
    losses = [float(step(x, weight, y).asnumpy()) for _ in range(3)]
    return losses, list(net.trainable_params())


ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=size, full_batch=True)
losses, params = train(size)
ms.reset_auto_parallel_context()
want_losses, want = train(1)
worst = max(abs(a - b) / max(abs(b), 1.0) for a, b in zip(losses, want_losses))
for p, q in zip(params, want):
    if not is_placeholder(p):
        b = q.asnumpy()
        worst = max(worst, float(np.max(np.abs(p.asnumpy() - b)) / max(float(np.max(np.abs(b))), 1.0)))
if worst > 1e-5:
    print(f"SKIP-FAIL rank {rank}: losses {losses} against {want_losses}, worst difference {worst}", flush=True)
    sys.exit(1)
if rank == 0:
    print(f"SKIP-OK {worst:.3g}", flush=True)
