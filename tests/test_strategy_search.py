"""AUTO_PARALLEL's strategy search (``opforge/parallel/strategy_search.py``): the exact minimisation against
brute force, the candidates, the context's search modes; the searches on real ranks are in
tests/test_parallel.py (tests/mpi_scripts/strategy_search.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import opforge
from opforge import nn
from opforge.dispatch.sharding import sharding_rules
from opforge.parallel import get_algo_parameters, reset_algo_parameters, strategy_search
from opforge.parallel.strategy_search import _factorings, minimise


def _total(choice, unary, pairwise) -> float:
    return sum(u[c] for u, c in zip(unary, choice)) + sum(t[choice[a], choice[b]] for (a, b), t in pairwise.items())


def _random_problem(rng, n_vars: int, edges: list):
    domains = [int(rng.integers(1, 5)) for _ in range(n_vars)]
    unary = [rng.random(d) * 10 for d in domains]
    pairwise = {(a, b): rng.random((domains[a], domains[b])) * 10 for a, b in edges}
    return domains, unary, pairwise


GRAPHS = {
    "chain": [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)],
    "tree": [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5)],
    "residual": [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4), (4, 5), (3, 5)],
    "attention": [(0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (4, 5), (3, 5)],  # q, k, v of one input
    "complete": list(itertools.combinations(range(5), 2)),
}


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("seed", range(5))
def test_elimination_finds_the_brute_force_minimum(graph, seed):
    rng = np.random.default_rng(seed)
    edges = GRAPHS[graph]
    n_vars = 1 + max(max(e) for e in edges)
    domains, unary, pairwise = _random_problem(rng, n_vars, edges)
    choice, exact = minimise(domains, unary, pairwise)
    best = min(_total(c, unary, pairwise) for c in itertools.product(*(range(d) for d in domains)))
    assert exact
    assert _total(choice, unary, pairwise) == pytest.approx(best)


def test_elimination_adds_parallel_tables_and_takes_isolated_variables():
    unary = [np.array([0.0, 5.0]), np.array([1.0, 0.0]), np.array([3.0, 2.0, 1.0])]
    pairwise = {(0, 1): np.array([[4.0, 0.0], [0.0, 4.0]])}
    choice, exact = minimise([2, 2, 3], unary, pairwise)
    assert exact and choice == [0, 1, 2]


def test_too_large_tables_fall_back_to_a_local_minimum(monkeypatch):
    rng = np.random.default_rng(7)
    edges = GRAPHS["complete"]
    domains, unary, pairwise = _random_problem(rng, 5, edges)
    monkeypatch.setattr(strategy_search, "_MAX_TABLE", 1)
    choice, exact = minimise(domains, unary, pairwise)
    assert not exact
    # coordinate descent: no single variable can improve it
    for v, d in enumerate(domains):
        for x in range(d):
            moved = list(choice)
            moved[v] = x
            assert _total(moved, unary, pairwise) >= _total(choice, unary, pairwise) - 1e-9


def test_factorings_split_dims_by_divisors_of_the_world():
    got = set(_factorings((8, 6), 4))
    assert got == {(1, 1), (1, 2), (2, 1), (2, 2), (4, 1)}  # 6 does not divide by 4
    assert set(_factorings((3,), 2)) == {(1,)}


@pytest.fixture
def _context():
    opforge.reset_auto_parallel_context()
    yield
    opforge.reset_auto_parallel_context()


@pytest.mark.usefixtures("_context")
def test_search_modes_as_mindspore_names_them():
    assert opforge.get_auto_parallel_context("search_mode") == "recursive_programming"  # MindSpore's default
    for mode in ("dynamic_programming", "sharding_propagation", "recursive_programming"):
        opforge.set_auto_parallel_context(search_mode=mode)
        assert opforge.get_auto_parallel_context("search_mode") == mode
    with pytest.warns(DeprecationWarning, match="'auto_parallel_search_mode' is replaced by 'search_mode'"):
        opforge.set_auto_parallel_context(auto_parallel_search_mode="dynamic_programming")
    assert opforge.get_auto_parallel_context("search_mode") == "dynamic_programming"
    assert opforge.get_auto_parallel_context("auto_parallel_search_mode") == "dynamic_programming"
    with pytest.raises(ValueError, match=r"'search_mode' must be one of .*'recursive_programming'.*but got 'greedy'"):
        opforge.set_auto_parallel_context(search_mode="greedy")
    # the zoo's data-parallel setups pass it too (ibnnet, PoseNet, VehicleNet, glore_res)
    with pytest.warns(DeprecationWarning):
        opforge.context.set_auto_parallel_context(
            parallel_mode=opforge.ParallelMode.DATA_PARALLEL,
            gradients_mean=True,
            auto_parallel_search_mode="recursive_programming",
        )


def test_algo_parameters_default_to_mindspore_s():
    reset_algo_parameters()
    assert get_algo_parameters("fully_use_devices") is True


@pytest.mark.usefixtures("_context")
def test_auto_parallel_search_on_one_rank_trains_as_stand_alone():
    """On a world of one rank every strategy is the whole tensor: the searched network trains exactly as a
    stand-alone one (the search, its recording included, changes nothing it should not)."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8).astype(np.int32)

    def train():
        nn.set_seed(0)
        net = nn.SequentialCell([nn.Dense(6, 16, activation="relu"), nn.Dense(16, 3)])
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.1, 0.9))
        losses = [float(step(opforge.Tensor(x), opforge.Tensor(y)).asnumpy()) for _ in range(3)]
        searched = [p.in_strategy for p in (net[0].matmul, net[1].matmul) if p.__dict__.get("_searched_strategy")]
        return losses, [p.asnumpy() for p in net.trainable_params()], searched

    opforge.communication.init()
    want = train()
    opforge.set_auto_parallel_context(parallel_mode="auto_parallel", search_mode="dynamic_programming")
    got = train()
    assert not want[2] and got[2] == [((1, 1), (1, 1))] * 2  # the search ran: one rank, nothing split
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# The candidates and the algorithm parameters, on a 4-rank world as the search sees it (no ranks needed:
# recording and costing read shapes only)


