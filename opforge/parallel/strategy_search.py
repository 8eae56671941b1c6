"""MindSpore's strategy searches of AUTO_PARALLEL (``search_mode="recursive_programming"``, its default, and
``"dynamic_programming"``): a sharding strategy for every operator nobody annotated, chosen for the whole
network by a cost model, before its first step.

Sharding propagation (``search_mode="sharding_propagation"``) decides one operator at a time, as the
network runs, from the layouts its inputs already have. A search looks at the whole forward graph first:

1. **Record.** The outermost cell's first call runs abstractly (``AbstractInterpreter``: shapes only, no
   kernel) on the global shapes of its inputs; every primitive call before the first backward operator is a
   node of the graph, its tensor inputs edges from the calls, Parameters and network inputs they read.
2. **Candidates.** Each operator with a sharding rule gets the strategies its rule accepts (every way of
   splitting each input's dims by divisors of the world size; MindSpore's ``fully_use_devices``, its
   default, keeps those using every rank); an annotated operator keeps its strategy; one without a rule runs
   replicated. A Parameter may take any layout its readers want. An operator with a strategy keeps it: the
   user's, or an earlier search's (a network evaluated after its training step was searched).
3. **Costs,** in elements per rank (``_COMM`` weights an element received against one computed, and
   ``_LATENCY`` elements received stand for each collective's latency):
   computation (the blocks each rank reads and writes), the collectives of the forward pass (a partial sum
   completed: ``layout_read_cost``; a tensor redistributed between a producer's and a reader's layouts:
   ``redistribution_cost``), and of the backward pass (the gradient redistributed back; an input replicated
   over a device-matrix axis that splits the work gets partial gradients, an AllReduce: a weight in data
   parallel, the input of a column-parallel MatMul).
4. **Minimise** the sum over the graph exactly: variable elimination (dynamic programming over the graph,
   the order chosen to keep the tables small), whose tables stay small on networks' graphs (chains, residual
   blocks, attention's three products of one input). A graph whose tables would grow too large is minimised
   by coordinate descent from the best choice of each operator alone, with a warning.
5. **Apply.** Each chosen strategy is set on its primitive (``prim.shard``; a primitive called at several
   places with different shapes is left to propagation), and each Parameter is split to its chosen layout;
   the network then runs under the sharding interpreter as an annotated one does.

MindSpore's two searches are two algorithms for this one problem (its recursive programming is a fast
heuristic for huge graphs; its dynamic programming eliminates the graph as above): opforge runs the exact
one for both. ``set_algo_parameters`` shapes the candidates: ``fully_use_devices``,
``elementwise_op_strategy_follow`` (an elementwise operator's output layout must be its reader's),
``enable_algo_approxi``/``algo_approxi_epsilon`` (at most ``1/epsilon`` candidates per operator, the
cheapest alone), ``tensor_slice_align_enable``/``tensor_slice_align_size`` (MatMul blocks whose last dims
are multiples of the size).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from opforge.bprop.tape import differentiated_operator
from opforge.dispatch import sharding
from opforge.dispatch.abstract import AbstractInterpreter, abstract_call
from opforge.dispatch.sharding import (
    ShardPlan,
    TensorLayout,
    check_strategy_followed,
    layout_read_cost,
    redistribution_cost,
    replicated,
    sharding_rules,
)
from opforge.dtype import float_type
from opforge.parallel.algo_parameter_config import get_algo_parameters
from opforge.parallel_context import input_strategies
from opforge.primitives.primitive import Primitive
from opforge.primitives.sharding_ops import world_size
from opforge.tensor import Parameter, Tensor

__all__ = ["search_strategies", "SearchResult", "minimise"]

# One element received by a collective costs as much as this many elements read or written by a kernel (a
# node's memory bandwidth against its network's, within a factor of two on the machines opforge runs on).
_COMM = 16.0
# A collective's latency, in elements received: about 8 us of a kernel's time, what one costs on 2 ranks of
# one node (5-7 us for a few elements through the C++ kernels, measured; more across nodes). Without it the
# search splits tiny tensors to save a few elements and pays a collective for each.
_LATENCY = 2048.0
_MAX_TABLE = 1 << 22  # the largest table variable elimination may build (entries)
_MAX_COMBOS = 1 << 14  # strategies tried per operator
_INFEASIBLE = 1e30


@dataclass
class SearchResult:
    """What a search chose: ``strategies`` ((primitive, strategy) for each primitive it set one on),
    ``layouts`` (Parameter name -> its ``TensorLayout``), ``cost`` (the model's total, elements per rank),
    ``exact`` (False when coordinate descent replaced elimination)."""

    strategies: list
    layouts: dict
    cost: float
    exact: bool


@dataclass
class _Candidate:
    strategy: object  # the in_strategy to set, or None (the call runs replicated)
    plan: ShardPlan


class _Call:
    """One recorded primitive call: its bound arguments (placeholders), where each tensor input came from
    (``("call", j, k)``, ``("param", Parameter)``, ``("input", TensorLayout)``, or None), its output shapes."""

    def __init__(self, prim, args: tuple, sources: dict, outs: tuple):
        self.prim, self.args, self.sources, self.outs = prim, args, sources, outs

    @property
    def out_shapes(self) -> list:
        return [tuple(o._meta[1]) for o in self.outs]

    def signature(self) -> tuple:
        return tuple(tuple(a._meta[1]) if isinstance(a, Tensor) else None for a in self.args)


class _Recorder(AbstractInterpreter):
    """Records the forward calls with their data flow (until the first backward operator runs)."""

    def __init__(self, inputs: dict):
        super().__init__()
        self.origin = dict(inputs)  # id(tensor) -> source
        self.graph: list = []
        self.forward = True

    def process_primitive(self, prim, args: tuple):
        if self.forward and differentiated_operator() is not None:
            self.forward = False
        if len(args) < len(prim.__mindspore_signature__):
            args = tuple(prim._bound_inputs(tuple(args)))
        out, record = abstract_call(prim, args)
        self.calls.append(record)
        if self.forward:
            outs = out if isinstance(out, tuple) else (out,)
            sources = {i: self._source(a) for i, a in enumerate(args) if isinstance(a, (Tensor, tuple, list))}
            j = len(self.graph)
            self.graph.append(_Call(prim, args, sources, outs))
            for k, o in enumerate(outs):
                if isinstance(o, Tensor) and not isinstance(o, Parameter):
                    self.origin.setdefault(id(o), ("call", j, k))
        return out

    def _source(self, a):
        if isinstance(a, Parameter):
            return ("param", a)
        if isinstance(a, Tensor):
            return self.origin.get(id(a))
        return "sequence"


# ---------------------------------------------------------------------------------------------
# Candidates


def _factorings(shape: tuple, n: int) -> list:
    """Every split count per dim (each dividing its dim, their product dividing ``n``)."""
    out = []

    def walk(i, left, acc):
        if i == len(shape):
            out.append(tuple(acc))
            return
        for f in (d for d in range(1, left + 1) if left % d == 0):
            if shape[i] % f == 0:
                walk(i + 1, left // f, acc + [f])

    walk(0, n, [])
    return out


def _used_axes(plan: ShardPlan) -> set:
    used = set()
    for lay in [*plan.inputs, *plan.outputs]:
        if isinstance(lay, TensorLayout):
            used.update(d for d in lay.dims if d is not None)
    for _, axes in plan.partial.values():
        used.update(axes)
    return used


def _devices(plan: ShardPlan) -> int:
    mesh = next((lay.mesh for lay in [*plan.inputs, *plan.outputs] if isinstance(lay, TensorLayout)), ())
    return math.prod(mesh[a] for a in _used_axes(plan))


def _fits(plan: ShardPlan, call: _Call) -> bool:
    tensors = [(a, lay) for a, lay in zip(call.args, plan.inputs) if isinstance(a, Tensor)]
    for a, lay in tensors:
        if lay is not None and any(s % lay.splits(i) for i, s in enumerate(a._meta[1])):
            return False
    outputs = zip(call.out_shapes, plan.outputs)
    return all(all(s % lay.splits(i) == 0 for i, s in enumerate(shape)) for shape, lay in outputs)


def _aligned(plan: ShardPlan, call: _Call, size: int) -> bool:
    """MindSpore's ``tensor_slice_align``: a MatMul's blocks have last dims that are multiples of ``size``."""
    for a, lay in zip(call.args, plan.inputs):
        if isinstance(a, Tensor) and lay is not None and lay.local_shape(a._meta[1])[-1] % size:
            return False
    return True


def _replicated_candidate(call: _Call) -> _Candidate:
    inputs = [replicated(len(a._meta[1])) if isinstance(a, Tensor) else None for a in call.args]
    return _Candidate(None, ShardPlan(inputs=inputs, outputs=[replicated(len(s)) for s in call.out_shapes]))


def _candidates(call: _Call, n: int) -> list:
    """The strategies ``call``'s sharding rule accepts, as candidates (a replicated one when it has no rule,
    reads a sequence of tensors, or accepts none)."""
    prim = call.prim
    rule = sharding_rules.get(type(prim))
    pos = [i for i, a in enumerate(call.args) if isinstance(a, Tensor)]
    if rule is None or any(isinstance(a, (tuple, list)) for a in call.args) or not pos:
        return [_replicated_candidate(call)]
    layouts = tuple(replicated(len(a._meta[1])) if isinstance(a, Tensor) else None for a in call.args)
    fixed = getattr(prim, "in_strategy", None)  # the user's, or an earlier search's (the training step's)
    if fixed is not None:
        return [_Candidate(fixed, rule(prim, call.args, layouts, fixed))]
    per_input = [_factorings(tuple(call.args[i]._meta[1]), n) for i in pos]
    if math.prod(len(f) for f in per_input) > _MAX_COMBOS:
        return [_replicated_candidate(call)]
    full = get_algo_parameters("fully_use_devices")
    align = get_algo_parameters("tensor_slice_align_enable") and type(prim).__name__ in ("MatMul", "BatchMatMul")
    found, seen = [], set()
    for strategy in itertools.product(*per_input):
        try:
            plan = rule(prim, call.args, layouts, strategy)
            if plan is not None:
                check_strategy_followed(prim, call.args, plan, strategy)
        except (ValueError, TypeError):
            continue  # a strategy the operator does not take (or would take otherwise than it says)
        if plan is None or not _fits(plan, call) or (full and _devices(plan) != n):
            continue
        if align and not _aligned(plan, call, get_algo_parameters("tensor_slice_align_size")):
            continue
        key = (tuple(plan.inputs), tuple(plan.outputs), tuple(sorted(plan.partial.items())))
        if key not in seen:
            seen.add(key)
            found.append(_Candidate(strategy, plan))
    return found or [_replicated_candidate(call)]


# ---------------------------------------------------------------------------------------------
# Costs (elements per rank; see the module's docstring)


def _block(shape: tuple, lay: TensorLayout) -> float:
    return float(math.prod(lay.local_shape(shape)))


def _needs_grad(call: _Call, i: int) -> bool:
    a, src = call.args[i], call.sources.get(i)
    if a._meta[0] not in float_type or not isinstance(src, tuple) or src[0] == "input":
        return False
    return src[0] == "call" or src[1].requires_grad


def _call_cost(call: _Call, cand: _Candidate) -> float:
    """Computation (the blocks read and written) and the backward pass's gradient AllReduces of the inputs
    replicated over an axis that splits the work."""
    plan = cand.plan
    used = _used_axes(plan)
    cost, comm = 0.0, 0.0
    for i, (a, lay) in enumerate(zip(call.args, plan.inputs)):
        if not isinstance(a, Tensor) or lay is None:  # (None: taken as it comes)
            continue
        shape = tuple(a._meta[1])
        cost += _block(shape, lay)
        missing = math.prod(lay.mesh[x] for x in used - {d for d in lay.dims if d is not None})
        if missing > 1 and _needs_grad(call, i):
            # (a weight's partial gradient shares one AllReduce with the others': sharding.complete_together)
            latency = _LATENCY if call.sources[i][0] == "call" else 0.0
            comm += 2.0 * _block(shape, lay) * (missing - 1) / missing + latency
    cost += sum(_block(s, lay) for s, lay in zip(call.out_shapes, plan.outputs))
    return cost + _COMM * comm


def _edge_cost(shape: tuple, have: TensorLayout, pending, want: TensorLayout, backward: bool) -> float:
    """Reading a tensor laid out ``have`` (partial over ``pending``) as ``want``, and, when it takes a
    gradient, sending the gradient back from ``want`` to ``have``."""
    if not isinstance(want, TensorLayout):  # the operator takes the input as it comes
        return 0.0
    cost = layout_read_cost(have, pending, want, shape, _LATENCY)
    if backward:
        cost += redistribution_cost(want, have, shape, _LATENCY)
    return _COMM * cost


# ---------------------------------------------------------------------------------------------
# The minimisation: variable elimination over pairwise costs


def minimise(domains: list, unary: list, pairwise: dict) -> tuple:
    """The assignment (one index per variable, ``domains[v]`` choices each) minimising
    ``sum(unary[v][x_v]) + sum(pairwise[(u, v)][x_u, x_v])``, and whether it is exact.

    Variable elimination: each step removes the variable whose neighbours' tables are smallest, replacing the
    tables touching it by their minimum over it (remembering the argmin); the choices are read back in
    reverse. When every remaining variable would need a table above ``_MAX_TABLE`` entries, coordinate
    descent from the unary minima finishes instead (a local minimum, ``exact=False``)."""
    factors: dict = {}  # factor id -> (its variables, its table)
    of_var: dict = {v: set() for v in range(len(domains))}  # variable -> the ids of the factors touching it
    ids = itertools.count()

    def add(vs: tuple, table) -> None:
        fid = next(ids)
        factors[fid] = (vs, np.asarray(table, dtype=np.float64))
        for u in vs:
            of_var[u].add(fid)

    def scope(v: int) -> set:
        return {v}.union(*(factors[f][0] for f in of_var[v]))

    trail: list = []
    for v in range(len(domains)):
        add((v,), unary[v])
    for vs, t in pairwise.items():
        add(vs, t)
    sizes = {v: math.prod(domains[u] for u in scope(v)) for v in of_var}
    while sizes:
        v = min(sizes, key=sizes.__getitem__)
        if sizes[v] > _MAX_TABLE:
            return _descend(domains, unary, pairwise), False
        order = sorted(scope(v))
        table = np.zeros([domains[u] for u in order])
        for fid in of_var.pop(v):
            vs, t = factors.pop(fid)
            table = table + _spread(vs, t, order)
            for u in vs:
                if u != v:
                    of_var[u].discard(fid)
        axis = order.index(v)
        rest = tuple(u for u in order if u != v)
        trail.append((v, rest, np.argmin(table, axis=axis)))
        add(rest, np.min(table, axis=axis))
        del sizes[v]
        for u in rest:  # only the neighbours' tables changed
            sizes[u] = math.prod(domains[w] for w in scope(u))
    choice = [0] * len(domains)
    for v, rest, argmin in reversed(trail):
        choice[v] = int(argmin[tuple(choice[u] for u in rest)]) if rest else int(argmin)
    return choice, True


def _spread(vs: tuple, table: np.ndarray, order: list) -> np.ndarray:
    """``table`` (axes ``vs``) broadcast over the axes ``order``."""
    perm = sorted(range(len(vs)), key=lambda k: order.index(vs[k]))
    moved = np.transpose(table, perm)
    shape = [1] * len(order)
    for k in perm:
        shape[order.index(vs[k])] = table.shape[k]
    return moved.reshape(shape)


def _descend(domains: list, unary: list, pairwise: dict) -> list:
    choice = [int(np.argmin(u)) for u in unary]
    neighbours = {v: [] for v in range(len(domains))}
    for (u, v), t in pairwise.items():
        neighbours[u].append((v, np.asarray(t)))
        neighbours[v].append((u, np.asarray(t).T))
    for _ in range(100):
        changed = False
        for v in range(len(domains)):
            local = np.asarray(unary[v], dtype=np.float64).copy()
            for u, t in neighbours[v]:
                local += t[:, choice[u]]
            best = int(np.argmin(local))
            if local[best] < local[choice[v]]:
                choice[v], changed = best, True
        if not changed:
            break
    return choice


# ---------------------------------------------------------------------------------------------
# The search


class _Problem:
    """The graph's variables (operators and Parameters), their candidates and their cost tables."""

    def __init__(self, graph: list, n: int):
        self.graph, self.n = graph, n
        self.groups: dict = {}  # id(prim) -> variable, for a primitive whose calls all have one signature
        self.var_calls: list = []  # variable -> the calls it decides
        self.cands: list = []  # variable -> candidates (an operator's) or layouts (a Parameter's)
        self.params: list = []  # variable -> the Parameter, or None
        self.call_var: list = []
        signatures: dict = {}
        for call in graph:
            signatures.setdefault(id(call.prim), set()).add(call.signature())
        for call in graph:
            shared = len(signatures[id(call.prim)]) == 1
            v = self.groups.get(id(call.prim)) if shared else None
            if v is None:
                v = self._new(_candidates(call, n), None)
                self.var_calls.append([])
                if shared:
                    self.groups[id(call.prim)] = v
            self.var_calls[v].append(call)
            self.call_var.append(v)
        self.param_var: dict = {}
        for call in graph:
            for src in call.sources.values():
                if isinstance(src, tuple) and src[0] == "param" and id(src[1]) not in self.param_var:
                    self.param_var[id(src[1])] = self._new(None, src[1])
                    self.var_calls.append([])
        for p in self.param_var.values():
            self.cands[p] = self._param_layouts(self.params[p])
        self._approximate()

    def _new(self, cands, param) -> int:
        self.cands.append(cands)
        self.params.append(param)
        return len(self.cands) - 1

    def _param_layouts(self, param) -> list:
        """Replicated, and every layout a reader's candidate wants for it."""
        shape = tuple(param._meta[1])
        found = [replicated(len(shape))]
        for j, call in enumerate(self.graph):
            for i, src in call.sources.items():
                if isinstance(src, tuple) and src[0] == "param" and src[1] is param:
                    for cand in self.cands[self.call_var[j]]:
                        want = cand.plan.inputs[i]
                        if isinstance(want, TensorLayout) and want not in found:
                            found.append(want)
        return found

    def _approximate(self) -> None:
        """MindSpore's ``enable_algo_approxi``: at most ``1/algo_approxi_epsilon`` candidates per operator,
        the cheapest alone."""
        if not get_algo_parameters("enable_algo_approxi"):
            return
        keep = max(1, math.ceil(1.0 / get_algo_parameters("algo_approxi_epsilon")))
        for v, calls in enumerate(self.var_calls):
            if self.params[v] is None and len(self.cands[v]) > keep:
                costs = [sum(_call_cost(c, cand) for c in calls) for cand in self.cands[v]]
                order = sorted(range(len(costs)), key=costs.__getitem__)[:keep]
                self.cands[v] = [self.cands[v][k] for k in sorted(order)]

    def tables(self) -> tuple:
        unary = [np.zeros(len(c)) for c in self.cands]
        pairwise: dict = {}
        follow = get_algo_parameters("elementwise_op_strategy_follow")
        for p in self.param_var.values():  # the optimizer's update reads and writes the block
            shape = tuple(self.params[p]._meta[1])
            unary[p] += [2.0 * _block(shape, lay) for lay in self.cands[p]]
        for j, call in enumerate(self.graph):
            v = self.call_var[j]
            unary[v] += [_call_cost(call, cand) for cand in self.cands[v]]
            for i, src in call.sources.items():
                if isinstance(src, tuple):
                    self._edge(call, i, src, v, unary, pairwise, follow)
        return unary, pairwise

    def _edge(self, call: _Call, i: int, src: tuple, v: int, unary: list, pairwise: dict, follow: bool) -> None:
        shape = tuple(call.args[i]._meta[1])
        wants = [cand.plan.inputs[i] for cand in self.cands[v]]
        back = _needs_grad(call, i)
        if src[0] == "input":
            unary[v] += [_edge_cost(shape, src[1], None, w, False) for w in wants]
            return
        if src[0] == "param":
            u = self.param_var[id(src[1])]
            table = [[_edge_cost(shape, have, None, w, back) for w in wants] for have in self.cands[u]]
        else:
            _, producer, k = src
            u = self.call_var[producer]
            rule = sharding_rules.get(type(self.graph[producer].prim))
            strict = follow and getattr(rule, "elementwise", False)
            table = []
            for cand in self.cands[u]:
                have, pending = _output_layout(cand, k, shape), cand.plan.partial.get(k)
                row = [_edge_cost(shape, have, pending, w, back) for w in wants]
                if strict:  # elementwise_op_strategy_follow: the reader takes the layout as it is
                    row = [c if pending is None and have == w else _INFEASIBLE for c, w in zip(row, wants)]
                table.append(row)
        if u == v:  # a primitive reading its own earlier output: the diagonal
            unary[v] += np.diag(np.asarray(table))
            return
        key, t = ((u, v), np.asarray(table)) if u < v else ((v, u), np.asarray(table).T)
        pairwise[key] = pairwise[key] + t if key in pairwise else t


