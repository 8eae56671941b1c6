"""What the pipeline scripts share: MindSpore's pipeline sample's cells (an embedding returning its table with its
output, and a head reading that table), with a random table."""

import numpy as np

import opforge as ms
from opforge import nn, ops


class VocabEmbedding(nn.Cell):
    def __init__(self, vocab: int, size: int):
        super().__init__()
        table = np.random.default_rng(5).standard_normal((vocab, size)).astype(np.float32)
        self.embedding_table = ms.Parameter(ms.Tensor(table), name="embedding_table")
        self.gather = ops.Gather()

    def construct(self, x):
        return self.gather(self.embedding_table, x, 0).squeeze(1), self.embedding_table.value()


class Head(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul(transpose_b=True)

    def construct(self, state, embed):
        return self.matmul(state, embed)
