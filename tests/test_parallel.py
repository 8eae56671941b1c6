"""Semi-auto parallel (``Primitive.shard``): layouts and rules in one process, and real ``mpiexec -n 2`` /
``-n 4`` jobs that train sharded networks to the parameters of one process (tests/mpi_scripts/)."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import numpy as np
import pytest
from test_data_parallel import needs_mpi, run_job

import opforge
from opforge import Tensor, communication, ops
from opforge.dispatch import sharding
from opforge.dispatch.sharding import TensorLayout, axis_ranks, coords, mesh_with_repeat, sharding_rules
from opforge.primitives import _grad_ops as G

SCRIPTS = pathlib.Path(__file__).parent / "mpi_scripts"


@pytest.fixture(autouse=True)
def _stand_alone():
    communication.init()
    opforge.reset_auto_parallel_context()
    yield
    opforge.reset_auto_parallel_context()


def test_layout_drops_unit_axes_and_speaks_mindspore_tensor_maps():
    lay = TensorLayout.make((1, 2, 1, 4), (1, 3))
    assert lay.mesh == (2, 4) and lay.dims == (0, 1)
    assert lay.tensor_map() == (1, 0)  # MindSpore counts device-matrix axes from the right
    assert lay.local_shape((8, 16)) == (4, 4)
    assert "device_matrix=[2, 4]" in str(lay)


def test_mesh_coordinates_are_row_major():
    assert [coords(r, (2, 3)) for r in range(6)] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert axis_ranks(4, (2, 3), 0) == [1, 4] and axis_ranks(4, (2, 3), 1) == [3, 4, 5]


def _split(shape, dims, mesh=(2,)):
    """A global tensor of ``shape`` whose block on this rank is laid out as ``dims`` over ``mesh``."""
    layout = TensorLayout(mesh, dims)
    block = opforge.Tensor(np.zeros(layout.local_shape(shape), np.float32))
    return sharding._wrap(block, layout, shape)


def _propagated(prim, *args):
    return sharding_rules.get(type(prim))(prim, args, [sharding._layout_or_none(a) for a in args], None)


@pytest.mark.parametrize(
    "x_shape, w_shape, kept",
    [((8, 64), (64, 1024), (None, 0)), ((1024, 64), (64, 8), (0, None))],
    ids=["gather-the-small-activation", "gather-the-small-weight"],
)
def test_propagation_moves_the_smaller_tensor(x_shape, w_shape, kept):
    """x split by rows and y by columns over one axis: a MatMul keeps the split whose other input is
    cheaper to gather (the redistribution cost: elements received), not always x's."""
    x, w = _split(x_shape, (0, None)), _split(w_shape, (None, 0))
    plan = _propagated(ops.MatMul(), x, w)
    assert plan.outputs[0].dims == kept
    cost = sharding.redistribution_cost
    assert cost(TensorLayout((2,), (None, 0)), TensorLayout((2,), (0, None)), (8, 8)) == 16  # an AlltoAll: 1/2
    assert cost(TensorLayout((2,), (0, None)), TensorLayout((2,), (None, None)), (8, 8)) == 32  # an AllGather


def test_elementwise_propagation_follows_the_cheaper_input():
    """Add(bias, x): the bias split along its only dim would make the big x move; x's layout wins though
    it is the second input."""
    bias, x = _split((1024,), (0,)), _split((8, 1024), (0, None))
    plan = _propagated(ops.Add(), bias, x)
    assert plan.outputs[0].dims == (0, None) and plan.inputs[0].dims == (None,)


def test_layer_norm_grad_and_broadcast_to_follow_the_rows():
    """The backward of a LayerNorm on split rows: dx split as x, dgamma and dbeta partial sums over the rows'
    axis; BroadcastTo keeps the split of the dims it does not broadcast, each rank broadcasting its block."""
    x, dy = _split((8, 16), (0, None)), _split((8, 16), (0, None))
    stat, gamma = _split((8, 1), (0, None)), opforge.Tensor(np.ones(16, np.float32))
    plan = _propagated(G.LayerNormGrad(1, 1), x, dy, stat, stat, gamma)
    assert [lay.dims for lay in plan.outputs] == [(0, None), (None,), (None,)]
    assert plan.partial == {1: ("sum", (0,)), 2: ("sum", (0,))}
    plan = _propagated(ops.BroadcastTo((3, 8, 16)), _split((8, 1), (0, None)))
    assert plan.outputs[0].dims == (None, 0, None) and plan.local.shape == (3, 4, 16)


def test_a_partial_sum_is_sliced_first_only_over_an_axis_it_does_not_use():
    """Slicing a partial sum (pending over axis 0) before reducing it: over axis 1 where the reader splits a dim
    by it and the partial block does not use it; not where axis 1 splits another dim of the block (that is an
    AlltoAll's move, after the reduction)."""
    from opforge.dispatch.sharding import _sliced_before_reducing

    want = TensorLayout((2, 2), (1, None))
    assert _sliced_before_reducing(TensorLayout((2, 2), (None, None)), want, (0,)) == [0]
    assert _sliced_before_reducing(TensorLayout((2, 2), (None, 1)), want, (0,)) == []
    assert _sliced_before_reducing(TensorLayout((2, 2), (None, None)), TensorLayout((2, 2), (0, None)), (0,)) == []


def test_a_change_of_shape_keeps_a_partial_sum_pending():
    """A bias's gradient (ones @ dy, squeezed) reaches the optimizer pending, to be completed with the other
    weights' gradients in one AllReduce."""
    partial = sharding._wrap(opforge.Tensor(np.zeros((1, 4), np.float32)), TensorLayout((2,), (None, None)), (1, 4),
                             ("sum", (0,)))  # fmt: skip
    for prim, args in (
        (ops.Squeeze(0), (partial,)),
        (ops.Reshape(), (partial, (4,))),
        (ops.ExpandDims(), (partial, 0)),
    ):
        plan = _propagated(prim, *args)
        assert plan.keep_partial == {0} and plan.partial == {0: ("sum", (0,))}, prim.name


def test_a_plan_is_kept_for_the_same_abstract_call_and_made_again_when_it_changes():
    """The interpreter keeps a rule's plan on the primitive by the call's dtypes, shapes, layouts and pending
    sums (a step's calls repeat): a new shape, layout, pending state, argument value or attr makes a new one."""
    interpreter, matmul = sharding.ShardInterpreter(), ops.MatMul()

    def plan(prim, *args):
        return interpreter._plan(prim, args, tuple(sharding._layout_or_none(a) for a in args), None)

    x, w = _split((8, 64), (0, None)), _split((64, 16), (None, None))
    first = plan(matmul, x, w)
    assert plan(matmul, _split((8, 64), (0, None)), w) is first
    assert plan(matmul, _split((8, 64), (None, 0)), w) is not first  # another layout
    assert plan(matmul, _split((16, 64), (0, None)), w) is not first  # another shape
    matmul.add_prim_attr("transpose_a", False)
    assert plan(matmul, x, w) is not first  # attrs changed: the plans were dropped
    partial = sharding._wrap(opforge.Tensor(np.zeros((2, 4), np.float32)), TensorLayout((2,), (None, None)), (2, 4),
                             ("sum", (0,)))  # fmt: skip
    reshape = ops.Reshape()
    assert plan(reshape, partial, (8,)) is plan(reshape, partial, (8,))
    assert plan(reshape, partial, (8,)) is not plan(reshape, partial, (8, 1))  # another value
    assert plan(reshape, partial, (8,)) is not plan(reshape, _split((2, 4), (None, None)), (8,))  # not pending
    reduce_sum = ops.ReduceSum()
    assert plan(reduce_sum, x, [0]).outputs and reduce_sum._derived is None  # a list: planned, not kept