@pytest.fixture
def four_ranks(monkeypatch):
    from opforge.primitives import sharding_ops

    monkeypatch.setattr(sharding_ops, "world_size", lambda: 4)
    monkeypatch.setattr(strategy_search, "world_size", lambda: 4)
    reset_algo_parameters()
    yield
    reset_algo_parameters()


def _wide_mlp():
    nn.set_seed(0)
    net = nn.SequentialCell([nn.Dense(32, 1024, activation="relu"), nn.Dense(1024, 8)])
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    x = opforge.Tensor(np.zeros((8, 32), np.float32))
    y = opforge.Tensor(np.zeros(8, np.int32))
    return loss, (x, y)


def _chosen(problem, choice) -> dict:
    """Each operator variable's (name, chosen candidate) and all its candidates."""
    out = {}
    for v, calls in enumerate(problem.var_calls):
        if problem.params[v] is None and calls:
            out.setdefault(calls[0].prim.name, []).append((problem.cands[v][choice[v]], problem.cands[v], calls))
    return out


@pytest.mark.usefixtures("four_ranks")
def test_a_small_batch_through_large_weights_comes_out_megatron_s_mlp():
    cell, args = _wide_mlp()
    problem, choice, cost, exact = strategy_search.solve(cell, args, {}, True)
    chosen = _chosen(problem, choice)
    (first, _, _), (second, _, _) = chosen["MatMul"]
    assert exact and first.strategy == ((1, 1), (4, 1)) and second.strategy == ((1, 4), (1, 4))
    # the exact minimum: no single operator's other candidate is cheaper
    unary, pairwise = problem.tables()
    for v, cands in enumerate(problem.cands):
        for x in range(len(cands)):
            moved = list(choice)
            moved[v] = x
            assert _total(moved, unary, pairwise) >= cost - 1e-6


@pytest.mark.usefixtures("four_ranks")
def test_fully_use_devices_and_approximation_shape_the_candidates():
    cell, args = _wide_mlp()
    problem = strategy_search.solve(cell, args, {}, True)[0]
    counts = {name: len(c[0][1]) for name, c in _chosen(problem, [0] * len(problem.cands)).items()}
    assert counts["MatMul"] == 6  # (m, k, n) splits using all 4 ranks: 3 one-axis + 3 two-axis
    opforge.set_algo_parameters(fully_use_devices=False)
    problem = strategy_search.solve(cell, args, {}, True)[0]
    assert len(_chosen(problem, [0] * len(problem.cands))["MatMul"][0][1]) > 6
    opforge.set_algo_parameters(fully_use_devices=True, enable_algo_approxi=True, algo_approxi_epsilon=0.5)
    problem = strategy_search.solve(cell, args, {}, True)[0]
    assert all(len(c) <= 2 for v, c in enumerate(problem.cands) if problem.params[v] is None)


