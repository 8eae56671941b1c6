"""Run under ``mpiexec -n N``: a partial sum read by two operators that want it split differently is reduced
once. A row-parallel MatMul (partial sums of the whole output) feeds a ReLU split by rows (a ReduceScatter)
and a Tanh split by columns (the ReLU's block moved by an AlltoAll, not a second ReduceScatter of the whole).
Rank 0 prints "PARTIAL-OK <max abs difference to NumPy> <counts as JSON>"; a rank that differs exits 1.
"""

import json
import sys

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole, redistribution_counts

init()
size = get_group_size()
opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
rng = np.random.default_rng(0)
x, w = rng.standard_normal((8 * size, 4 * size)), rng.standard_normal((4 * size, 4 * size))
x, w = x.astype(np.float32), w.astype(np.float32)


class TwoReaders(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul().shard(((1, size), (size, 1)))  # row parallel: a partial sum
        self.relu = ops.ReLU().shard(((size, 1),))
        self.tanh = ops.Tanh().shard(((1, size),))
        self.w = opforge.Parameter(opforge.Tensor(w), name="w")

    def construct(self, x):
        h = self.matmul(x, self.w)
        return self.relu(h), self.tanh(h)


redistribution_counts(reset=True)
relu, tanh = TwoReaders()(opforge.Tensor(x))
counts = redistribution_counts()
relu, tanh = gather_whole(relu), gather_whole(tanh)
h = x.astype(np.float64) @ w
diff = max(np.abs(relu.asnumpy() - np.maximum(h, 0)).max(), np.abs(tanh.asnumpy() - np.tanh(h)).max())
if diff > 1e-4:
    sys.exit(f"the two readers differ from NumPy by {diff}")
if get_rank() == 0:  # (every rank checked its result; one line, never interleaved with another rank's)
    print("PARTIAL-OK", diff, json.dumps(counts), flush=True)