def test_reading_a_sharded_tensor_names_the_way_to_gather_it():
    t = _split((8, 4), (0, None))
    with pytest.raises(RuntimeError, match="sharded across ranks.*gather_whole"):
        t.asnumpy()


def test_strategy_needing_more_devices_than_the_world_is_refused():
    with pytest.raises(ValueError, match="'MatMul'.*uses 4 devices.*2 devices"):
        mesh_with_repeat(2, (2, 2), "MatMul")
    assert mesh_with_repeat(8, (2, 2), "MatMul") == (2, 2, 2)


@pytest.mark.parametrize(
    "strategy, error, match",
    [
        ([[1, 2]], TypeError, "tuple of tuples"),  # a list of lists is fine; a flat list is not
        (((1, 2), (0, 1)), ValueError, ">= 1"),
        (((1, 2.0),), TypeError, "must hold ints"),
    ],
)
def test_shard_checks_its_strategy(strategy, error, match):
    if strategy == [[1, 2]]:
        assert ops.MatMul().shard(strategy).in_strategy == ((1, 2),)
        with pytest.raises(TypeError, match=match):
            ops.MatMul().shard((1, 2))
        return
    with pytest.raises(error, match=rf"'MatMul.shard'.*{match}"):
        ops.MatMul().shard(strategy)


def test_strategy_is_ignored_outside_semi_auto_parallel():
    x = opforge.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = ops.MatMul().shard(((2, 1), (1, 1)))(x, ops.Transpose()(x, (1, 0)))
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy() @ x.asnumpy().T)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"in_strategy": [(2, 1)]}, TypeError, "'in_strategy' must be a tuple"),
        ({"in_strategy": ((2, 1.0),)}, TypeError, "tuple of ints"),
        ({"in_strategy": ((0, 1),)}, ValueError, ">= 1"),
        ({"in_strategy": ((2, 1),), "out_strategy": [(1, 2)]}, TypeError, "'out_strategy' must be a tuple"),
        ({"in_strategy": ((2, 1),), "parameter_plan": [("w", (2,))]}, TypeError, "'parameter_plan' must be a dict"),
        ({"in_strategy": ((2, 1),), "device": "TPU"}, ValueError, "'device'"),
        ({"in_strategy": ((2, 1),), "level": 3}, ValueError, "'level'"),
    ],
)
def test_cell_shard_checks_what_it_is_given(kwargs, error, match):
    with pytest.raises(error, match=rf"'Dense.shard'.*{match}"):
        opforge.nn.Dense(2, 2).shard(**kwargs)


def test_shard_outside_a_parallel_mode_runs_the_cell_or_function_as_it_is():
    dense = opforge.nn.Dense(3, 2)
    x = opforge.Tensor(np.ones((4, 3), np.float32))
    want = dense(x).asnumpy()
    sharded = opforge.shard(dense, ((2, 1),), parameter_plan={"weight": (2, 1)})
    assert not isinstance(sharded, opforge.nn.Cell)  # a function calling it, as MindSpore's
    np.testing.assert_array_equal(dense(x).asnumpy(), want)
    np.testing.assert_array_equal(sharded(x).asnumpy(), want)
    twice = opforge.parallel.shard(lambda a: a * 2.0, ((2, 1),), out_strategy=((1, 2),))
    np.testing.assert_array_equal(twice(x).asnumpy(), 2.0 * x.asnumpy())
    with pytest.raises(ValueError, match="'parameter_plan' needs a Cell"):
        opforge.shard(lambda a: a, ((2, 1),), parameter_plan={"w": (2,)})


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_every_sharding_rule_equals_its_operator_run_whole(n):
    """Generated from the rule table and the operator sweep's records (tests/mpi_scripts/rule_sweep.py): each
    rule under strategies splitting its inputs' dims, outputs gathered and compared with one process; a
    strategy a rule cannot follow is refused naming the operator and the input."""
    job = run_job([str(SCRIPTS / "rule_sweep.py")], n=n, timeout=240)
    assert job.returncode == 0 and "SWEEP-OK" in job.stdout, job.stdout + job.stderr


def test_rule_table_covers_the_operators_networks_use():
    for name in ("MatMul", "BatchMatMul", "BiasAdd", "Add", "Mul", "ReLU", "GeLU", "Softmax", "LogSoftmax",
                 "ReduceSum", "ReduceMean", "Reshape", "Transpose", "ExpandDims", "Squeeze", "Gather",
                 "LayerNorm", "Dropout", "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
                 "ApplyMomentum", "Adam"):  # fmt: skip
        assert name in sharding_rules, name


def _tp_ok(out: str):
    """(max relative difference, weight bytes per rank, weight bytes of one process, optimizer state bytes
    per rank, optimizer state bytes of one process)."""
    m = re.search(r"TP-OK (\S+) (\d+) (\d+) (\d+) (\d+)", out)
    assert m, out
    return (float(m.group(1)), *(int(g) for g in m.groups()[1:]))


