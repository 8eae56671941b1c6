"""Run under ``mpiexec -n N``: MindSpore's ``Cell.shard`` and ``shard(fn)``. A block (Dense -> ReLU -> Dense)
is given ``in_strategy=((N, 1),)`` (its input's rows split) and a ``parameter_plan`` splitting its first
weight's rows (column parallel); the operators inside follow. It trains 3 steps with Momentum in
SEMI_AUTO_PARALLEL, in PYNATIVE_MODE and in GRAPH_MODE, to the parameters of one process; a function given
``in_strategy`` and ``out_strategy`` computes what NumPy does, its output laid out as asked; a MatMul sharded by
MindSpore Layouts, its output ``reshard``ed by rows, too. The outputs come out as MindSpore's ranks get them: an
evaluation network's whole with whole inputs, each rank's rows with its rows in; a training network's its block.
Prints "SHARD-OK <max relative difference of the parameters> <layouts as JSON>" or exits 1.
"""

import json
import sys
import tempfile

import numpy as np

import opforge
from opforge import nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole, is_sharded, layout_of

init()
size = get_group_size()
rng = np.random.default_rng(0)
x = rng.standard_normal((8, 6)).astype(np.float32)
y = rng.standard_normal((8, 4)).astype(np.float32)


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense1 = nn.Dense(6, 8 * size, activation="relu")
        self.dense2 = nn.Dense(8 * size, 4)

    def construct(self, x):
        return self.dense2(self.dense1(x))


def train(parallel: bool):
    nn.set_seed(0)
    block = Block()
    if parallel:
        opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
        block.shard(in_strategy=((size, 1),), parameter_plan={"dense1.weight": (size, 1)})
    step = nn.TrainOneStepCell(nn.WithLossCell(block, nn.MSELoss()), nn.Momentum(block.trainable_params(), 0.1, 0.9))
    for _ in range(3):
        step(opforge.Tensor(x), opforge.Tensor(y))
    layouts = {p.name: str(layout_of(p)) for p in block.trainable_params()}
    params = {p.name: gather_whole(p).asnumpy() for p in block.trainable_params()}
    opforge.reset_auto_parallel_context()
    return params, layouts


whole, _ = train(False)
worst = 0.0
for mode in (opforge.PYNATIVE_MODE, opforge.GRAPH_MODE):  # eagerly, and traced from the second step on
    opforge.set_context(mode=mode)
    split, layouts = train(True)
    opforge.set_context(mode=opforge.PYNATIVE_MODE)
    worst = max([worst] + [float(np.abs(split[k] - whole[k]).max() / (np.abs(whole[k]).max() + 1e-12)) for k in whole])
if worst > 1e-5:
    sys.exit(f"the sharded block's parameters differ from one process's by {worst}")
if "tensor_map=[0, -1]" not in layouts["dense1.weight"]:
    sys.exit(f"dense1.weight was not split by rows: {layouts}")


class Outer(nn.Cell):  # MindSpore's shard-function sample's form: the function Cell.shard returns kept as an attribute
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.block_shard = self.block.shard(
            in_strategy=((size, 1),), parameter_plan={"self.block.dense1.weight": (size, 1)}
        )

    def construct(self, x):
        return self.block_shard(x)


opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
outer = Outer()
names = [p.name for p in outer.trainable_params()]
outer(opforge.Tensor(x))
opforge.reset_auto_parallel_context()
if names != ["block.dense1.weight", "block.dense1.bias", "block.dense2.weight", "block.dense2.bias"]:
    sys.exit(f"the shard function registered the block again: {names}")
if "tensor_map=[0, -1]" not in str(layout_of(outer.block.dense1.weight)):
    sys.exit(f"the 'self.'-named parameter_plan entry was not applied: {layout_of(outer.block.dense1.weight)}")


