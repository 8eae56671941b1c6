"""Run under ``mpiexec -n N`` (N = 2 or 4 stages, or 8 = 4 stages of 2 ranks): MindSpore's pipeline inference
(its distributed_pipeline_parallel_inference sample, a random embedding table): an evaluation network whose cells
have ``pipeline_stage``, called in its own micro-batch loop, without PipelineCell. Each rank runs its stage's cells
only and holds only their weights (the others are placeholders); the embedding table stage 0 returns for the last
stage's head crosses every boundary between them. With ``pipeline_result_broadcast`` every rank gets one process's
logits; without, the last stage does and the others zeros. Twice, in GRAPH_MODE. Prints "INFER-OK" or exits 1."""

import sys

import numpy as np
from pipeline_nets import Head, VocabEmbedding

import opforge as ms
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.pipeline import stage_of_rank
from opforge.tensor import is_placeholder

init()
rank, size = get_rank(), get_group_size()
STAGES = min(size, 4)
V = 32


class Network(nn.Cell):
    def __init__(self, stages: int):
        super().__init__()
        ms.set_seed(1)
        self.word_embedding = VocabEmbedding(V, V)
        self.layer1, self.layer2 = nn.Dense(V, V), nn.Dense(V, V)
        self.head = Head()
        if stages > 1:
            cells = (self.word_embedding, self.layer1, self.layer2, self.head)
            for k, cell in enumerate(cells):
                cell.pipeline_stage = k * stages // 4

    def construct(self, x):
        x, embed = self.word_embedding(x)
        return self.head(self.layer2(self.layer1(x)) + x, embed=embed)  # (a residual outside the cells; a keyword)


class PipelineCellInference(nn.Cell):  # the sample's
    def __init__(self, network, micro_batch_num):
        super().__init__()
        self.network, self.micro_batch_num = network, micro_batch_num
        self.concat = ops.Concat()

    def construct(self, x):
        ret = ()
        for i in range(self.micro_batch_num):
            size = x.shape[0] // self.micro_batch_num
            ret = ret + (self.network(x[size * i : size * (i + 1)]),)
        return self.concat(ret)


def fail(message: str):
    print(f"INFER-FAIL rank {rank}: {message}", flush=True)
    sys.exit(1)


ids = ms.Tensor(np.random.default_rng(0).integers(0, V, (8, 1)).astype(np.int32))
want = PipelineCellInference(Network(1), 4)(ids).asnumpy()
ms.set_context(mode=ms.GRAPH_MODE)
stage = stage_of_rank(rank, size, STAGES)
for broadcast in (True, False):
    ms.set_auto_parallel_context(
        parallel_mode="semi_auto_parallel", full_batch=True, pipeline_stages=STAGES, pipeline_result_broadcast=broadcast
    )
    net = Network(STAGES)
    inference = PipelineCellInference(net, 4)
    inference.set_train(False)
    for call in range(2):
        got = inference(ids).asnumpy()
        expected = want if broadcast or stage == STAGES - 1 else np.zeros_like(want)
        if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
            fail(f"call {call} (broadcast {broadcast}) gave logits off by {np.max(np.abs(got - expected))}")
    for cell in (net.word_embedding, net.layer1, net.layer2, net.head):
        for p in cell.get_parameters():
            if is_placeholder(p) != (cell.pipeline_stage != stage):
                fail(f"stage {stage} holds {p.name} of stage {cell.pipeline_stage}: {not is_placeholder(p)}")
    ms.reset_auto_parallel_context()
if rank == 0:
    print("INFER-OK", flush=True)