def _output_layout(cand: _Candidate, k: int, shape: tuple) -> TensorLayout:
    outs = cand.plan.outputs
    return outs[k] if k < len(outs) and isinstance(outs[k], TensorLayout) else replicated(len(shape))


def _record(cell, args: tuple, kwargs: dict, full_batch: bool) -> list:
    """The forward graph of ``cell(*args, **kwargs)`` on the inputs' global shapes."""
    shapes = [tuple(a._meta[1]) if isinstance(a, Tensor) and len(a._meta[1]) > 0 else None for a in args]
    inputs, placeholders = {}, []
    for a, block in zip(args, sharding.input_blocks(shapes, full_batch, input_strategies())):
        if block is None:
            placeholders.append(a)
            continue
        layout, shape = block
        p = Tensor._placeholder(a._meta[0], shape, a._meta[2])
        inputs[id(p)] = ("input", layout)
        placeholders.append(p)
    recorder = _Recorder(inputs)
    with recorder, sharding.inner_calls():
        cell._call_construct(tuple(placeholders), kwargs)
    return recorder.graph


def search_strategies(cell, args: tuple, kwargs: dict, full_batch: bool) -> SearchResult:
    """Choose and set the strategies of ``cell``'s operators and the layouts of its Parameters (the module's
    docstring), from its call on ``args`` (each rank's inputs; with ``full_batch`` the whole batch)."""
    problem, choice, cost, exact = solve(cell, args, kwargs, full_batch)
    if not exact:
        warnings.warn(
            f"the strategy search of '{type(cell).__name__}' ({len(problem.graph)} operators) fell back to "
            "coordinate descent: its graph's elimination tables were too large; the strategies found may not be "
            "the cheapest.",
            sharding.ShardingWarning,
            stacklevel=3,
        )
    return _apply(problem, choice, cost, exact, _cell_primitives(cell))