class Twice(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scaled = opforge.shard(lambda a: ops.relu(a) * 2.0, in_strategy=((size, 1),), out_strategy=((1, size),))

    def construct(self, a):
        out = self.scaled(a)
        self.seen = str(layout_of(out))  # (inside the network: as out_strategy says)
        return out


opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
twice = Twice()
out = twice(opforge.Tensor(x[:, :4]))  # an evaluation network of whole inputs: its output whole on every rank
out_layout = twice.seen
got = out.asnumpy()
opforge.reset_auto_parallel_context()
if not np.allclose(got, np.maximum(x[:, :4], 0) * 2.0) or "tensor_map=[-1, 0]" not in out_layout:
    sys.exit(f"the sharded function gave {got} laid out as {out_layout}")


class RowParallel(nn.Cell):  # strategies as MindSpore Layouts; the output resharded by rows
    def __init__(self):
        super().__init__()
        layout = opforge.Layout((size,), ("mp",))
        self.matmul = ops.MatMul().shard((layout("None", "mp"), layout("mp", "None")))
        self.rows = layout("mp", "None")
        self.w = opforge.Parameter(opforge.Tensor(y), name="w")

    def construct(self, a):
        out = opforge.reshard(self.matmul(a, self.w), self.rows)
        self.seen = str(layout_of(out))
        return out


opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
a = np.hstack([x, x[:, :2]])  # (8, 8): the inner dim divides by 4 ranks
row_parallel = RowParallel()
product = row_parallel(opforge.Tensor(a))
product_layout = row_parallel.seen
got = product.asnumpy()
opforge.reset_auto_parallel_context()
if not np.allclose(got, a @ y, atol=1e-5) or "tensor_map=[0, -1]" not in product_layout:
    sys.exit(f"the MatMul of Layouts gave {got} laid out as {product_layout}")
for call in (ops.ReduceSum(), ops.ReduceSum(), lambda t: opforge.grad(ops.ReduceSum())(t)):  # (a tape too)
    try:  # an operator outside the network on a Parameter it split: a ValueError saying so, every time
        call(row_parallel.w)
        sys.exit("an operator outside the network read a Parameter it split")
    except ValueError as e:
        if "split across ranks" not in str(e) or "local_of" not in str(e):
            sys.exit(f"the error of an operator on a split Parameter: {e}")
opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
# a gradient function called outside any parallel call is the outermost call (MindSpore's PyNative shard functions):
# its tape sees the split calls, and the weight's gradient keeps the weight's layout
row_parallel = RowParallel()
_, (grad_w,) = opforge.value_and_grad(row_parallel, None, [row_parallel.w])(opforge.Tensor(a))
if not np.allclose(gather_whole(grad_w).asnumpy(), a.T @ np.ones((8, 4), np.float32), atol=1e-5):
    sys.exit(f"the gradient of a split network taken from outside: {gather_whole(grad_w).asnumpy()}")
nn.SGD([row_parallel.w], 1.0)((grad_w,))  # the gradient block, given back to a parallel call, read with its layout
if not np.allclose(gather_whole(row_parallel.w).asnumpy(), y - a.T @ np.ones((8, 4), np.float32), atol=1e-4):
    sys.exit(f"the optimizer's step on the gradient block: {gather_whole(row_parallel.w).asnumpy()}")
try:  # another tape outside the outermost call (a vjp) would lose the split network's gradients: it raises
    opforge.ops.vjp(RowParallel(), opforge.Tensor(a))
    sys.exit("a split network differentiated by a vjp from outside gave gradients")
except RuntimeError as e:
    if "differentiated from outside it" not in str(e) or "TrainOneStepCell" not in str(e):
        sys.exit(f"the error of a split network differentiated from outside: {e}")
opforge.reset_auto_parallel_context()
# each rank's batch block in (full_batch=False): an evaluation network's output is each rank's rows of it, a plain
# Tensor that operators outside read as MindSpore's ranks do (their slice); gather_whole assembles it
opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL)
rows = a.shape[0] // size
mine = a[get_rank() * rows : (get_rank() + 1) * rows]
product = RowParallel()(opforge.Tensor(mine))
local_sum = float(ops.ReduceSum()(product).asnumpy())
whole = gather_whole(product).asnumpy()
if product.shape != (rows, 4) or not np.allclose(local_sum, (mine @ y).sum(), atol=1e-4):
    sys.exit(f"the output block {product.shape} summed to {local_sum}, not its rows' {(mine @ y).sum()}")