@needs_mpi
@pytest.mark.parametrize(
    "model, n, optimizer",
    [
        ("mlp", 2, "momentum"),
        ("mlp", 2, "adam"),
        ("mlp", 4, "momentum"),
        ("embedding", 2, "adam"),
        ("encoder", 2, "adam"),
        ("encoder", 4, "momentum"),
        ("batch", 2, "momentum"),
        ("zero", 2, "adam"),
        ("zero", 4, "momentum"),
        ("mlp-graph", 2, "adam"),
        ("encoder-graph", 2, "momentum"),
        ("zero-graph", 2, "adam"),
        ("zero-graph", 4, "momentum"),
        ("zero-semi", 2, "adam"),
        ("zero-semi-graph", 2, "momentum"),
        ("zero-semi-graph", 4, "adam"),
        ("cnn", 2, "momentum"),
        ("cnn", 4, "adam"),
        ("cnn-graph", 2, "momentum"),
        ("spatial", 4, "adam"),
        ("spatial-graph", 2, "momentum"),
    ],
)
def test_sharded_training_equals_one_process(model, n, optimizer):
    """``-graph``: in GRAPH_MODE, each rank's local program traced once (after the eager first step) and
    replayed by the later steps (the script checks the trace count; with optimizer parallel, that the trace
    holds the ReduceScatter and AllGather). ``zero``: data parallel with optimizer parallel; ``zero-semi``:
    the batch split by a strategy in SEMI_AUTO_PARALLEL, with optimizer parallel. The bytes are the
    allocator's (``opforge.memory.stats()``), freed when the optimizer and the network are dropped. ``cnn``:
    convolutions split by channels (filters, then input channels), BatchNorm and pooling per channel; a step
    runs one AllReduce (the second convolution's partial sums), nothing gathered. ``spatial``: convolutions split
    by image rows, each fetching its halo rows (one AllGather of the neighbours' strips per convolution), max
    pooling on the rows' split."""
    argv = [str(SCRIPTS / "tensor_parallel.py"), "--optimizer", optimizer]
    if model.endswith("-graph"):
        model = model[: -len("-graph")]
        argv.append("--graph")
    job = run_job([*argv, "--model", model], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    worst, local_bytes, whole_bytes, local_states, whole_states = _tp_ok(job.stdout)
    assert worst <= 1e-5
    if model == "mlp":  # the two weights are split n ways; the output bias stays whole on every rank
        assert local_bytes < whole_bytes / n + 64
    elif model == "batch":  # data parallel: every rank holds every weight
        assert local_bytes == whole_bytes
    elif model.startswith("zero"):  # optimizer parallel: whole weights, 1/n of the states (beside a few scalars)
        assert local_bytes == whole_bytes
        assert local_states <= whole_states / n + 16
    elif model == "cnn" and "--graph" not in argv:
        counts = json.loads(re.search(r"COUNTS (.*)", job.stdout).group(1))
        assert counts["step"] == {"AllReduce": 1}, counts
        assert local_bytes < whole_bytes
    elif model == "spatial":  # the weights whole; the forward: two halo exchanges and the Dense head's gather
        counts = json.loads(re.search(r"COUNTS (.*)", job.stdout).group(1))
        assert counts["forward"] == {"Slice": 1, "AllGather": 3}, counts
        assert local_bytes == whole_bytes
    else:
        assert local_bytes < whole_bytes


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_mint_distributed_collectives_write_their_tensors(n):
    """``opforge.mint.distributed`` (MindSpore's torch.distributed-style API): all_reduce, all_gather(_into_tensor),
    reduce_scatter_tensor, reduce, broadcast, send/recv, barrier, the object collectives and a new group, each
    writing into the tensors it is given (tests/mpi_scripts/mint_distributed.py)."""
    job = run_job([str(SCRIPTS / "mint_distributed.py")], n=n, timeout=120)
    assert job.returncode == 0 and "MINT-DIST-OK" in job.stdout, job.stdout + job.stderr


@needs_mpi
@pytest.mark.parametrize("n", [4, 8])
def test_high_dimension_tensor_parallel_sample_trains_as_one_process(n):
    """MindSpore's 2D tensor parallel (``enable_nd_tp`` MatMuls over a (2, n / 2) device matrix, the sample's
    Layouts): the output and the weights after 3 steps equal one process's, eagerly and in GRAPH_MODE."""
    job = run_job([str(SCRIPTS / "nd_tensor_parallel.py")], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert float(re.search(r"NDTP-OK (\S+)", job.stdout).group(1)) <= 1e-5


@needs_mpi
@pytest.mark.parametrize(("model", "n"), [("mlp", 2), ("encoder", 4)])
def test_ranks_initialised_apart_start_from_rank_0s_parameters(model, n):
    """``parameter_broadcast`` (on by default): each rank initialises from its own seed (a script without
    ``set_seed``), and the first call of the parallel network broadcasts rank 0's parameters, so the ranks train
    one model, equal to one process initialised as rank 0 (the whole bias of the MLP's second layer, which no
    strategy splits, included)."""
    job = run_job([str(SCRIPTS / "tensor_parallel.py"), "--model", model, "--rank-seeds"], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert _tp_ok(job.stdout)[0] <= 1e-5


@needs_mpi
@pytest.mark.parametrize(("model", "n", "flags"), [("mlp", 2, []), ("encoder", 4, ["--graph"])])
def test_loss_repeated_mean_false_sums_the_ranks_repeating_the_loss(model, n, flags):
    """MindSpore's ``loss_repeated_mean=False``: the scalar loss, on every rank, gives gradients summed over the
    ranks: equal to one process trained with its sensitivity times the ranks (and not to one process without it:
    checked by hand)."""
    argv = [str(SCRIPTS / "tensor_parallel.py"), "--model", model, "--optimizer", "sgd", "--no-loss-repeated-mean"]
    job = run_job([*argv, *flags], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert _tp_ok(job.stdout)[0] <= 1e-5


@needs_mpi
@pytest.mark.parametrize(
    "model, n, flags",
    [
        ("wide", 2, []),
        ("wide", 4, ["--search-mode", "dynamic_programming"]),
        ("wide", 2, ["--graph", "--old-name", "--search-mode", "recursive_programming"]),
        ("tall", 2, []),
        ("tall", 4, []),
        ("encoder", 2, []),
        ("encoder", 4, ["--search-mode", "dynamic_programming"]),
    ],
)
def test_strategy_search_trains_an_unannotated_network_as_one_process(model, n, flags):
    """AUTO_PARALLEL with MindSpore's searches and no strategy written: a small batch through large weights
    comes out Megatron's column- then row-parallel MLP, a large batch through small weights data parallel,
    an encoder layer with its attention heads and feed-forward split; each trains to one process's parameters."""
    job = run_job([str(SCRIPTS / "strategy_search.py"), "--model", model, *flags], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    worst, report = re.search(r"SEARCH-OK (\S+) (.*)", job.stdout).groups()
    assert float(worst) <= 1e-5
    report = json.loads(report)
    local, whole = report["elements"]
    if model == "wide":
        assert f"fc1.matmul=[[1, 1], [{n}, 1]]" in report["strategies"]  # column parallel (W is (out, in))
        assert f"fc2.matmul=[[1, {n}], [1, {n}]]" in report["strategies"]  # row parallel
        assert report["split"] == ["fc1.bias", "fc1.weight", "fc2.weight"] and local < whole / n + 64
    elif model == "tall":
        assert f"fc1.matmul=[[{n}, 1], [1, 1]]" in report["strategies"] and report["split"] == []
        assert local == whole
    else:  # the heads' and the feed-forward's weights split (the LayerNorms', the small head's, some biases and,
        # where the search keeps the output projection batch-parallel, its weight whole: a weight's layout is its
        # forward strategy's, as MindSpore's)
        weights = {name for name in report["split"] if name.endswith(".weight")}
        assert {f"{p}.weight" for p in ("q", "k", "v", "ff1", "ff2")} <= weights and local < 0.6 * whole
        if "o.weight" not in weights:
            assert "o.matmul=[[" + str(n) + ", 1], [1, 1]]" in report["strategies"], report["strategies"]


@needs_mpi
@pytest.mark.parametrize("model, n", [("zero", 2), ("zero", 4), ("zero-semi", 2)])
def test_optimizer_parallel_with_weight_decay_reduce_scatters_the_gradients(model, n):
    """Adam(weight_decay=...) traced in GRAPH_MODE: the decay's Add (gradient + decay * weight) keeps the
    gradient's partial sum pending, so the update of a weight's block still reduce-scatters it."""
    argv = [str(SCRIPTS / "tensor_parallel.py"), "--model", model, "--optimizer", "adam", "--graph"]
    job = run_job([*argv, "--weight-decay", "0.01"], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert _tp_ok(job.stdout)[0] <= 1e-5
    trace = json.loads(re.search(r"TRACE (.*)", job.stdout).group(1))
    # the same collectives as without decay: the four parameters' gradients reduce-scattered (the biases' too:
    # their gradients' Squeeze keeps the partial sums pending); zero-semi all-reduces its loss
    assert trace == {"AllReduce": 0 if model == "zero" else 1, "ReduceScatter": 4, "AllGather": 4}


@needs_mpi
def test_graph_mode_optimizer_parallel_reads_a_weight_set_between_replays():
    job = run_job([str(SCRIPTS / "graph_set_data.py")], n=2, timeout=180)
    assert job.returncode == 0, job.stdout + job.stderr
    assert job.stdout.count("SET-DATA-OK") == 2, job.stdout + job.stderr


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_redistribution_sends_less_reduce_scatter_and_alltoall(n):
    """A partial sum read split (a row-parallel Dense feeding a row-split ReLU) takes one ReduceScatter; a
    tensor moving from split rows to split columns (the ReLU feeding a column-split Tanh) one AlltoAll,
    forward and backward, and training still equals one process."""
    argv = [str(SCRIPTS / "tensor_parallel.py"), "--model", "seqpar", "--optimizer", "momentum"]
    job = run_job(argv, n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert _tp_ok(job.stdout)[0] <= 1e-5
    counts = json.loads(re.search(r"COUNTS (.*)", job.stdout).group(1))
    # forward: ReduceScatter (fc2 -> ReLU), AlltoAll (ReLU -> Tanh), AllReduce (the head's partial sum, whole)
    assert counts["forward"] == {"ReduceScatter": 1, "AlltoAll": 1, "AllReduce": 1}
    backward = {k: counts["step"].get(k, 0) - counts["forward"].get(k, 0) for k in counts["step"]}
    assert backward["AlltoAll"] >= 1  # Tanh's gradient back to split rows
    # The backward's MatMuls choose by cost which input to move (the fixed order before, m then k then n,
    # received 624 and 1,320 elements a step on 2 and 4 ranks)
    assert sum(counts["step_volume"].values()) <= {2: 560, 4: 600}[n]


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_a_partial_sum_read_split_two_ways_is_reduced_once(n):
    """A row-parallel MatMul read by a row-split ReLU (a ReduceScatter) and a column-split Tanh: the second
    reader's block comes from the first's reduced block (an AlltoAll), not from a second ReduceScatter."""
    job = run_job([str(SCRIPTS / "partial_two_readers.py")], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    counts = json.loads(re.search(r"PARTIAL-OK \S+ (.*)", job.stdout).group(1))
    assert counts.get("ReduceScatter") == 1 and counts.get("AlltoAll") == 1 and "AllReduce" not in counts


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_linear_operators_keep_a_partial_sum_pending(n):
    """Row-parallel MatMuls' partial sums through ``* 2.0``, Neg, a whole bias subtracted, the sum of two
    partial sums and ``/ 4.0``, then a row-split ReLU: one ReduceScatter completes them (no AllReduce), and
    the result equals NumPy's (the bias counted once: only the ranks at coordinate 0 subtract it)."""
    job = run_job([str(SCRIPTS / "partial_linear.py")], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    got = json.loads(re.search(r"LINEAR-OK \S+ (.*)", job.stdout).group(1))
    assert got["counts"].get("ReduceScatter") == 1 and "AllReduce" not in got["counts"]
    # one ReduceScatter of the (8n, 4n) output: each rank receives (n - 1)/n of it; so does the AllGather handing
    # the output whole to every rank (a network of whole inputs: MindSpore's VirtualOutput)
    received = 32 * n * n * (n - 1) // n
    assert got["volume"] == {"ReduceScatter": received, "AllGather": received}


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_cell_shard_and_a_sharded_function_train_and_compute_as_one_process(n):
    """MindSpore's ``Cell.shard``: a block given its input's layout and its first weight's (by name) trains to
    one process's parameters, the operators inside following (the second Dense row-parallel); ``shard(fn)``
    lays a function's input and output out as asked."""
    job = run_job([str(SCRIPTS / "shard_cell.py")], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    worst, layouts = re.search(r"SHARD-OK (\S+) (.*)", job.stdout).groups()
    layouts = json.loads(layouts)
    assert float(worst) <= 1e-5
    assert layouts["dense1.weight"] == f"Layout(device_matrix=[{n}], tensor_map=[0, -1])"
    assert layouts["dense2.weight"] == f"Layout(device_matrix=[{n}], tensor_map=[-1, 0])"  # followed it
    assert layouts["function output"] == f"Layout(device_matrix=[{n}], tensor_map=[-1, 0])"
    assert layouts["resharded"] == f"Layout(device_matrix=[{n}], tensor_map=[0, -1])"


def test_mindspore_layouts_read_as_split_counts():
    layout = opforge.Layout((2, 4), ("dp", "mp"))
    assert layout("dp", "mp").to_dict() == {
        "device_matrix": (2, 4), "tensor_map": (1, 0), "interleaved_parallel": False, "alias_name": ("dp", "mp"),
    }  # fmt: skip
    assert layout(("dp", "mp"), "None").to_dict()["tensor_map"] == ((1, 0), -1)
    assert ops.MatMul().shard((layout("dp", "mp"), layout("mp", "None"))).in_strategy == ((2, 4), (4, 1))
    assert opforge.parallel.Layout((2, 2), ("dp", "interleaved_parallel"))(
        "dp", "interleaved_parallel"
    ).split_counts() == (2, 1)
    for args, error, match in [
        (([2, 4], ("dp", "mp")), TypeError, "'device_matrix' must be a tuple"),
        (((2, 4), ("dp",)), ValueError, "name each of the 2 axes"),
        (((2, 4), ("dp", "None")), ValueError, "not 'None'"),
        (((2, 4), ("dp", "dp")), ValueError, "unique"),
    ]:
        with pytest.raises(error, match=match):
            opforge.Layout(*args)
    with pytest.raises(ValueError, match="one of"):
        layout("dp", "tp")
    with pytest.raises(ValueError, match="splits more than one dim"):
        layout("dp", "dp")
    with pytest.raises(ValueError, match="tensor map is not set"):
        layout.to_dict()
    x = opforge.Tensor(np.ones((2, 2), np.float32))
    assert opforge.reshard(x, layout("dp", "None")) is x  # outside a parallel network's call
    with pytest.raises(TypeError, match="'layout' must be a Layout"):
        opforge.reshard(x, (2, 1))


@needs_mpi
def test_a_partial_sum_is_sliced_before_it_is_reduced():
    """A partial sum over one mesh axis read split over the other too: sliced locally first, so its
    ReduceScatter moves half the (16, 12) output: 48 elements a rank, where reducing the whole moved 96."""
    job = run_job([str(SCRIPTS / "partial_sliced.py")], n=4, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    got = json.loads(re.search(r"SLICED-OK \S+ (.*)", job.stdout).group(1))
    assert got["counts"].get("ReduceScatter") == 1 and "AllReduce" not in got["counts"]
    # (the AllGather hands the (16, 12) output, split over 4 ranks, whole to every rank: 144 elements a rank)
    assert got["volume"] == {"ReduceScatter": 48, "AllGather": 144}


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_vocabulary_parallel_gather_backward_makes_only_the_local_block(n):
    """The gradient of a row-split embedding table is each rank's block (a local segment sum of the rows in
    its vocabulary range), equal to one process's rows; no whole-table gradient is sliced."""
    job = run_job(
        [str(SCRIPTS / "tensor_parallel.py"), "--model", "embedding", "--optimizer", "adam"], n=n, timeout=240
    )
    assert job.returncode == 0, job.stdout + job.stderr
    local_rows, whole_rows, diff = re.search(r"GRAD-BLOCK (\d+) (\d+) (\S+)", job.stdout).groups()
    assert int(local_rows) * n == int(whole_rows) and float(diff) <= 1e-5
    counts = json.loads(re.search(r"COUNTS (.*)", job.stdout).group(1))
    assert counts["step"] == {"AllReduce": 1}  # the forward's masked lookup; the backward moves nothing


@needs_mpi
def test_tensor_parallel_mlp_holds_half_the_parameter_bytes_by_the_allocator():
    """Per-rank memory as ``opforge.memory.stats()`` counts it (the bytes freed when the optimizer, then the
    network, are dropped): 2 ranks each hold about half of one process's weights and optimizer states."""
    job = run_job([str(SCRIPTS / "tensor_parallel.py"), "--model", "mlp", "--optimizer", "adam"], n=2, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    worst, local_bytes, whole_bytes, local_states, whole_states = _tp_ok(job.stdout)
    assert worst <= 1e-5 and whole_bytes > 0 and whole_states > 0
    assert 0.45 <= local_bytes / whole_bytes <= 0.55  # both weights halved; the output bias (4 floats) whole
    assert 0.45 <= local_states / whole_states <= 0.55


@needs_mpi
@pytest.mark.parametrize(("n", "suffix"), [(2, ".ckpt"), (4, ".json")])
def test_checkpoints_of_a_tensor_parallel_network(tmp_path, n, suffix):
    """``save_checkpoint`` on every rank: whole parameters (integrated_save, MindSpore's default) or the rank's
    blocks; the whole file loads into a fresh sharded network, back into the sharded original and into one
    process's network, each training on as the original did; the strategy files protobuf or JSON
    (tests/mpi_scripts/sharded_checkpoint.py)."""
    job = run_job([str(SCRIPTS / "sharded_checkpoint.py"), str(tmp_path), suffix], n=n, timeout=240)
    assert job.returncode == 0 and "CKPT-OK" in job.stdout, job.stdout + job.stderr


@needs_mpi
def test_mismatched_strategies_raise_on_every_rank_naming_the_operator():
    job = run_job([str(SCRIPTS / "strategy_mismatch.py")], n=2, timeout=120)
    lines = [line for line in job.stdout.splitlines() if line.startswith("MISMATCH-OK")]
    assert sorted(line.split(":")[0] for line in lines) == ["MISMATCH-OK 0", "MISMATCH-OK 1"], job.stdout + job.stderr
    assert all("For 'MatMul'" in line and "((2, 1), (1, 1))" in line and "((1, 2), (2, 1))" in line for line in lines)


@needs_mpi
@pytest.mark.parametrize("fault, how", [("exit", "exited with code 3"), ("signal", "was killed by SIGKILL")])
def test_opforge_run_names_a_dead_rank(fault, how):
    job = run_job(
        [sys.executable, "-m", "opforge", "run", "-n", "2", str(SCRIPTS / "rank_death.py")],
        timeout=120,
        env={"FAULT": fault, "OPFORGE_COMM_TIMEOUT": "30"},
    )
    assert job.returncode != 0
    assert re.search(rf"opforge run: rank 1 \(pid \d+\) {how}", job.stderr), job.stderr


@needs_mpi
@pytest.mark.parametrize(
    "n, optimizer, flags",
    [
        (2, "momentum", []),
        (4, "adam", []),
        (2, "adam", ["--graph"]),
        (4, "momentum", ["--graph"]),
        (4, "adam", ["--parallel-optimizer"]),
        (4, "momentum", ["--parallel-optimizer", "--graph"]),
        (2, "momentum", ["--auto-parallel"]),
        (4, "adam", ["--auto-parallel", "--parallel-optimizer", "--graph"]),
        (2, "momentum", ["--auto-parallel", "--functional"]),
        (4, "adam", ["--auto-parallel", "--functional", "--parallel-optimizer", "--graph"]),
        (4, "momentum", ["--auto-parallel", "--data-parallel"]),
        (4, "adam", ["--tensor-parallel", "--graph", "--print"]),
        (4, "momentum", ["--no-loss-repeated-mean"]),
        (4, "momentum", ["--tensor-parallel", "--parallel-optimizer", "--checkpoint", "{tmp}"]),
    ],
)
def test_two_stage_pipeline_equals_one_process(n, optimizer, flags, tmp_path):
    """``--graph``: in GRAPH_MODE each rank's whole 1F1B step (its stage's forward and backward passes of every
    micro-batch, the Send/Receive between stages, the update) is one trace, replayed from the third step
    (the script checks the trace count and that the trace holds the Send and Receive).
    ``--parallel-optimizer``: the ranks of a stage split its optimizer states (the script checks the blocks).
    ``--auto-parallel``: MindSpore 2.6's way: ``Pipeline(..., stage_config=...)`` in an ``AutoParallel`` cell
    carrying the stages (and ``hsdp()``), trained by ``Model.train``, the global context untouched; with
    ``--functional`` by ``value_and_grad`` of the Pipeline and a ``PipelineGradReducer`` in a step function
    wrapped in ``AutoParallel`` (MindSpore's pipeline tutorial); with ``--data-parallel`` each rank of a stage
    reads its block of every batch (``dataset_strategy("data_parallel")``), the micro-batches cut rank by rank.
    ``--tensor-parallel``: stage 1's ranks split its Dense layers too (the strategies checked among them only:
    a check over every rank hung, stage 0 never running those operators).
    ``--checkpoint``: each rank saves its stage's strategy file and blocks; the stages' files merged
    (``merge_pipeline_strategys``) and the blocks transformed whole equal one process's parameters.
    ``--no-loss-repeated-mean``: each of the last stage's 2 ranks repeats the loss: the gradients their sum.
    ``--print``: ``ops.Print`` in the network (MindSpore's tutorial): a micro-batch's rows of fc1's output on
    stage 0's ranks, the block of fc2's columns on each of stage 1's, nothing of the other stage."""
    flags = [str(tmp_path) if f == "{tmp}" else f for f in flags]
    argv = [str(SCRIPTS / "pipeline.py"), "--optimizer", optimizer, "--steps", "4", *flags]
    job = run_job(argv, n=n, timeout=180)
    assert job.returncode == 0, job.stdout + job.stderr
    if "--print" in flags:  # fc1: [4 rows, 16] on stage 0's 2 ranks, 4 micro-batches, 4 steps; fc2's in 2: [4, 8]
        assert job.stdout.count("Tensor(shape=[4, 16]") == 2 * 4 * 4, job.stdout
        assert job.stdout.count("Tensor(shape=[4, 8]") == 2 * 4 * 4, job.stdout
    m = re.search(r"PIPE-OK (\S+) True", job.stdout)
    assert m and float(m.group(1)) <= 1e-5, job.stdout + job.stderr


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_a_weight_tied_across_stages_trains_as_one_process(n):
    """An embedding of stage 0 read (transposed) by stage 1's output projection: both stages keep it, the first
    step sets the second stage's copy to the first's, and both take the sum of the stages' gradients (each left
    out, the script's parameters differ from one process's), eagerly and in GRAPH_MODE."""
    job = run_job([str(SCRIPTS / "pipeline_shared.py")], n=n, timeout=180)
    assert job.returncode == 0, job.stdout + job.stderr
    assert float(re.search(r"SHARED-OK (\S+)", job.stdout).group(1)) <= 1e-5


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_tensors_skipping_pipeline_stages_train_as_one_process(n):
    """MindSpore's pipeline-inference network trained by PipelineCell: the embedding table stage 0 returns, read
    by the last stage's head, crosses every boundary between them (passed on by the stages in between, its
    gradient back); the network's input the head reads crosses none (it hung or mismatched before)."""
    job = run_job([str(SCRIPTS / "pipeline_skip.py")], n=n, timeout=180)
    assert job.returncode == 0, job.stdout + job.stderr
    assert float(re.search(r"SKIP-OK (\S+)", job.stdout).group(1)) <= 1e-5


@needs_mpi
@pytest.mark.parametrize("n", [2, 4, 8])
def test_pipeline_inference_runs_each_stage_on_its_ranks(n):
    """MindSpore's pipeline inference sample (no PipelineCell, its own micro-batch loop): each rank runs and holds
    only its stage's cells (every rank ran and held the whole network before); the last stage's logits reach
    every rank with pipeline_result_broadcast, the others get zeros without; in GRAPH_MODE, twice."""
    job = run_job([str(SCRIPTS / "pipeline_inference.py")], n=n, timeout=180)
    assert job.returncode == 0 and "INFER-OK" in job.stdout, job.stdout + job.stderr


def test_pipeline_message_tags_stay_within_mpi_tags():
    """Every micro-batch's forward and backward tags are MPI tags (at most 32767), the two ranges apart, repeating
    past the micro-batches they cover (a PipelineCell of 248 micro-batches raised in its backward pass)."""
    from opforge.nn import pipeline as pp
    from opforge.primitives.comm_ops import _MAX_TAG

    last = pp._TAGS_PER_MICRO - 1
    assert pp._tag(pp._FORWARD_TAG, pp._TAGGED_MICROS - 1, last) < pp._BACKWARD_TAG
    assert all(pp._tag(pp._BACKWARD_TAG, micro, last) <= _MAX_TAG for micro in range(10_000))
    with pytest.raises(ValueError, match="cross one boundary"):
        pp._tag(pp._FORWARD_TAG, 0, pp._TAGS_PER_MICRO)


def test_sync_pipeline_shared_parameters_checks_its_argument():
    with pytest.raises(TypeError, match="'net' must be a Cell"):
        opforge.sync_pipeline_shared_parameters(lambda x: x)
    opforge.sync_pipeline_shared_parameters(opforge.nn.Dense(2, 2))  # no stages: nothing to do


def test_pipeline_cell_checks_its_arguments():
    with pytest.raises(ValueError, match="'micro_size' must be an int >= 1"):
        opforge.nn.PipelineCell(opforge.nn.Dense(2, 2), 0)
    with pytest.raises(TypeError, match="'network' must be a Cell"):
        opforge.nn.PipelineCell(lambda x: x, 2)


def test_pipeline_stage_config_names_cells_by_their_whole_path():
    from opforge.parallel.nn import Pipeline

    net = opforge.nn.SequentialCell([opforge.nn.Dense(2, 2), opforge.nn.ReLU()])
    loss = opforge.nn.WithLossCell(net, opforge.nn.MSELoss())
    Pipeline(loss, 2, stage_config={"_backbone.0": 0, "_backbone.1": 1}, segment_config={"_backbone": 0})
    assert (net[0].pipeline_stage, net[1].pipeline_stage, net.pipeline_segment) == (0, 1, 0)
    with pytest.raises(KeyError, match="'stage_config' : \\{'backbone.0': 0\\} is not found.*'_backbone.0'"):
        Pipeline(loss, 2, stage_config={"backbone.0": 0})  # not the whole path
    with pytest.raises(ValueError, match="'pipeline_stage' can not be less than 0, but got -1"):
        Pipeline(loss, 2, stage_config={"_backbone.0": -1})
    with pytest.raises(TypeError, match="'pipeline_stage' must be int type, but got type : float"):
        net[0].pipeline_stage = 1.0


def test_a_pipeline_cell_is_differentiable_as_one_operation():
    """value_and_grad of a function calling a PipelineCell (one process, one stage): the gradients its 1F1B
    schedule accumulated over the micro-batches, those of the sum of the micro-batches' mean losses (twice the
    mean loss over the whole batch, for 2 micro-batches: MindSpore's sum)."""
    opforge.nn.set_seed(0)
    net = opforge.nn.Dense(3, 2)
    loss = opforge.nn.WithLossCell(net, opforge.nn.MSELoss())
    pipeline = opforge.nn.PipelineCell(loss, 2)
    rng = np.random.default_rng(0)
    x, y = (opforge.Tensor(rng.standard_normal(s).astype(np.float32)) for s in ((4, 3), (4, 2)))
    params = net.trainable_params()
    got_loss, got = opforge.value_and_grad(lambda a, b: pipeline(a, b) * 3.0, None, params)(x, y)
    want_loss, want = opforge.value_and_grad(lambda a, b: loss(a, b) * 6.0, None, params)(x, y)
    np.testing.assert_allclose(got_loss.asnumpy(), want_loss.asnumpy(), rtol=1e-6)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-5, atol=1e-7)


def test_pipeline_grad_reducer_divides_by_the_scale_sense():
    from opforge.parallel.nn import PipelineGradReducer

    w = opforge.Parameter(opforge.Tensor(np.ones(3, np.float32)), name="w")
    grads = (opforge.Tensor(np.full(3, 4.0, np.float32)),)
    np.testing.assert_allclose(PipelineGradReducer([w], scale_sense=2.0)(grads)[0].asnumpy(), np.full(3, 2.0))
    assert PipelineGradReducer([w]).opt_shard is False  # the context's enable_parallel_optimizer
    with pytest.raises(ValueError, match="a gradient per parameter \\(1\\), but got 2"):
        PipelineGradReducer([w])(grads * 2)
    with pytest.raises(ValueError, match="'scale_sense' must be a number > 0"):
        PipelineGradReducer([w], scale_sense=0)


def test_grad_accumulation_sums_equal_micro_batches():
    from opforge.parallel.nn import GradAccumulation

    dense = opforge.nn.Dense(3, 2)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = GradAccumulation(dense, 2)(opforge.Tensor(x)).asnumpy()
    want = dense(opforge.Tensor(x[:2])).asnumpy() + dense(opforge.Tensor(x[2:])).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="input\\(3\\) must be divided by micro size\\(2\\)"):
        GradAccumulation(dense, 2)(opforge.Tensor(x[:3]))
    with pytest.raises(ValueError, match="'micro_size' must be large than 0"):
        GradAccumulation(dense, 0)


def test_mindspore_2_6_parallel_paths():
    from opforge.nn.utils import no_init_parameters
    from opforge.parallel.function import reshard

    assert reshard is opforge.reshard
    with no_init_parameters():  # opforge initialises at once: the same values afterwards
        opforge.nn.set_seed(3)
        inside = opforge.nn.Dense(2, 2).weight.asnumpy()
    opforge.nn.set_seed(3)
    np.testing.assert_array_equal(inside, opforge.nn.Dense(2, 2).weight.asnumpy())


@needs_mpi
def test_the_docs_code_runs_on_two_ranks(tmp_path):
    """docs/parallel.md's Python blocks, in order, as one script on every rank of a 2-rank job
    (tests/test_docs.py runs them in one process, a world of one rank)."""
    doc = pathlib.Path(__file__).parent.parent / "docs" / "parallel.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    script = tmp_path / "doc.py"
    script.write_text("\n".join(blocks) + "\nprint('DOC-OK', flush=True)\n")
    result = run_job([str(script)], n=2, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("DOC-OK") == 2


def test_the_docs_figure_is_drawn(tmp_path):
    from opforge.tools import parallel_figure

    path = tmp_path / "layouts.png"
    parallel_figure.draw(str(path))
    assert path.stat().st_size > 10_000
    assert parallel_figure.owners(TensorLayout((2,), (0, None)), (8, 6), 5, 0) == [1]


@needs_mpi
@pytest.mark.parametrize("parallel", ["tensor", "auto"])
def test_demo_tensor_parallel_prints_the_accuracy_of_one_process(parallel):
    """``tensor``: the MLP's Dense layers split by hand; ``auto``: every split chosen by the strategy search
    (which finds the same column- then row-parallel pair), the test set's odd last batch padded."""
    args = [sys.executable, "-m", "opforge", "demo", "--epochs", "2"]
    tp = run_job([*args, "--workers", "2", "--parallel", parallel], timeout=240)
    one = run_job(args, timeout=240)
    assert tp.returncode == 0 and one.returncode == 0, tp.stdout + tp.stderr + one.stderr
    assert f"{parallel} parallel on 2 MPI ranks" in tp.stdout
    if parallel == "auto":
        assert "fc1.matmul ((1, 1), (2, 1))" in tp.stdout and "fc2.matmul ((1, 2), (1, 2))" in tp.stdout
    accuracy = re.compile(r"final test accuracy: ([\d.]+)%")
    assert accuracy.search(tp.stdout).group(1) == accuracy.search(one.stdout).group(1)


# -- MindSpore 2.6's AutoParallel cell ---------------------------------------------------------------


def test_dataset_strategy_is_full_batch_s_newer_name_or_a_strategy_per_input():
    opforge.set_auto_parallel_context(dataset_strategy="full_batch")
    assert opforge.get_auto_parallel_context("full_batch") is True
    opforge.set_auto_parallel_context(full_batch=False)
    assert opforge.get_auto_parallel_context("dataset_strategy") == "data_parallel"
    layout = opforge.Layout((2, 2), ("dp", "mp"))
    opforge.set_auto_parallel_context(dataset_strategy=((2, 1), layout("dp", "mp")))
    assert opforge.get_auto_parallel_context("dataset_strategy") == ((2, 1), (2, 2))
    with pytest.raises(ValueError, match="cannot be set together"):
        opforge.set_auto_parallel_context(dataset_strategy="full_batch", full_batch=True)
    with pytest.raises(TypeError, match="'dataset_strategy' must hold a strategy per input"):
        opforge.set_auto_parallel_context(dataset_strategy=((2, 1.5),))
    with pytest.raises(ValueError, match="'dataset_strategy' must be 'data_parallel', 'full_batch' or a tuple"):
        opforge.set_auto_parallel_context(dataset_strategy="model_parallel")


def test_parallel_optimizer_config_is_checked_and_read_as_shard_size_and_bytes():
    from opforge.parallel_context import optimizer_sharding

    assert optimizer_sharding() == (-1, 0)
    opforge.set_auto_parallel_context(
        parallel_optimizer_config={"optimizer_weight_shard_size": 2, "parallel_optimizer_threshold": 64}
    )
    assert optimizer_sharding() == (2, 64 * 1024)
    config = opforge.get_auto_parallel_context("parallel_optimizer_config")
    assert config["optimizer_level"] == "level1" and config["gradient_accumulation_shard"] is False
    for bad, error in [
        ({"optimizer_weight_shard_size": 0}, ValueError),
        ({"parallel_optimizer_threshold": -1}, ValueError),
        ({"optimizer_level": "level4"}, ValueError),
        ({"gradient_accumulation_shard": 1}, TypeError),
        ({"shard": 2}, ValueError),
    ]:
        with pytest.raises(error, match="parallel_optimizer_config"):
            opforge.set_auto_parallel_context(parallel_optimizer_config=bad)


def test_input_blocks_follow_the_dataset_strategy():
    blocks = sharding.input_blocks([(4, 3), None, (2, 6)], False, ((1, 1), (1, 1)))
    assert blocks[0] == (sharding.replicated(2), (4, 3)) and blocks[1] is None
    with pytest.raises(ValueError, match="one strategy per Tensor input of the network \\(2\\), but got 1"):
        sharding.input_blocks([(4, 3), (2, 6)], False, ((1, 1),))
    with pytest.raises(ValueError, match="a split count per dim of its input"):
        sharding.input_blocks([(4, 3)], False, ((1, 1, 1),))
    with pytest.raises(ValueError, match="For 'dataset_strategy', the strategy uses 2 devices"):  # one process
        sharding.input_blocks([(4, 3)], False, ((2, 1),))


def _auto_parallel(network=None, **kwargs):
    from opforge.parallel.auto_parallel import AutoParallel

    return AutoParallel(network or opforge.nn.Dense(4, 3), **kwargs)


def test_auto_parallel_settings_become_context_options(monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "4")  # AutoParallel reads the world when built (here: before init)
    monkeypatch.setattr(communication.GlobalComm, "INITED", False)
    net = _auto_parallel(parallel_mode="sharding_propagation")
    net.hsdp()
    net.pipeline(stages=2, scheduler="gpipe")
    net.dataset_strategy("full_batch")
    net.enable_gradients_mean()
    net.save_param_strategy_file("/tmp/strategy.ckpt")
    net.disable_strategy_file_only_for_trainable_params()
    net.comm_fusion({"allreduce": {"mode": "size", "config": 32}})
    options = net.context_options()
    assert options["parallel_mode"] == "auto_parallel" and options["search_mode"] == "sharding_propagation"
    assert options["enable_parallel_optimizer"] and options["pipeline_stages"] == 2 and options["gradients_mean"]
    assert options["dataset_strategy"] == "full_batch"
    assert options["strategy_ckpt_config"] == {
        "save_file": "/tmp/strategy.ckpt",
        "load_file": "",
        "only_trainable_params": False,
    }
    assert options["comm_fusion"] == {"allreduce": {"mode": "size", "config": 32}}
    assert net.get_pipeline_stages() == 2
    with net.applied():  # in force while the network runs, then the context is as it was
        assert opforge.get_auto_parallel_context("parallel_mode") == "auto_parallel"
        assert opforge.get_auto_parallel_context("full_batch") is True
    assert opforge.get_auto_parallel_context("parallel_mode") == "stand_alone"


def test_auto_parallel_on_one_rank_runs_stand_alone_and_keeps_parameter_names():
    dense = opforge.nn.Dense(4, 3)
    net = _auto_parallel(dense)
    assert net.context_options()["parallel_mode"] == "stand_alone"
    assert [p.name for p in net.trainable_params()] == ["weight", "bias"]
    x = opforge.Tensor(np.ones((2, 4), np.float32))
    np.testing.assert_allclose(net(x).asnumpy(), dense(x).asnumpy())
    twice = _auto_parallel(lambda a: a * 2.0)  # a function is a network too
    np.testing.assert_allclose(twice(x).asnumpy(), 2.0 * np.ones((2, 4)))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda n: n.dataset_strategy(None), ValueError, "must not be None"),
        (lambda n: n.dataset_strategy("rows"), ValueError, "AutoParallel.dataset_strategy"),
        (lambda n: n.dataset_strategy([(2, 1)]), TypeError, "must be str or tuple"),
        (lambda n: n.hsdp(shard_size=0), ValueError, "shard_size must be a positive integer or -1"),
        (lambda n: n.hsdp(threshold=-1), ValueError, "threshold must be a positive integer or 0"),
        (lambda n: n.hsdp(optimizer_level="level4"), ValueError, "optimizer_level must be one of"),
        (lambda n: n.pipeline(stages=0), ValueError, "'stages' must be larger than zero"),
        (lambda n: n.pipeline(stages=2.0), TypeError, "'stages' must be int"),
        (lambda n: n.pipeline(scheduler="zero_bubble_v"), NotImplementedError, "'1f1b' schedule"),
        (lambda n: n.pipeline(scheduler="fast"), ValueError, "'scheduler' must be one of"),
        (lambda n: n.comm_fusion({"allreduce": {"mode": "fast"}}), ValueError, "AutoParallel.comm_fusion"),
        (lambda n: n.comm_fusion([1]), TypeError, "must be dict"),
        (lambda n: n.save_param_strategy_file(1), TypeError, "'file_path' must be str"),
        (lambda n: n.save_operator_strategy_file("ops.json"), KeyError, "absolute path"),
        (lambda n: n.load_operator_strategy_file("/tmp/ops.txt"), KeyError, "must be .json"),
        (lambda n: n.transformer_opt("/nonexistent/speed_up.json"), ValueError, "does not exist"),
    ],
)
def test_auto_parallel_checks_what_it_is_given(call, error, match):
    with pytest.raises(error, match=match):
        call(_auto_parallel())


def test_auto_parallel_refuses_an_unknown_mode_and_warns_of_settings_it_does_not_act_on():
    with pytest.raises(ValueError, match="'parallel_mode' must be one of"):
        _auto_parallel(parallel_mode="auto_parallel")
    net = _auto_parallel()
    with pytest.warns(UserWarning, match="AutoParallel.dump_local_norm.*no local norm is written"):
        net.dump_local_norm("/tmp/norms")


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_auto_parallel_trains_as_one_process(n):
    """MindSpore 2.6's AutoParallel: a functional step (value_and_grad, the optimizer, hsdp), a Model, and a
    dataset strategy splitting the input's columns train, eagerly and traced, to one process's parameters; the
    global context stays stand-alone."""
    job = run_job([str(SCRIPTS / "auto_parallel.py")], n=n, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
    assert float(re.search(r"AUTO-PARALLEL-OK (\S+)", job.stdout).group(1)) <= 1e-5


@needs_mpi
def test_mindspore_2_6_auto_parallel_docstring_example_trains():
    """MindSpore's AutoParallel example (Pipeline by stage_config, hsdp, Model, GRAPH_MODE) with its imports
    changed to opforge: 2 epochs of 4 steps on 2 ranks, the loss going down, the strategy file written."""
    job = run_job([str(SCRIPTS / "mindspore_auto_parallel_example.py")], n=2, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
    first, last = map(float, re.search(r"EXAMPLE-OK (\S+) (\S+)", job.stdout).groups())
    assert last < first


@needs_mpi
@pytest.mark.parametrize("n", [2, 8])
def test_mindspore_operator_parallel_program_equals_one_process(n, tmp_path):
    """MindSpore's operator-parallel tutorial network (a MatMul split ((2, N/2), (N/2, 1)), a ReLU ((N, 1),)),
    trained by Model in GRAPH_MODE with LossMonitor and ModelCheckpoint: its per-row loss is split as the
    ReLU's rows, the callbacks read it whole, and each replay of the traced step returns its own (a split output
    was the traced call's value before: the third and fourth steps repeated the second's loss)."""
    job = run_job([str(SCRIPTS / "operator_parallel_model.py"), str(tmp_path)], n=n, timeout=240)
    assert job.returncode == 0 and "OPPAR-OK 4" in job.stdout, job.stdout + job.stderr


@needs_mpi
@pytest.mark.parametrize("n", [2, 8])
def test_mindspore_functional_jit_step_in_semi_auto_parallel_equals_one_process(n):
    """MindSpore's functional style (its advanced operator-parallel tutorial): set_auto_parallel_context, a @jit
    step of value_and_grad(has_aux=True) and an optimizer, no AutoParallel: the jitted step is the outermost
    call (it raised before: the weights it split reached a kernel outside the sharding interpreter); on 8 ranks
    the tutorial's Layouts with a dim split over two device-matrix axes."""
    job = run_job([str(SCRIPTS / "functional_operator_parallel.py")], n=n, timeout=240)
    assert job.returncode == 0 and "FUNC-OK 6" in job.stdout, job.stdout + job.stderr


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_assign_written_optimizers_keep_the_forward_layouts(n):
    """Lamb and Adam(use_amsgrad=True) write their updates with Assign: each weight keeps the layout its forward
    pass gave it (a weight read whole stays whole, its split update gathered), each state has its weight's layout
    (cloned from it: MindSpore's), and the weights equal one process's."""
    job = run_job([str(SCRIPTS / "assign_optimizers.py")], n=n, timeout=240)
    assert job.returncode == 0 and "ASSIGN-OK Lamb AdamAmsgrad" in job.stdout, job.stdout + job.stderr


def test_parallel_submodules_are_attributes_after_import():
    """MindSpore's samples call ms.parallel.nn.MicroBatchInterleaved(...) after a plain ``import mindspore``."""
    import opforge.nn.pipeline

    assert opforge.parallel.nn.Pipeline is opforge.nn.pipeline.Pipeline
    assert opforge.parallel.function.reshard is opforge.reshard
    assert opforge.parallel.distributed.DistributedDataParallel.__name__ == "DistributedDataParallel"


def test_cell_place_is_checked_and_recorded_on_its_cells():
    """MindSpore's distributed graph partition sample: net.fc1.place("MS_WORKER", 0)."""
    net = opforge.nn.SequentialCell([opforge.nn.Dense(2, 2), opforge.nn.ReLU()])
    net.place("MS_WORKER", 1)
    assert net._placement == net[0]._placement == net[1]._placement == ("MS_WORKER", 1)
    with pytest.raises(ValueError, match="'SequentialCell.place', the 'role' must be 'MS_WORKER'"):
        net.place("MS_PSERVER", 0)
    with pytest.raises(ValueError, match="'rank_id' must be an int >= 0"):
        net.place("MS_WORKER", -1)


def test_pipeline_stages_of_cells_are_ignored_in_one_stage():
    """MindSpore's pipeline sample run in one process: pipeline_stage set, no pipeline_stages: the PipelineCell
    runs every cell (it made placeholders of the stage-1 cells before), its loss the micro-batches' sum."""
    net = opforge.nn.SequentialCell(opforge.nn.Dense(8, 8), opforge.nn.ReLU(), opforge.nn.Dense(8, 4))
    net[0].pipeline_stage, net[2].pipeline_stage = 0, 1
    with_loss = opforge.nn.WithLossCell(net, opforge.nn.CrossEntropyLoss())
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 8)).astype(np.float32), rng.integers(0, 4, 16).astype(np.int32)
    want = sum(float(with_loss(Tensor(x[i : i + 4]), Tensor(y[i : i + 4])).asnumpy()) for i in range(0, 16, 4))
    got = opforge.nn.PipelineCell(with_loss, 4)(Tensor(x), Tensor(y))
    np.testing.assert_allclose(float(got.asnumpy()), want, rtol=1e-6)
