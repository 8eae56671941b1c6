"""Run under ``mpiexec -n 4``: a partial sum read split over a mesh axis it is not pending on is sliced before
it is reduced. A row-parallel MatMul on 2 of the 4 ranks' split (device matrix [2, 2]: the first axis repeats the
work, the second splits k) leaves partial sums of the whole output over axis 1; a ReLU split (2, 2) reads its
rows over axis 0 and its columns over axis 1: each rank slices its rows locally, then one ReduceScatter of that
half moves half of what a ReduceScatter of the whole output would.
Prints "SLICED-OK <max abs difference to NumPy> <counts and volume as JSON>" or exits 1.
"""

import json
import sys

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_rank, init
from opforge.dispatch.sharding import gather_whole, redistribution_counts, redistribution_volume

init()
opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
rng = np.random.default_rng(0)
x, w = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 12)).astype(np.float32)


class RowParallel(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul().shard(((1, 2), (2, 1)))
        self.relu = ops.ReLU().shard(((2, 2),))
        self.w = opforge.Parameter(opforge.Tensor(w), name="w")

    def construct(self, x):
        return self.relu(self.matmul(x, self.w))


redistribution_counts(reset=True), redistribution_volume(reset=True)
out = RowParallel()(opforge.Tensor(x))
counts = {"counts": redistribution_counts(), "volume": redistribution_volume()}
diff = float(np.abs(gather_whole(out).asnumpy() - np.maximum(x.astype(np.float64) @ w, 0)).max())
if diff > 1e-4:
    sys.exit(f"the row-parallel MatMul and ReLU differ from NumPy by {diff}")
if get_rank() == 0:
    print("SLICED-OK", diff, json.dumps(counts), flush=True)
