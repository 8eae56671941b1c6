"""Run under ``mpiexec -n N``: checkpoints of a tensor-parallel network (``Primitive.shard``).

A Megatron-style MLP (column- then row-parallel Dense) trains two steps; every rank saves it twice, as
MindSpore's ranks do: ``integrated_save=True`` (each split parameter gathered whole, so every rank's file holds
the whole network) and ``integrated_save=False`` (the rank's own blocks). Checked: the whole file equals the
gathered parameters on every rank; the block file holds the rank's blocks; the whole checkpoint loads into a
fresh tensor-parallel network, back into the original (its parameters split already) and into one process's
network, and each then trains on as the original did; the strategy file the first step wrote
(``strategy_ckpt_config``) merges the block files whole (``merge_sliced_parameter``,
``load_distributed_checkpoint``), and re-cuts them by another strategy (``transform_checkpoint_by_rank``)
(max relative difference 1e-5). With SUFFIX ``.json`` the strategy files are MindSpore's JSON ones (the
whole shapes checked in them). Prints "CKPT-OK <max relative difference>" or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/sharded_checkpoint.py DIRECTORY [SUFFIX]
"""

import json
import os
import sys

import numpy as np
from megatron import whole
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch import strategy_file
from opforge.dispatch.sharding import is_sharded, local_of
from opforge.parallel.checkpoint_transform import transform_checkpoint_by_rank

init()
rank, size = get_rank(), get_group_size()
directory = sys.argv[1]
suffix = sys.argv[2] if len(sys.argv) > 2 else ".ckpt"
IN, HIDDEN, OUT, BATCH = 6, 4 * size, 3, 8


class MLP(nn.Cell):
    def __init__(self, tensor_parallel: bool):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal", activation="relu")
        self.fc2 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform")
        if tensor_parallel:
            self.fc1.matmul.shard(((1, 1), (size, 1)))
            self.fc1.bias_add.shard(((1, size), (size,)))
            self.fc2.matmul.shard(((1, size), (1, size)))

    def construct(self, x):
        return self.fc2(self.fc1(x))


def training_step(net):
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.1, 0.9))


def run(step, batches):
    for x, y in batches:
        step(opforge.Tensor(x), opforge.Tensor(y))


def fail(message: str):
    print(f"CKPT-FAIL rank {rank}: {message}", flush=True)
    MPI.COMM_WORLD.Abort(1)


rng = np.random.default_rng(7)
batches = [
    (rng.standard_normal((BATCH, IN)).astype(np.float32), rng.integers(0, OUT, BATCH).astype(np.int32))
    for _ in range(4)
]
strategy_path = os.path.join(directory, f"strategy{suffix}")
opforge.set_auto_parallel_context(
    parallel_mode="semi_auto_parallel",
    device_num=size,
    full_batch=True,
    strategy_ckpt_config={"save_file": strategy_path},
)
nn.set_seed(0)
net = MLP(True)
step = training_step(net)
run(step, batches[:2])
assert any(is_sharded(p) for p in step.get_parameters()), "the strategy split no parameter"

whole_file = opforge.save_checkpoint(step, os.path.join(directory, f"whole_rank{rank}.ckpt"))
block_file = opforge.save_checkpoint(step, os.path.join(directory, f"block_rank{rank}.ckpt"), integrated_save=False)
saved, blocks = opforge.load_checkpoint(whole_file), opforge.load_checkpoint(block_file)
for p in step.get_parameters():
    if not np.array_equal(saved[p.name].asnumpy(), whole(p)):
        fail(f"{p.name}: the integrated checkpoint differs from the gathered parameter")
    if not np.array_equal(blocks[p.name].asnumpy(), local_of(p).asnumpy()):
        fail(f"{p.name}: the block checkpoint differs from this rank's block")
if is_sharded(net.fc1.weight) and blocks["fc1.weight"].shape[0] * size != saved["fc1.weight"].shape[0]:
    fail(f"fc1.weight: block {blocks['fc1.weight'].shape} is not 1/{size} of {saved['fc1.weight'].shape}")
# a rank's block file loads back into its split network (MindSpore's fault-recovery tutorial: load_param_into_net of
# the rank's integrated_save=False checkpoint)
before = {p.name: local_of(p).asnumpy().copy() for p in step.get_parameters()}
run(step, batches[2:3])
not_loaded, _ = opforge.load_param_into_net(step, blocks)
if not_loaded or any(not np.array_equal(local_of(p).asnumpy(), before[p.name]) for p in step.get_parameters()):
    fail(f"the rank's block checkpoint did not load back into its blocks (not loaded: {not_loaded})")
files = MPI.COMM_WORLD.allgather(open(whole_file, "rb").read())
if any(f != files[0] for f in files):
    fail("the ranks' integrated checkpoints differ")

