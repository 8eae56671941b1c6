"""Run under ``mpiexec -n N``: data-parallel training equals one process trained on the whole batches.

Each rank starts from different weights (seeded by its rank: the broadcast from rank 0 must make them
equal), trains STEPS steps on its 1/N of every global batch (gradients_mean=True, a mean loss), then
rank 0 gathers every rank's parameters and compares them with one process (itself, in stand-alone
mode) trained from rank 0's initial weights on the whole batches. Prints one line "DP-OK ..." on
success; exits 1 naming what differs otherwise.

    mpiexec -n 2 python tests/dp_scripts/equality.py [--optimizer adam|momentum] [--bucket-mb MB]
"""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.context import ParallelMode

parser = argparse.ArgumentParser()
parser.add_argument("--optimizer", default="momentum", choices=["momentum", "adam", "sgd"])
parser.add_argument("--bucket-mb", type=float, default=None, help="comm_fusion size (default: 25 MB buckets)")
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--batch", type=int, default=12)
parser.add_argument(
    "--graph", action="store_true", help="GRAPH_MODE: the TrainOneStepCell called as MindSpore's loop does"
)
args = parser.parse_args()

init()
rank, size = get_rank(), get_group_size()
comm = MPI.COMM_WORLD  # the test's own gathering of the results
opforge.set_context(num_threads=1)
IN, HIDDEN, OUT = 20, 16, 4


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal")
        self.act = nn.Tanh()
        self.fc2 = nn.Dense(HIDDEN, HIDDEN, weight_init="he_uniform", bias_init="normal")
        self.fc3 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform")

    def construct(self, x):
        return self.fc3(self.act(self.fc2(self.act(self.fc1(x)))))


def make_step(seed):
    nn.set_seed(seed)
    net = Net()
    initial = [p.asnumpy().copy() for p in net.trainable_params()]
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    params = net.trainable_params()
    if args.optimizer == "adam":
        opt = nn.Adam(params, learning_rate=0.01)
    elif args.optimizer == "momentum":
        opt = nn.Momentum(params, learning_rate=0.05, momentum=0.9)
    else:
        opt = nn.SGD(params, learning_rate=0.1)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt), initial


rng = np.random.default_rng(123)
batches = [
    (rng.normal(size=(args.batch, IN)).astype(np.float32), rng.integers(0, OUT, args.batch).astype(np.int32))
    for _ in range(args.steps)
]

fusion = {} if args.bucket_mb is None else {"comm_fusion": {"allreduce": {"mode": "size", "config": args.bucket_mb}}}
opforge.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True, **fusion)
# Different initial weights on every rank: the broadcast from rank 0 makes them equal.
net, step, _ = make_step(seed=1 + rank)
reducer = step.grad_reducer
n_params = len(net.trainable_params())
per = args.batch // size
if args.graph:
    opforge.set_context(mode=opforge.GRAPH_MODE)
for x, y in batches:
    step(opforge.Tensor(x[rank * per : (rank + 1) * per]), opforge.Tensor(y[rank * per : (rank + 1) * per]))
if args.graph:  # traced once, an AllReduce operator per gradient, then replayed, as MindSpore's loop
    opforge.set_context(mode=opforge.PYNATIVE_MODE)
    assert step._graph.traced == 1, step._graph
    assert step._graph.explain().count("  AllReduce") == (n_params if size > 1 else 0), step._graph.explain()
mine = [p.asnumpy() for p in net.trainable_params()]
everyone = comm.gather(mine, root=0)

if rank == 0:
    opforge.reset_auto_parallel_context()
    ref_net, ref_step, initial = make_step(seed=1)  # rank 0's initial weights, in one process
    for x, y in batches:
        ref_step(opforge.Tensor(x), opforge.Tensor(y))
    ref = [p.asnumpy() for p in ref_net.trainable_params()]
    worst = 0.0
    for r, params in enumerate(everyone):
        for name, a, b, w0 in zip([p.name for p in ref_net.trainable_params()], params, ref, initial):
            if not np.allclose(a, b, rtol=2e-5, atol=2e-6):
                print(f"DP-FAIL rank {r} parameter {name}: max |diff| {np.abs(a - b).max():.3g}", flush=True)
                comm.Abort(1)
            assert not np.allclose(a, w0)  # it trained
            worst = max(worst, float(np.abs(a - b).max()))
    print(
        f"DP-OK ranks={size} steps={args.steps} optimizer={args.optimizer} params={n_params} "
        f"collectives_per_step={reducer.collectives_per_step} buckets={len(reducer.bucket_sizes)} "
        f"max_diff={worst:.3g}",
        flush=True,
    )
sys.exit(0)
