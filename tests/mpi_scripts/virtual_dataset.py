"""Run under ``mpiexec -n N``: ``_VirtualDatasetCell`` (MindSpore's ``nn.wrap.cell_wrapper._VirtualDatasetCell``) in
SEMI_AUTO_PARALLEL mode, with no strategies. With ``--full-batch`` every rank reads the whole batch and the cell
splits each input along the batch dim (each rank keeping its block of rows); without it each rank reads its own
block and the cell passes it on. Either way the network below sees a sharded batch whose local block is this
rank's rows, and training equals one process on the whole batch. Prints "VD-OK <max relative difference>" or
exits 1.

    mpiexec -n 2 python tests/mpi_scripts/virtual_dataset.py [--full-batch]
"""

import argparse
import sys

import numpy as np
from opforge.nn.wrap.cell_wrapper import _VirtualDatasetCell

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import is_sharded, local_of

parser = argparse.ArgumentParser()
parser.add_argument("--full-batch", action="store_true")
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()

init()
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, ROWS = 6, 8, 3, 4  # ROWS: each rank's block of the batch
BATCH = ROWS * size


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal", activation="relu")
        self.fc2 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform")
        self.seen = []  # (sharded?, the local block) of each call's input

    def construct(self, x):
        self.seen.append((is_sharded(x), local_of(x).asnumpy().copy()))
        return self.fc2(self.fc1(x))


def train(parallel: bool, x, y):
    opforge.reset_auto_parallel_context()
    if parallel:
        opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=args.full_batch)
        if not args.full_batch:  # each rank reads its own block of the batch
            x, y = x[rank * ROWS : (rank + 1) * ROWS], y[rank * ROWS : (rank + 1) * ROWS]
    nn.set_seed(0)
    net = Net()
    with_loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    wrapped = _VirtualDatasetCell(with_loss)
    names = [p.name for p in wrapped.trainable_params()]
    step = nn.TrainOneStepCell(wrapped, nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9))
    losses = [float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) for _ in range(args.steps)]
    params = {p.name: local_of(p).asnumpy().copy() for p in net.trainable_params()}
    opforge.reset_auto_parallel_context()
    return net.seen, names, losses, params


rng = np.random.default_rng(5)
x = rng.standard_normal((BATCH, IN)).astype(np.float32)
y = rng.integers(0, OUT, BATCH).astype(np.int32)
seen, names, losses, params = train(True, x, y)
_, ref_names, ref_losses, ref_params = train(False, x, y)

failures = []
if names != ref_names or names != ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]:
    failures.append(f"parameter names {names} (one process: {ref_names})")
block = x[rank * ROWS : (rank + 1) * ROWS]
for sharded, local in seen:
    if not sharded or local.shape != block.shape or not np.array_equal(local, block):
        failures.append(f"the network saw sharded={sharded}, a block of shape {local.shape}, not this rank's rows")
        break
worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(losses, ref_losses))
for name, want in ref_params.items():
    worst = max(worst, float(np.abs(params[name] - want).max() / max(np.abs(want).max(), 1e-6)))
if worst > 1e-5:
    failures.append(f"training differs from one process by {worst:.3g} (losses {losses} vs {ref_losses})")
if failures:
    print(f"rank {rank}: " + "; ".join(failures), flush=True)
    sys.exit(1)
if rank == 0:
    print(f"VD-OK {worst:.3g}", flush=True)