@pytest.mark.usefixtures("four_ranks")
def test_tensor_slice_align_keeps_matmul_blocks_aligned():
    cell, args = _wide_mlp()
    opforge.set_algo_parameters(tensor_slice_align_enable=True, tensor_slice_align_size=16)
    problem = strategy_search.solve(cell, args, {}, True)[0]
    matmuls = _chosen(problem, [0] * len(problem.cands))["MatMul"]
    for _, cands, calls in matmuls:
        for cand in cands:
            for a, lay in zip(calls[0].args, cand.plan.inputs):
                if isinstance(a, opforge.Tensor):
                    assert lay.local_shape(a.shape)[-1] % 16 == 0
    # the first one's (8, 32) input split 4 ways along its 32 columns would leave blocks of 8: not a candidate
    assert all(c.strategy[0][1] != 4 for c in matmuls[0][1]) and matmuls[0][1]


@pytest.mark.usefixtures("four_ranks")
def test_elementwise_operators_follow_their_readers_when_asked():
    cell, args = _wide_mlp()
    opforge.set_algo_parameters(elementwise_op_strategy_follow=True)
    problem, choice, _, exact = strategy_search.solve(cell, args, {}, True)
    assert exact
    for j, call in enumerate(problem.graph):
        for i, src in call.sources.items():
            if not (isinstance(src, tuple) and src[0] == "call"):
                continue
            producer = problem.graph[src[1]]
            if not getattr(sharding_rules.get(type(producer.prim)), "elementwise", False):
                continue
            made = problem.cands[problem.call_var[src[1]]][choice[problem.call_var[src[1]]]].plan
            read = problem.cands[problem.call_var[j]][choice[problem.call_var[j]]].plan.inputs[i]
            assert made.outputs[src[2]] == read and not made.partial


class _ReadsItsValues(nn.Cell):
    """Python that reads a tensor's value: no graph from shapes alone."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        out = self.fc(x)
        return out * 2.0 if float(out.asnumpy().sum()) > 1e9 else out


@pytest.mark.usefixtures("_context")
def test_a_network_reading_its_values_falls_back_to_propagation_with_a_warning():
    opforge.communication.init()
    opforge.set_auto_parallel_context(parallel_mode="auto_parallel")
    net = _ReadsItsValues()
    x = np.ones((2, 4), np.float32)
    with pytest.warns(opforge.dispatch.sharding.ShardingWarning, match="could not record the network from its shapes"):
        out = net(opforge.Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), x @ net.fc.weight.asnumpy().T + net.fc.bias.asnumpy(), rtol=1e-6)


@pytest.mark.usefixtures("_context")
def test_pipeline_stages_leave_the_layouts_to_propagation_with_a_warning():
    opforge.set_auto_parallel_context(parallel_mode="auto_parallel", pipeline_stages=2)
    net = nn.Dense(4, 2)
    with pytest.warns(opforge.dispatch.sharding.ShardingWarning, match="does not cut pipeline stages"):
        net._search_strategies((opforge.Tensor(np.ones((2, 4), np.float32)),), {})
    assert getattr(net.matmul, "in_strategy", None) is None


def test_resnet50_on_eight_ranks_is_solved_exactly(monkeypatch):
    """A real network's graph (ResNet-50's training graph: residual blocks, BatchNorms, 444 variables with the
    Parameters): elimination stays exact, and no single operator or Parameter can move to a cheaper choice."""
    from zoo.resnet import resnet50

    from opforge.primitives import sharding_ops

    monkeypatch.setattr(sharding_ops, "world_size", lambda: 8)
    monkeypatch.setattr(strategy_search, "world_size", lambda: 8)
    cell = nn.WithLossCell(resnet50(10), nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    x, y = opforge.Tensor(np.zeros((8, 3, 32, 32), np.float32)), opforge.Tensor(np.zeros(8, np.int32))
    problem, choice, cost, exact = strategy_search.solve(cell, (x, y), {}, True)
    assert exact and len(problem.graph) > 150
    unary, pairwise = problem.tables()
    assert _total(choice, unary, pairwise) == pytest.approx(cost)
    edges = {v: [] for v in range(len(choice))}
    for (a, b), t in pairwise.items():
        edges[a].append((b, t))
        edges[b].append((a, t.T))
    for v, u in enumerate(unary):
        local = u + sum(t[:, choice[w]] for w, t in edges[v])
        assert local[choice[v]] <= local.min() + 1e-6 * max(1.0, abs(local.min()))
