"""Run under ``mpiexec -n N``: semi-auto parallel training (``Primitive.shard``) equals one process.

A Megatron-style MLP: the first Dense column-parallel (its weight split by output rows), the second
row-parallel (its weight split by input columns, an AllReduce completing its MatMul), every rank holding
the whole batch (full_batch). Each rank trains STEPS steps; rank 0 gathers every rank's parameter blocks and
compares the whole parameters with one process trained from the same initial weights. Prints
"TP-OK <max relative difference> <param bytes per rank> <param bytes one process>" or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/tensor_parallel.py [--optimizer momentum|adam] [--steps 4]

With ``--device GPU`` (a real GPU: tests/test_gpu_nccl.py) the tensors live on the GPU and the collectives run
on NCCL; there a 1-rank world runs the same rules.
"""

import argparse
import gc
import json
import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import memory, nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import local_of, redistribution_counts, redistribution_volume

parser = argparse.ArgumentParser()
parser.add_argument("--optimizer", default="momentum", choices=["momentum", "adam", "sgd"])
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--mode", default="semi_auto_parallel")
parser.add_argument("--graph", action="store_true", help="train in GRAPH_MODE (the step traced once)")
parser.add_argument("--weight-decay", type=float, default=0.0, help="the optimizer's weight_decay")
parser.add_argument(
    "--model",
    default="mlp",
    choices=["mlp", "embedding", "encoder", "batch", "zero", "zero-semi", "seqpar", "cnn", "spatial"],
)
parser.add_argument("--device", default="CPU", choices=["CPU", "GPU"], help="the device_target (GPU: NCCL)")
parser.add_argument(
    "--rank-seeds",
    action="store_true",
    help="each rank initialises its network from its own seed: the first call broadcasts rank 0's parameters",
)
parser.add_argument(
    "--no-loss-repeated-mean",
    action="store_true",
    help="loss_repeated_mean=False: the loss, on every rank, gives gradients summed over the ranks (the one-process "
    "reference trains with its sensitivity times the ranks)",
)
args = parser.parse_args()

opforge.set_context(device_target=args.device)
init()  # MPI on the CPU, NCCL on the GPU
memory.set_min_pooled_bytes(0)  # every array from the caching pool, so its stats count every weight and state
if args.graph:
    opforge.set_context(mode=opforge.GRAPH_MODE)
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, BATCH = 12, 8 * size, 4, 16


class MLP(nn.Cell):
    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal")
        self.act = nn.ReLU()
        self.fc2 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform", bias_init="normal")
        if tensor_parallel:
            self.fc1.matmul.shard(((1, 1), (size, 1)))  # column parallel: W1 (HIDDEN, IN) split by rows
            self.fc1.bias_add.shard(((1, size), (size,)))
            self.fc2.matmul.shard(((1, size), (1, size)))  # row parallel: W2 (OUT, HIDDEN) split by columns

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Embedding(nn.Cell):
    """A vocabulary-parallel embedding table (rows split across the ranks) feeding a Dense."""

    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.table = opforge.Parameter(
            opforge.Tensor(np.random.default_rng(3).standard_normal((VOCAB, IN)).astype(np.float32)), name="table"
        )
        self.gather = ops.Gather()
        self.mean = ops.ReduceMean()
        self.fc = nn.Dense(IN, OUT, weight_init="he_uniform")
        if tensor_parallel:
            self.gather.shard(((size, 1), (1, 1)))

    def construct(self, ids):
        return self.fc(self.mean(self.gather(self.table, ids, 0), 1))


