"""Run under ``mpiexec -n N`` (N a multiple of 2): a 2-stage pipeline (``pipeline_stage``, ``PipelineCell``,
1F1B over 4 micro-batches) trains to the parameters of one process on the whole batches, each rank holding
only its stage's parameters (``--tensor-parallel``: stage 1's Dense layers split over its ranks too).
``--auto-parallel``: MindSpore 2.6's way (its AutoParallel docstring's): the
network and optimizer built under ``no_init_parameters``, the stages given by ``Pipeline``'s ``stage_config``,
``AutoParallel(...).pipeline(stages=2)`` (and ``hsdp()``) instead of the global context, trained by
``Model.train`` on a dataset; with ``--functional``, MindSpore's pipeline tutorial: ``value_and_grad`` of the
``Pipeline``, a ``PipelineGradReducer``, the optimizer, the step function in ``AutoParallel``. Rank 0 gathers
each parameter from the first rank of the stage that trains it and prints "PIPE-OK <max relative difference>
<losses equal>" or exits 1."""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole, layout_of, local_of, replicated_calls
from opforge.parallel.auto_parallel import AutoParallel
from opforge.parallel.nn import Pipeline, PipelineGradReducer
from opforge.tensor import is_placeholder

parser = argparse.ArgumentParser()
parser.add_argument("--optimizer", default="momentum", choices=["momentum", "adam"])
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--graph", action="store_true", help="train in GRAPH_MODE (the step traced once)")
parser.add_argument(
    "--parallel-optimizer",
    action="store_true",
    help="optimizer parallel within each stage (its ranks split the states)",
)
parser.add_argument("--auto-parallel", action="store_true", help="MindSpore 2.6's AutoParallel, Pipeline and Model")
parser.add_argument(
    "--tensor-parallel",
    action="store_true",
    help="the ranks of stage 1 split its two Dense layers (column then row parallel): pipeline and tensor parallel",
)
parser.add_argument(
    "--data-parallel",
    action="store_true",
    help="with --auto-parallel: dataset_strategy('data_parallel'), each rank of a stage reading its rows of a batch",
)
parser.add_argument(
    "--functional",
    action="store_true",
    help="with --auto-parallel: value_and_grad of the Pipeline, PipelineGradReducer, the step in AutoParallel",
)
parser.add_argument(
    "--checkpoint",
    help="a folder: each rank writes its strategy file and its block checkpoint there; rank 0 merges the stages' "
    "strategy files (merge_pipeline_strategys) and transforms the blocks whole, which must equal one process's",
)
parser.add_argument(
    "--print",
    action="store_true",
    help="ops.Print of fc1's and fc2's outputs in the network (MindSpore's pipeline tutorial prints so): each rank "
    "of a stage prints its block, the other stage's ranks nothing",
)
parser.add_argument(
    "--no-loss-repeated-mean",
    action="store_true",
    help="loss_repeated_mean=False: the last stage's ranks each repeat the loss, the gradients their sum (the "
    "one-process reference trains with its sensitivity times those ranks)",
)
args = parser.parse_args()

init()
if args.graph:
    opforge.set_context(mode=opforge.GRAPH_MODE)
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, BATCH, MICRO = 10, 16, 4, 16, 4


class Net(nn.Cell):
    def __init__(self, staged: bool):
        super().__init__()
        self.fc1 = nn.Dense(IN, HIDDEN, weight_init="he_uniform", bias_init="normal", activation="tanh")
        self.fc2 = nn.Dense(HIDDEN, HIDDEN, weight_init="he_uniform", activation="relu")
        self.fc3 = nn.Dense(HIDDEN, OUT, weight_init="he_uniform")
        if staged:
            self.fc1.pipeline_stage = 0
            self.fc2.pipeline_stage = 1
            self.fc3.pipeline_stage = 1
        if staged and args.tensor_parallel:  # stage 1's ranks split fc2 by columns, fc3 by rows (Megatron)
            per_stage = size // 2
            self.fc2.matmul.shard(((1, 1), (per_stage, 1)))
            self.fc2.bias_add.shard(((1, per_stage), (per_stage,)))
            self.fc3.matmul.shard(((1, per_stage), (1, per_stage)))

        self.print = opforge.ops.Print()

    def construct(self, x):
        h = self.fc1(x)
        g = self.fc2(h)
        if args.print:  # (a Print of both would run on no rank: each stage has one of them only)
            self.print("fc1 out:", h)
            self.print("fc2 out:", g)
        return self.fc3(g)