# MindSpore's way back from blocks: the strategy file the first step wrote, every rank's block file
MPI.COMM_WORLD.Barrier()
block_files = [os.path.join(directory, f"block_rank{r}.ckpt") for r in range(size)]
strategy = opforge.build_searched_strategy(strategy_path)
if list(strategy["fc1.weight"].tensor_map[0].dim) != [0, -1] or list(strategy["fc2.weight"].tensor_map[0].dim) != [
    -1,
    0,
]:
    fail(f"the strategy file's tensor maps: {strategy}")
if suffix == ".json":
    layouts = json.load(open(strategy_path))["parallel_layout_item"]
    if layouts["fc1.weight"]["tensor_shape"] != [HIDDEN, IN] or np.prod(layouts["fc2.weight"]["dev_matrix"]) != size:
        fail(f"the JSON strategy file's fc1.weight: {layouts['fc1.weight']}")
slices = [opforge.load_checkpoint(f) for f in block_files]
for name in strategy:
    merged = opforge.merge_sliced_parameter([s[name] for s in slices], strategy)
    if not np.array_equal(merged.asnumpy(), saved[name].asnumpy()):
        fail(f"{name}: merge_sliced_parameter differs from the whole parameter")
opforge.reset_auto_parallel_context()
whole_net = MLP(False)
opforge.load_distributed_checkpoint(whole_net, block_files, train_strategy_filename=strategy_path)
for p in whole_net.trainable_params():
    if not np.array_equal(p.asnumpy(), saved[p.name].asnumpy()):
        fail(f"{p.name}: load_distributed_checkpoint differs from the whole parameter")
# re-cut without the network (transform_checkpoint_by_rank): the blocks of a strategy splitting every weight's
# columns, and the whole network (no destination strategy)
if rank == 0:
    columns = os.path.join(directory, f"columns{suffix}")
    cut = {n: v.shape for n, v in saved.items() if n in strategy and len(v.shape) == 2 and v.shape[1] % size == 0}
    strategy_file.write_layouts(columns, {n: ([size], [-1, 0]) for n in cut})
    sources = dict(enumerate(block_files))
    for r in range(size):
        out = os.path.join(directory, f"columns_rank{r}.ckpt")
        transform_checkpoint_by_rank(r, sources, out, strategy_path, columns)
        for n, block in opforge.load_checkpoint(out).items():
            want = slices[r][n].asnumpy()  # not in both strategies (a bias, a moment): rank r's as it is
            if n in cut:
                k = saved[n].shape[1] // size
                want = saved[n].asnumpy()[:, r * k : (r + 1) * k]
            if not np.array_equal(block.asnumpy(), want):
                fail(f"{n}: transform_checkpoint_by_rank's block of rank {r} differs")
    transform_checkpoint_by_rank(0, sources, os.path.join(directory, "merged.ckpt"), strategy_path, None)
    for n, value in opforge.load_checkpoint(os.path.join(directory, "merged.ckpt")).items():
        if n in strategy and not np.array_equal(value.asnumpy(), saved[n].asnumpy()):
            fail(f"{n}: transform_checkpoint_by_rank merged it otherwise than whole")
opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", device_num=size, full_batch=True)

run(step, batches[2:])  # the original trains on
expected = {p.name: whole(p) for p in net.trainable_params()}

resumed = MLP(True)  # a fresh tensor-parallel network and optimizer from the whole checkpoint
resumed_step = training_step(resumed)
not_loaded, _ = opforge.load_param_into_net(resumed_step, saved)
if not_loaded:
    fail(f"not loaded into the sharded network: {not_loaded}")
run(resumed_step, batches[2:])
got = {p.name: whole(p) for p in resumed.trainable_params()}

# loaded back into the original, whose parameters are split already: it retraces the same two steps
opforge.load_param_into_net(step, saved)
run(step, batches[2:])
again = {p.name: whole(p) for p in net.trainable_params()}
opforge.reset_auto_parallel_context()

single = MLP(False)  # one process's network from the same file
single_step = training_step(single)
opforge.load_param_into_net(single_step, saved)
run(single_step, batches[2:])
worst = 0.0
for name, value in expected.items():
    scale = max(float(np.max(np.abs(value))), 1.0)
    single_value = single.parameters_dict()[name].asnumpy()
    for label, other in (("resumed", got[name]), ("reloaded", again[name]), ("one process", single_value)):
        diff = float(np.max(np.abs(other - value))) / scale
        worst = max(worst, diff)
        if diff > 1e-5:
            fail(f"{name}: the {label} network differs by {diff:.3g} after two more steps")
if rank == 0:
    print(f"CKPT-OK {worst:.3g}", flush=True)
