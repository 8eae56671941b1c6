"""Run under ``mpiexec -n N``: AUTO_PARALLEL's strategy search (MindSpore's ``search_mode``) on networks nobody
annotated, trained to the parameters of one process.

``--model wide`` (a small batch, large weights: the search should split the weights, Megatron's column- then
row-parallel Dense), ``tall`` (a large batch, small weights: data parallel, the batch split and the weights
whole), ``encoder`` (a Transformer encoder layer: attention's three projections of one input, residual
connections, LayerNorms). Each rank trains STEPS steps from the search's layouts; rank 0 gathers every
rank's parameter blocks and compares them with one process trained from the same initial weights. Prints
"SEARCH-OK <max relative difference> <JSON: the strategies set, the parameters split, the collectives of a
step>" or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/strategy_search.py --model wide [--search-mode dynamic_programming]
"""

import argparse
import json
import sys
import warnings

import numpy as np
from mpi4py import MPI

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole, is_sharded, local_of, redistribution_counts

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="wide", choices=["wide", "tall", "encoder"])
parser.add_argument("--search-mode", default=None, help="set search_mode (default: MindSpore's default)")
parser.add_argument("--old-name", action="store_true", help="set it as auto_parallel_search_mode")
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--graph", action="store_true", help="train in GRAPH_MODE")
args = parser.parse_args()

init()
rank, size = get_rank(), get_group_size()
if args.graph:
    opforge.set_context(mode=opforge.GRAPH_MODE)
SHAPES = {"wide": (8, 32, 256 * size, 8), "tall": (2048 * size, 16, 16, 4), "encoder": (4, 64, 64 * size, 4)}
BATCH, IN, HIDDEN, OUT = SHAPES[args.model]
SEQ, HEADS = 4, 2


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal", activation="relu")
        self.fc2 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform", bias_init="normal")

    def construct(self, x):
        return self.fc2(self.fc1(x))


class Encoder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (nn.Dense(IN, IN, weight_init="he_uniform", has_bias=name != "k") for name in "qkv")
        self.o = nn.Dense(IN, IN, weight_init="he_uniform")
        self.ff1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", activation="gelu")
        self.ff2 = nn.Dense(HIDDEN, IN, weight_init="he_uniform")
        self.norm1, self.norm2 = nn.LayerNorm((IN,)), nn.LayerNorm((IN,))
        self.head = nn.Dense(IN, OUT, weight_init="he_uniform")
        self.reshape, self.transpose = ops.Reshape(), ops.Transpose()
        self.scores, self.mix = ops.BatchMatMul(transpose_b=True), ops.BatchMatMul()
        self.softmax, self.mean = ops.Softmax(), ops.ReduceMean()

    def heads(self, x):
        return self.transpose(self.reshape(x, (BATCH, SEQ, HEADS, IN // HEADS)), (0, 2, 1, 3))

    def construct(self, x):
        flat = self.reshape(x, (BATCH * SEQ, IN))
        q, k, v = (self.heads(f(flat)) for f in (self.q, self.k, self.v))
        att = self.softmax(self.scores(q, k) * (1.0 / np.sqrt(IN // HEADS)))
        mixed = self.reshape(self.transpose(self.mix(att, v), (0, 2, 1, 3)), (BATCH * SEQ, IN))
        h = self.norm1(flat + self.o(mixed))
        h = self.norm2(h + self.ff2(self.ff1(h)))
        return self.head(self.mean(self.reshape(h, (BATCH, SEQ, IN)), 1))


def train(data):
    nn.set_seed(0)
    net = Encoder() if args.model == "encoder" else MLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    losses = [float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) for x, y in data[:-1]]
    redistribution_counts(reset=True)
    x, y = data[-1]
    losses.append(float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()))
    return net, losses, redistribution_counts(reset=True)


rng = np.random.default_rng(1)
shape = (BATCH, SEQ, IN) if args.model == "encoder" else (BATCH, IN)
data = [
    (rng.standard_normal(shape).astype(np.float32), rng.integers(0, OUT, BATCH).astype(np.int32))
    for _ in range(args.steps)
]

options = {"parallel_mode": "auto_parallel", "device_num": size, "full_batch": True}
if args.search_mode:
    options["auto_parallel_search_mode" if args.old_name else "search_mode"] = args.search_mode
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    opforge.set_auto_parallel_context(**options)
net, losses, counts = train(data)
strategies = sorted(
    f"{name}.{attr}={[list(s) for s in prim.in_strategy]}"
    for name, cell in net.cells_and_names()
    for attr, prim in vars(cell).items()
    if isinstance(prim, opforge.ops.Primitive) and prim.__dict__.get("_searched_strategy")
)
split = sorted(p.name for p in net.trainable_params() if is_sharded(p))
local_elements = sum(local_of(p).size for p in net.trainable_params())
whole = {p.name: gather_whole(p).asnumpy() for p in net.trainable_params()}  # (a collective: every rank)
opforge.reset_auto_parallel_context()

if rank == 0:
    ref_net, ref_losses, _ = train(data)
    worst = 0.0
    for p in ref_net.trainable_params():
        want = p.asnumpy()
        diff = float(np.max(np.abs(whole[p.name] - want)) / max(np.max(np.abs(want)), 1.0))
        worst = max(worst, diff)
        if diff > 1e-5:
            print(f"SEARCH-FAIL {p.name}: relative difference {diff:.3g}", flush=True)
            MPI.COMM_WORLD.Abort(1)
    if not np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6):
        print(f"SEARCH-FAIL losses {losses} != {ref_losses}", flush=True)
        MPI.COMM_WORLD.Abort(1)
    elements = [local_elements, sum(p.size for p in ref_net.trainable_params())]
    report = {"strategies": strategies, "split": split, "counts": counts, "elements": elements}
    print(f"SEARCH-OK {worst:.3g} {json.dumps(report)}", flush=True)
sys.exit(0)