if not np.allclose(whole, a @ y, atol=1e-5):
    sys.exit(f"the gathered output block gave {whole}")


class RowsBack(nn.Cell):  # its output whole after its operators (the partial sum completed by the Add)
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul().shard(((1, size), (size, 1)))
        self.w = opforge.Parameter(opforge.Tensor(y), name="w")

    def construct(self, a):
        return self.matmul(a, self.w) + 1.0


rows_back = RowsBack()(opforge.Tensor(mine))  # MindSpore's VirtualOutput: this rank's rows of it, all the same
if rows_back.shape != (rows, 4) or not np.allclose(rows_back.asnumpy(), mine @ y + 1.0, atol=1e-5):
    sys.exit(f"a whole output with each rank's rows in came out {rows_back.shape}")
# a gradient position that is not a Tensor (a tuple argument) has no gradient: None, as in one process
_, (_, no_grad) = opforge.value_and_grad(lambda t, _pair: ops.ReduceSum()(t), grad_position=(0, 1))(
    opforge.Tensor(mine), (opforge.Tensor(2.0),)
)
if no_grad is not None:
    sys.exit(f"a tuple argument's gradient: {no_grad}")
# the gradient of a batch-split input is this rank's rows of it, as MindSpore's (it was the whole batch's)
row_grad = opforge.grad(lambda t: ops.ReduceSum()(RowParallel()(t)))(opforge.Tensor(mine))
if row_grad.shape != mine.shape or not np.allclose(row_grad.asnumpy(), np.ones((rows, 4), np.float32) @ y.T, atol=1e-5):
    sys.exit(f"the gradient of the rank's input rows: {row_grad.shape} {row_grad.asnumpy()}")
for called in (True, False):  # export lays a fresh network out first (its layout step), as MindSpore compiles it
    exported = RowParallel()
    if called:
        exported(opforge.Tensor(mine))
    with tempfile.TemporaryDirectory() as folder:  # each rank's graph (its local program) exported, as MindSpore's
        path = f"{folder}/net_rank_{get_rank()}"
        opforge.export(exported, opforge.Tensor(mine), file_name=path, file_format="MINDIR")
        # the loaded graph runs as recorded in the parallel context too (its strategies not applied again)
        replayed = nn.GraphCell(opforge.load(path + ".mindir"))(opforge.Tensor(mine)).asnumpy()
    if not np.allclose(replayed, mine @ y, atol=1e-5):
        sys.exit(f"the exported graph ({'called' if called else 'fresh'} network) gave {replayed}, not its rows'")


class InputGradient(nn.Cell):  # a training network's output: as its operators left it (columns split)
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul().shard(((1, size), (size, 1)))
        self.w = opforge.Parameter(opforge.Tensor(y), name="w")

    def construct(self, a):
        return opforge.grad(lambda t: ops.ReduceSum()(self.matmul(t, self.w)))(a)


opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
gradient = InputGradient()(opforge.Tensor(a))
columns = gradient.shape
whole = gather_whole(gradient).asnumpy()
opforge.reset_auto_parallel_context()
if columns != (8, 8 // size) or not np.allclose(whole, np.tile(y.sum(1), (8, 1)), atol=1e-5):
    sys.exit(f"the training network's split output: local shape {columns}, gathered {whole}")


class ReturnsWeight(nn.Cell):  # a network returning a weight it split: the rank's block, the weight left split
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul().shard(((1, size), (size, 1)))
        self.w = opforge.Parameter(opforge.Tensor(y), name="w")

    def construct(self, a):
        return self.matmul(a, self.w), self.w


opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
returns_weight = ReturnsWeight()
_, weight = returns_weight(opforge.Tensor(a))
if (
    weight.shape != (8 // size, 4)
    or not is_sharded(returns_weight.w)
    or not np.allclose(gather_whole(weight).asnumpy(), y)
):
    sys.exit(f"a returned split weight: shape {weight.shape}, the weight {returns_weight.w._data}")
opforge.reset_auto_parallel_context()
if get_rank() == 0:
    print("SHARD-OK", worst, json.dumps({**layouts, "function output": out_layout, "resharded": product_layout}))
