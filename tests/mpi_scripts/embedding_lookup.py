"""Run under ``mpiexec -n N``: ``nn.EmbeddingLookup``'s slice modes in SEMI_AUTO_PARALLEL equal one process.

For each slice mode the lookup (ids out of the vocabulary included: zero rows) and the gradient of a weighted sum
of it with respect to the table, taken inside the outermost cell (so the backward runs sharded), are gathered
whole and compared with NumPy on every rank. Prints "EMB-OK <max abs difference>" on rank 0 or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/embedding_lookup.py
"""

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole

init()
size = get_group_size()
VOCAB, DIM = 4 * size, 3 * size
rng = np.random.default_rng(7)
table = rng.standard_normal((VOCAB, DIM)).astype(np.float32)
ids = rng.integers(0, VOCAB + 3, (2 * size, 5)).astype(np.int32)  # some ids past the vocabulary
weights = rng.standard_normal((*ids.shape, DIM)).astype(np.float32)
inside = ids < VOCAB
want_out = np.where(inside[..., None], table[np.minimum(ids, VOCAB - 1)], 0.0)
want_grad = np.zeros_like(table)
np.add.at(want_grad, ids[inside], weights[inside])


class LookupAndGradient(nn.Cell):
    def __init__(self, lookup):
        super().__init__()
        self.lookup = lookup
        self.grad = ops.GradOperation(get_by_list=True)
        self.weights = opforge.ParameterTuple([lookup.embedding_table])

    def construct(self, x, w):
        def loss(i, r):
            return (self.lookup(i) * r).sum()

        return self.lookup(x), self.grad(loss, self.weights)(x, w)[0]


opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
worst = 0.0
for mode in ("table_row_slice", "table_column_slice", "batch_slice", "field_slice"):
    manual = (VOCAB // size,) * size if mode == "field_slice" else None
    lookup = nn.EmbeddingLookup(VOCAB, DIM, param_init=opforge.Tensor(table), slice_mode=mode, manual_shapes=manual)
    out, grad = LookupAndGradient(lookup)(opforge.Tensor(ids), opforge.Tensor(weights))
    out, grad = gather_whole(out).asnumpy(), gather_whole(grad).asnumpy()
    diff = max(float(np.abs(out - want_out).max()), float(np.abs(grad - want_grad).max()))
    if diff > 1e-5:
        raise SystemExit(f"rank {get_rank()}: slice_mode {mode} differs from one process by {diff}")
    worst = max(worst, diff)
if get_rank() == 0:
    print(f"EMB-OK {worst}", flush=True)