def optimizer_for(params):
    return nn.Adam(params, learning_rate=0.01) if args.optimizer == "adam" else nn.Momentum(params, 0.05, 0.9)


def rows_of(batch):
    """This rank's part of a batch: with --data-parallel its block of rows among its stage's ranks."""
    if not args.data_parallel:
        return batch
    per_stage = size // 2
    k = rank % per_stage
    return tuple(a[k * len(a) // per_stage : (k + 1) * len(a) // per_stage] for a in batch)


def settings(parallel_net):
    parallel_net.pipeline(stages=2)
    parallel_net.dataset_strategy("data_parallel" if args.data_parallel else "full_batch")
    if args.parallel_optimizer:
        parallel_net.hsdp(threshold=0)  # (its default keeps states under 64 KB whole: these are smaller)
    return parallel_net


def staged_network():
    """MindSpore 2.6: the network and optimizer built under no_init_parameters, the stages by name."""
    nn.set_seed(0)
    with nn.no_init_parameters():
        net = Net(staged=False)
        opt = optimizer_for(net.trainable_params())
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    stages = {"_backbone.fc1": 0, "_backbone.fc2": 1, "_backbone.fc3": 1}
    return net, opt, Pipeline(loss, MICRO, stage_config=stages)


def train_functional(data):
    """MindSpore's pipeline tutorial: value_and_grad of the Pipeline, its gradients through a PipelineGradReducer,
    the step function wrapped in AutoParallel."""
    net, opt, pipeline = staged_network()
    reducer = PipelineGradReducer(opt.parameters)
    grad_fn = opforge.value_and_grad(lambda x, y: pipeline(x, y), None, opt.parameters)

    @opforge.jit
    def train_one_step(x, y):
        loss, grads = grad_fn(x, y)
        opt(reducer(grads))
        return loss

    parallel_step = settings(AutoParallel(train_one_step, parallel_mode="semi_auto"))
    losses = [float(parallel_step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) for x, y in map(rows_of, data)]
    if args.graph:
        check_trace(parallel_step)
    return net, opt, losses


def train_by_model(data):
    """MindSpore 2.6: no global context; the settings on the AutoParallel wrapper, Model.train."""
    net, opt, pipeline = staged_network()
    parallel_net = settings(AutoParallel(pipeline, parallel_mode="semi_auto"))
    columns = {"x": np.stack([rows_of(b)[0] for b in data]), "y": np.stack([rows_of(b)[1] for b in data])}
    dataset = opforge.dataset.NumpySlicesDataset(columns, shuffle=False)  # a row: one step's whole batch
    losses = []
    model = opforge.Model(parallel_net, optimizer=opt)
    model.train(1, dataset, callbacks=[_StepLosses(losses)])
    check_trace(model.train_network)
    assert opforge.get_auto_parallel_context("pipeline_stages") == 1  # the wrapper's settings stayed its own
    return net, opt, losses


class _StepLosses(opforge.train.Callback):
    def __init__(self, losses: list):
        self.losses = losses

    def step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


def train(staged: bool, data):
    if staged and args.auto_parallel:
        net, opt, losses = (train_functional if args.functional else train_by_model)(data)
        # blocks of the micro-batches cross the stages, not gathered activations
        assert not replicated_calls(), f"operators run on gathered inputs: {replicated_calls()}"
        return check_states(net, opt, losses)
    nn.set_seed(0)
    net = Net(staged)
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    opt = optimizer_for(net.trainable_params())
    # MindSpore's PipelineCell differentiates the sum of its micro-batches' mean losses: MICRO times one
    # process's whole-batch mean, whose TrainOneStepCell is given that sensitivity
    repeats = size // 2 if args.no_loss_repeated_mean else 1  # the last stage's ranks, each holding the loss
    step = nn.TrainOneStepCell(
        nn.PipelineCell(loss, MICRO) if staged else loss, opt, sens=1.0 if staged else MICRO * repeats
    )
    losses = [float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) * (1 if staged else MICRO) for x, y in data]
    if staged:
        check_states(net, opt, losses)
        check_trace(step)
    return net, losses


def check_states(net, opt, losses):
    params = net.trainable_params()
    if args.parallel_optimizer:  # each state 1/n of the parameter on the n ranks of a stage
        per_stage = size // 2
        states = opt.moment1 if args.optimizer == "adam" else opt.moments
        split = [
            (p, m)
            for p, m in zip(params, states)  # (a weight a strategy split keeps its states split so)
            if not is_placeholder(p) and layout_of(p).is_replicated and p.shape[0] % per_stage == 0
        ]
        assert split, "no state of this stage to split"
        for p, m in split:
            assert local_of(m).shape[0] == p.shape[0] // per_stage, (p.name, local_of(m).shape, p.shape)
    return net, losses


def check_trace(step):
    if args.graph:  # the first step ran eagerly, the second was traced, the later ones replayed it
        graph = step._sharded_graph
        assert len(graph.traces()) == 1 and graph.traced == 1, graph
        explained = graph.explain()
        assert ("Send" in explained) and ("Receive" in explained), explained
        assert "; 0 run without entering Python" not in explained, explained  # natively, but the collectives


rng = np.random.default_rng(2)
data = [
    (rng.standard_normal((BATCH, IN)).astype(np.float32), rng.integers(0, OUT, BATCH).astype(np.int32))
    for _ in range(args.steps)
]
if not args.auto_parallel:  # (AutoParallel carries these settings itself)
    opforge.set_auto_parallel_context(
        parallel_mode="semi_auto_parallel",
        pipeline_stages=2,
        full_batch=True,
        enable_parallel_optimizer=args.parallel_optimizer,
        strategy_ckpt_config={"save_file": f"{args.checkpoint}/strategys/rank_{rank}.ckpt" if args.checkpoint else ""},
        loss_repeated_mean=not args.no_loss_repeated_mean,
    )
net, losses = train(True, data)
if args.checkpoint:  # each rank its stage's parameters, by blocks
    opforge.save_checkpoint(net, f"{args.checkpoint}/blocks/rank_{rank}/net.ckpt", integrated_save=False)
stage = rank // (size // 2)
mine = {p.name: gather_whole(p).asnumpy() for p in net.trainable_params() if not is_placeholder(p)}
# each rank holds its stage's weights only: fc1 on stage 0, fc2 and fc3 on stage 1
expected = {"fc1.weight", "fc1.bias"} if stage == 0 else {"fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}
if set(mine) != expected:
    print(f"PIPE-FAIL rank {rank} holds {sorted(mine)}, expected {sorted(expected)}", flush=True)
    MPI.COMM_WORLD.Abort(1)
gathered = MPI.COMM_WORLD.gather(mine, root=0)
opforge.reset_auto_parallel_context()

if rank == 0:
    ref_net, ref_losses = train(False, data)
    owner = {"fc1": 0, "fc2": size // 2, "fc3": size // 2}
    worst = 0.0
    for p in ref_net.trainable_params():
        got = gathered[owner[p.name.split(".")[0]]][p.name]
        whole = p.asnumpy()
        diff = float(np.max(np.abs(got - whole)) / max(np.max(np.abs(whole)), 1.0))
        worst = max(worst, diff)
        if diff > 1e-5:
            print(f"PIPE-FAIL {p.name}: relative difference {diff:.3g}", flush=True)
            MPI.COMM_WORLD.Abort(1)
    if args.checkpoint:  # MindSpore's way back to one checkpoint of the whole network
        merged = f"{args.checkpoint}/merged_strategy.ckpt"
        opforge.merge_pipeline_strategys(f"{args.checkpoint}/strategys", merged)
        opforge.transform_checkpoints(f"{args.checkpoint}/blocks", f"{args.checkpoint}/whole", "net", merged, None)
        whole = opforge.load_checkpoint(f"{args.checkpoint}/whole/rank_0/net0.ckpt")
        for p in ref_net.trainable_params():
            diff = float(np.max(np.abs(whole[p.name].asnumpy() - p.asnumpy())) / max(np.max(np.abs(p.asnumpy())), 1.0))
            if whole[p.name].shape != p.shape or diff > 1e-5:
                print(f"PIPE-FAIL the transformed checkpoint's {p.name}: {whole[p.name].shape}, {diff:.3g}", flush=True)
                MPI.COMM_WORLD.Abort(1)
    same = bool(np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6))
    if not same:
        print(f"PIPE-FAIL losses {losses} != {ref_losses}", flush=True)
        MPI.COMM_WORLD.Abort(1)
    print(f"PIPE-OK {worst:.3g} {same}", flush=True)
sys.exit(0)