class Encoder(nn.Cell):
    """A Megatron-style Transformer encoder layer: heads split across the ranks (column-parallel q, k, v,
    row-parallel output projection), a column- then row-parallel feed-forward, whole LayerNorms."""

    def __init__(self, tensor_parallel: bool):
        super().__init__()
        # The key projection has no bias: softmax makes its gradient zero, and Adam would amplify the rounding
        # noise of a zero gradient into updates of the learning rate's size.
        self.q, self.k, self.v = (nn.Dense(IN, IN, weight_init="he_uniform", has_bias=name != "k") for name in "qkv")
        self.o = nn.Dense(IN, IN, weight_init="he_uniform")
        self.ff1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", activation="gelu")
        self.ff2 = nn.Dense(HIDDEN, IN, weight_init="he_uniform")
        self.norm1, self.norm2 = nn.LayerNorm((IN,)), nn.LayerNorm((IN,))
        self.head = nn.Dense(IN, OUT, weight_init="he_uniform")
        self.reshape, self.transpose = ops.Reshape(), ops.Transpose()
        self.scores = ops.BatchMatMul(transpose_b=True)
        self.mix = ops.BatchMatMul()
        self.softmax = ops.Softmax()
        self.mean = ops.ReduceMean()
        if tensor_parallel:
            for dense in (self.q, self.k, self.v, self.ff1):
                dense.matmul.shard(((1, 1), (size, 1)))
                if dense.has_bias:
                    dense.bias_add.shard(((1, size), (size,)))
            for dense in (self.o, self.ff2):
                dense.matmul.shard(((1, size), (1, size)))

    def heads(self, x, b, s):
        return self.transpose(self.reshape(x, (b, s, HEADS, IN // HEADS)), (0, 2, 1, 3))

    def construct(self, x):
        b, s, d = x.shape
        flat = self.reshape(x, (b * s, d))
        q, k, v = (self.heads(f(flat), b, s) for f in (self.q, self.k, self.v))
        att = self.softmax(self.scores(q, k) * (1.0 / np.sqrt(d // HEADS)))
        mixed = self.reshape(self.transpose(self.mix(att, v), (0, 2, 1, 3)), (b * s, d))
        h = self.norm1(flat + self.o(mixed))
        h = self.norm2(h + self.ff2(self.ff1(h)))
        return self.head(self.mean(self.reshape(h, (b, s, d)), 1))


class BatchSplit(nn.Cell):
    """Data parallel written as a strategy: the batch dim of x split across the ranks, each rank reading its
    own block of the global batch (full_batch=False); the weights stay whole."""

    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal", activation="relu")
        self.fc2 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform")
        if tensor_parallel:
            self.fc1.matmul.shard(((size, 1), (1, 1)))

    def construct(self, x):
        return self.fc2(self.fc1(x))


class SequenceParallel(nn.Cell):
    """Megatron's sequence parallelism: a row-parallel Dense whose partial sums a row-split ReLU reads (one
    ReduceScatter, not an AllReduce and a slice), then a column-split Tanh (one AlltoAll moves the split
    from the rows to the columns, not an AllGather and a slice)."""

    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal")
        self.fc2 = nn.Dense(HIDDEN, IN, weight_init="he_uniform", has_bias=False)
        self.relu, self.tanh = ops.ReLU(), ops.Tanh()
        self.head = nn.Dense(IN, OUT, weight_init="he_uniform")
        if tensor_parallel:
            self.fc1.matmul.shard(((1, 1), (size, 1)))
            self.fc1.bias_add.shard(((1, size), (size,)))
            self.fc2.matmul.shard(((1, size), (1, size)))
            self.relu.shard(((size, 1),))
            self.tanh.shard(((1, size),))

    def construct(self, x):
        return self.head(self.tanh(self.relu(self.fc2(self.fc1(x)))))


class ConvNet(nn.Cell):
    """A small CNN split by channels, Megatron's way: the first convolution's filters split (each rank computes
    its output channels), BatchNorm, ReLU and max pooling per channel, the second convolution reading them split
    (partial sums over its input channels, completed once), then a Dense head; the backward convolutions take
    their layouts from these."""

    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4 * size, 3, pad_mode="same", weight_init="he_uniform")
        self.bn = nn.BatchNorm2d(4 * size)
        self.relu, self.pool = nn.ReLU(), nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4 * size, 8, 3, pad_mode="pad", padding=1, weight_init="he_uniform")
        self.flatten = nn.Flatten()
        self.head = nn.Dense(8 * (IMAGE // 2) ** 2, OUT, weight_init="he_uniform")
        if tensor_parallel:
            self.conv1.conv2d.shard(((1, 1, 1, 1), (size, 1, 1, 1)))
            self.conv2.conv2d.shard(((1, size, 1, 1), (1, size, 1, 1)))

    def construct(self, x):
        return self.head(self.flatten(self.conv2(self.pool(self.relu(self.bn(self.conv1(x)))))))


class SpatialConvNet(nn.Cell):
    """Two convolutions split by image rows (MindSpore's ``((1, 1, h, 1), (1, 1, 1, 1))``): each rank convolves
    its block of rows and the halo rows it fetches from its neighbours ("same" padding, then explicit padding),
    max pooling between them on the rows' split (its 2 x 2 windows within each block: no halo), then a Dense
    head; the backward convolutions and pooling split alike."""

    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, pad_mode="same", weight_init="he_uniform")
        self.relu, self.pool = nn.ReLU(), nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 3, pad_mode="pad", padding=1, weight_init="he_uniform")
        self.flatten = nn.Flatten()
        self.head = nn.Dense(8 * (SPATIAL // 2) ** 2, OUT, weight_init="he_uniform")
        if tensor_parallel:
            self.conv1.conv2d.shard(((1, 1, size, 1), (1, 1, 1, 1)))
            self.conv2.conv2d.shard(((1, 1, size, 1), (1, 1, 1, 1)))

    def construct(self, x):
        return self.head(self.flatten(self.conv2(self.pool(self.relu(self.conv1(x))))))


class TableGradient(nn.Cell):
    """The gradient of the loss with respect to an embedding table, taken inside the outermost cell (so the
    backward runs sharded, as in a training step)."""

    def __init__(self, net, table):
        super().__init__()
        self.net = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
        self.grad = ops.GradOperation(get_by_list=True)
        self.weights = opforge.ParameterTuple([table])

    def construct(self, x, y):
        return self.grad(self.net, self.weights)(x, y)[0]


def table_gradient(net, x, y):
    return TableGradient(net, net.table)(opforge.Tensor(x), opforge.Tensor(y))


MODELS = {
    "seqpar": SequenceParallel,
    "mlp": MLP,
    "embedding": Embedding,
    "encoder": Encoder,
    "batch": BatchSplit,
    "zero": BatchSplit,
    "zero-semi": BatchSplit,
    "cnn": ConvNet,
    "spatial": SpatialConvNet,
}
VOCAB, HEADS, SEQ, IMAGE, SPATIAL = 8 * size, size, 6, 6, 4 * size


def train(tensor_parallel: bool, data):
    nn.set_seed(rank if args.rank_seeds and tensor_parallel else 0)
    net = MODELS[args.model](tensor_parallel)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    params = net.trainable_params()
    if args.optimizer == "adam":
        opt = nn.Adam(params, learning_rate=0.01, weight_decay=args.weight_decay)
    elif args.optimizer == "momentum":
        opt = nn.Momentum(params, learning_rate=0.05, momentum=0.9, weight_decay=args.weight_decay)
    else:
        opt = nn.SGD(params, learning_rate=0.1, weight_decay=args.weight_decay)
    sens = float(size) if args.no_loss_repeated_mean and not tensor_parallel else 1.0
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt, sens=sens)
    losses = [float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) for x, y in data[:-1]]
    # The last step and a forward pass alone: the collectives the interpreter ran in each
    redistribution_counts(reset=True), redistribution_volume(reset=True)
    x, y = data[-1]
    losses.append(float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()))
    step_counts, step_volume = redistribution_counts(reset=True), redistribution_volume(reset=True)
    net(opforge.Tensor(x))
    if tensor_parallel:
        counts.update(step=step_counts, forward=redistribution_counts(reset=True))
        counts.update(step_volume=step_volume, forward_volume=redistribution_volume(reset=True))
    if args.graph and tensor_parallel:  # the first step ran eagerly (laying the weights out), then one trace
        graph = step._sharded_graph
        assert len(graph.traces()) == 1 and graph.traced == 1, graph
        if args.model.startswith("zero"):  # the gradients reduce-scattered and the weights all-gathered by the replay
            explained = graph.explain()
            counts["trace"] = {k: explained.count(f"  {k}") for k in ("AllReduce", "ReduceScatter", "AllGather")}
            if get_rank() == 0:
                print("TRACE", json.dumps(counts["trace"]), flush=True)
            assert "ReduceScatter" in explained and "AllGather" in explained, explained
    return net, losses, opt


def released_bytes(holder: list) -> int:
    """The bytes the allocator frees (``opforge.memory.stats()``) when the objects in ``holder`` go."""
    gc.collect()  # garbage already unreachable first: a training cell and its traces (a cycle in GRAPH_MODE)
    before = memory.stats()["requested_bytes_in_use"]
    holder.clear()
    gc.collect()
    return before - memory.stats()["requested_bytes_in_use"]


rng = np.random.default_rng(1)
counts = {}


def inputs():
    if args.model == "embedding":
        return rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    if args.model == "encoder":
        return rng.standard_normal((BATCH // 4, SEQ, IN)).astype(np.float32)
    if args.model in ("cnn", "spatial"):
        image = IMAGE if args.model == "cnn" else SPATIAL
        return rng.standard_normal((BATCH // 2, 3, image, image)).astype(np.float32)
    return rng.standard_normal((BATCH, IN)).astype(np.float32)


data = [
    (
        inputs(),
        rng.integers(
            0, OUT, {"encoder": BATCH // 4, "cnn": BATCH // 2, "spatial": BATCH // 2}.get(args.model, BATCH)
        ).astype(np.int32),
    )
    for _ in range(args.steps)
]

full_batch = args.model not in ("batch", "zero", "zero-semi")
if args.model == "zero":  # data parallel with optimizer parallel (ZeRO stage 1)
    opforge.set_auto_parallel_context(
        parallel_mode="data_parallel", gradients_mean=True, enable_parallel_optimizer=True, device_num=size
    )
elif args.model == "zero-semi":  # the batch split by a strategy, the gradients' partial sums reduce-scattered
    opforge.set_auto_parallel_context(
        parallel_mode=args.mode, device_num=size, full_batch=False, enable_parallel_optimizer=True
    )
else:
    opforge.set_auto_parallel_context(parallel_mode=args.mode, device_num=size, full_batch=full_batch)
if args.no_loss_repeated_mean:
    opforge.set_auto_parallel_context(loss_repeated_mean=False)
if full_batch:
    net, losses, opt = train(True, data)
else:  # each rank reads its block of every global batch
    block = BATCH // size
    blocks = [(x[rank * block : (rank + 1) * block], y[rank * block : (rank + 1) * block]) for x, y in data]
    net, losses, opt = train(True, blocks)
blocks = {p.name: local_of(p).asnumpy() for p in net.trainable_params()}
gathered = MPI.COMM_WORLD.gather(blocks, root=0)
if args.model == "embedding":  # the table's gradient: only this rank's block of rows, never the whole table
    grad = local_of(table_gradient(net, *data[0])).asnumpy()
    assert grad.shape == local_of(net.table).shape == (VOCAB // size, IN), (grad.shape, local_of(net.table).shape)
    grad_blocks = MPI.COMM_WORLD.gather(grad, root=0)
# This rank's optimizer states, then its weights, as the allocator counts them (sharded: the blocks only)
held = [opt]
del opt
local_states = released_bytes(held)
held = [net]
del net
local_bytes = released_bytes(held)
opforge.reset_auto_parallel_context()

if rank == 0:
    ref_net, ref_losses, ref_opt = train(False, data)
    worst = 0.0
    for p in ref_net.trainable_params():
        whole = p.asnumpy()
        parts = [g[p.name] for g in gathered]
        if parts[0].shape == whole.shape:
            got = parts[0]
        else:
            axis = next(i for i, (a, b) in enumerate(zip(parts[0].shape, whole.shape)) if a != b)
            got = np.concatenate(parts, axis=axis)
        # relative to the parameter's largest value (absolute for a parameter that stays near zero, such as
        # the key projection's bias, whose gradient softmax makes zero)
        diff = float(np.max(np.abs(got - whole)) / max(np.max(np.abs(whole)), 1.0))
        worst = max(worst, diff)
        if diff > 1e-5:
            print(f"TP-FAIL {p.name}: relative difference {diff:.3g}", flush=True)
            MPI.COMM_WORLD.Abort(1)
    if args.model == "embedding":
        ref_grad = table_gradient(ref_net, *data[0]).asnumpy()
        grad_diff = float(np.max(np.abs(np.concatenate(grad_blocks) - ref_grad)) / max(np.max(np.abs(ref_grad)), 1e-12))
        print(f"GRAD-BLOCK {grad.shape[0]} {ref_grad.shape[0]} {grad_diff:.3g}", flush=True)
        worst = max(worst, grad_diff)
    del p
    held = [ref_opt]
    del ref_opt
    ref_states = released_bytes(held)
    held = [ref_net]
    del ref_net
    ref_bytes = released_bytes(held)
    # Under data parallel each rank's loss is its block's; the parameters are compared instead.
    if not args.model.startswith("zero") and not np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6):
        print(f"TP-FAIL losses {losses} != {ref_losses}", flush=True)
        MPI.COMM_WORLD.Abort(1)
    print("COUNTS", json.dumps(counts), flush=True)
    print(f"TP-OK {worst:.3g} {local_bytes} {ref_bytes} {local_states} {ref_states}", flush=True)
sys.exit(0)
