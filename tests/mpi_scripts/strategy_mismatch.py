"""Run under ``mpiexec -n 2``: rank 1 gives MatMul another strategy than rank 0; every rank must raise a
ValueError naming the operator and both strategies (printed as "MISMATCH-OK <rank>: <message>" by rank 0)."""

import numpy as np
from mpi4py import MPI

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
    line = f"MISMATCH-MISSED {rank}"
except ValueError as e:
    line = f"MISMATCH-OK {rank}: {e}"
# Rank 0 prints every rank's line (mpiexec may drop the output of a rank that exits first).
lines = MPI.COMM_WORLD.gather(line, root=0)
if rank == 0:
    print("\n".join(lines), flush=True)
