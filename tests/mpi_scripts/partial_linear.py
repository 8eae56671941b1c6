"""Run under ``mpiexec -n N``: linear operators keep a partial sum pending. Two row-parallel MatMuls (partial
sums of the whole output over the same ranks) go through ``* 2.0``, ``-`` (Neg), ``- b`` (a whole operand,
subtracted on one rank of the reduction only), ``+`` (the other partial sum) and ``/ 4.0`` before a ReLU split
by rows: one ReduceScatter completes them all, no AllReduce.
Prints "LINEAR-OK <max abs difference to NumPy> <counts and volume as JSON>" or exits 1.
"""

import json
import sys

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole, redistribution_counts, redistribution_volume

init()
size = get_group_size()
opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
rng = np.random.default_rng(0)
x = rng.standard_normal((8 * size, 4 * size)).astype(np.float32)
w, v = (rng.standard_normal((4 * size, 4 * size)).astype(np.float32) for _ in range(2))
b = rng.standard_normal(4 * size).astype(np.float32)


class Linear(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mm1 = ops.MatMul().shard(((1, size), (size, 1)))  # row parallel: partial sums
        self.mm2 = ops.MatMul().shard(((1, size), (size, 1)))
        self.relu = ops.ReLU().shard(((size, 1),))  # rows split: a ReduceScatter
        self.w = opforge.Parameter(opforge.Tensor(w), name="w")
        self.v = opforge.Parameter(opforge.Tensor(v), name="v")
        self.b = opforge.Parameter(opforge.Tensor(b), name="b")

    def construct(self, x):
        h = -(self.mm1(x, self.w) * 2.0) - self.b
        return self.relu((h + self.mm2(x, self.v)) / 4.0)


redistribution_counts(reset=True), redistribution_volume(reset=True)
out = Linear()(opforge.Tensor(x))
counts = {"counts": redistribution_counts(), "volume": redistribution_volume()}
xd = x.astype(np.float64)
want = np.maximum((-(xd @ w * 2.0) - b + xd @ v) / 4.0, 0)
diff = float(np.abs(gather_whole(out).asnumpy() - want).max())
if diff > 1e-4:
    sys.exit(f"the linear chain differs from NumPy by {diff}")
if get_rank() == 0:
    print("LINEAR-OK", diff, json.dumps(counts), flush=True)