def solve(cell, args: tuple, kwargs: dict, full_batch: bool) -> tuple:
    """``(problem, choice, cost, exact)``: the recorded graph with its candidates and tables, the index chosen
    per variable, the model's total and whether it is the exact minimum (nothing is set)."""
    problem = _Problem(_record(cell, args, kwargs, full_batch), world_size())
    unary, pairwise = problem.tables()
    choice, exact = minimise([len(c) for c in problem.cands], unary, pairwise)
    cost = sum(float(u[c]) for u, c in zip(unary, choice))
    cost += sum(float(t[choice[a], choice[b]]) for (a, b), t in pairwise.items())
    return problem, choice, cost, exact


def _cell_primitives(cell) -> set:
    """The ids of the primitives the network's cells hold: the ones a strategy can be set on. A primitive
    shared by functions (``ops.relu``'s, a bprop's) serves other calls too, with other shapes."""
    return {id(v) for _, c in cell.cells_and_names() for v in vars(c).values() if isinstance(v, Primitive)}


def _apply(problem: _Problem, choice: list, cost: float, exact: bool, owned: set) -> SearchResult:
    strategies, layouts = [], {}
    for v, calls in enumerate(problem.var_calls):
        if problem.params[v] is not None or not calls:
            continue
        prim, cand = calls[0].prim, problem.cands[v][choice[v]]
        searchable = v in problem.groups.values() and cand.strategy is not None and id(prim) in owned
        if searchable and getattr(prim, "in_strategy", None) is None:
            prim.shard(tuple(tuple(int(c) for c in s) for s in cand.strategy))
            prim.__dict__["_searched_strategy"] = True
            strategies.append((prim, prim.in_strategy))
    for v, param in enumerate(problem.params):
        if param is None:
            continue
        lay = problem.cands[v][choice[v]]
        layouts[param.name] = lay
        if not lay.is_replicated and not sharding.is_sharded(param):
            sharding.split_parameter(param, lay)
    return SearchResult(strategies, layouts, cost, exact)
