"""Run under ``mpiexec -n 2``: rank 1 gives MatMul another strategy than rank 0; every rank must raise a
ValueError naming the operator and both strategies (printed as "MISMATCH-OK <rank>: <message>")."""

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_rank, init

init()
rank = get_rank()
opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul().shard(((2, 1), (1, 1)) if rank == 0 else ((1, 2), (2, 1)))

    def construct(self, x):
        return self.matmul(x, x)


try:
    Net()(opforge.Tensor(np.ones((4, 4), np.float32)))
except ValueError as e:
    print(f"MISMATCH-OK {rank}: {e}", flush=True)
