"""Sharding rules (semi-auto parallel, ``Primitive.shard``) of the operators. See ``opforge/dispatch/sharding.py``.

A rule is ``rule(prim, args, layouts, strategy) -> ShardPlan``: ``args`` are the global arguments (bound by
position), ``layouts`` each tensor argument's current ``TensorLayout`` (None for the others), ``strategy``
the primitive's ``in_strategy`` (MindSpore's: one tuple of split counts per tensor input) or None, in
which case the rule follows the layouts its inputs already have (sharding propagation).
"""

from __future__ import annotations

import itertools
import math

from opforge.communication.management import (
    GlobalComm,
    allgather_object,
    create_group,
    get_group_size,
    get_rank,
)
from opforge.dispatch.sharding import (
    ShardPlan,
    TensorLayout,
    axis_ranks,
    cloned_layout,
    coords,
    count_collective,
    layout_of,
    mesh_with_repeat,
    optimizer_updates,
    pending_of,
    read_cost,
    replicated,
    set_collective_ops,
    sharding_rules,
    strategy_layout,
)
from opforge.dtype import float_type
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as A
from opforge.primitives import comm_ops as K
from opforge.primitives import math_ext_ops as X
from opforge.primitives import math_ops as P
from opforge.primitives import nn_ops as N
from opforge.tensor import Parameter, Tensor

__all__ = [
    "along_axes_rule",
    "gather_along",
    "check_strategy",
    "elementwise_rule",
    "first_mesh",
    "on_mesh",
    "relayout",
    "shape_of",
    "strategy_layout",
    "strategy_or",
    "unsplit",
    "world_size",
]

# ---------------------------------------------------------------------------------------------
# The collectives the interpreter redistributes with

_groups: dict = {}  # tuple of world ranks -> group name
_prims: dict = {}  # (kind, group, op) -> primitive


def world_size() -> int:
    return get_group_size()


def _world():
    return get_rank(), get_group_size()


def _group(ranks: tuple) -> str:
    name = _groups.get(ranks)
    if name is None:
        if list(ranks) == list(range(get_group_size())):
            name = GlobalComm.WORLD_COMM_GROUP
        else:
            name = "opforge_shard_" + "_".join(map(str, ranks))
            create_group(name, list(ranks))
        _groups[ranks] = name
    return name


_MAKERS = {
    "gather": lambda group, op: K.AllGather(group=group),
    "reduce": lambda group, op: K.AllReduce(op=op, group=group),
    "scatter": lambda group, op: K.ReduceScatter(op=op, group=group),
    "alltoall": lambda group, dims: K.AlltoAll(get_group_size(group), dims[0], dims[1], group),
}


def _prim(kind, group, op=None):
    key = (kind, group, op)
    p = _prims.get(key)
    if p is None:
        p = _MAKERS[kind](group, op)
        _prims[key] = p
    return p


_transpose = A.Transpose()
_slice = A.Slice()


def _swap(x, dim):
    perm = list(range(len(x.shape)))
    perm[0], perm[dim] = perm[dim], perm[0]
    return _transpose(x, tuple(perm))


def _all_gather(x, dim, group):
    if dim == 0:
        return _prim("gather", group)(x)
    return _swap(_prim("gather", group)(_swap(x, dim)), dim)


def gather_along(x, dim, mesh: tuple, axis: int):
    """``x``'s blocks along ``dim`` of the ranks on mesh axis ``axis`` with this rank, concatenated in their
    order (an AllGather over that axis)."""
    count_collective("AllGather", x, mesh[axis], mesh[axis])
    return _all_gather(x, dim, _group(tuple(axis_ranks(get_rank(), mesh, axis))))


def _all_reduce(x, op, group):
    return _prim("reduce", group, op)(x)


def _reduce_scatter(x, dim, op, group):
    if dim == 0:
        return _prim("scatter", group, op)(x)
    return _swap(_prim("scatter", group, op)(_swap(x, dim)), dim)


def _broadcast(x, root, group):
    return K.Broadcast(root, group)((x,))[0]


def _all_to_all(x, split_dim, concat_dim, group):
    return _prim("alltoall", group, (split_dim, concat_dim))(x)


def _block(x, dim, index, parts):
    shape = x.shape
    size = shape[dim] // parts
    begin = tuple(index * size if i == dim else 0 for i in range(len(shape)))
    sizes = tuple(size if i == dim else s for i, s in enumerate(shape))
    return _slice(x, begin, sizes)


def _exchange(values: tuple, ranks=None) -> list:
    # Outside operators: a trace (jit) must not record the check, and it reads the values on the host.
    group = GlobalComm.WORLD_COMM_GROUP if ranks is None else _group(tuple(ranks))
    return [tuple(v) for v in allgather_object(tuple(values), group)]


_assign = A.Assign()
_reshape, _concat = A.Reshape(), A.Concat(0)


def _pack(blocks) -> object:
    """The blocks flattened and concatenated: one buffer for one collective."""
    return _concat(tuple(_reshape(b, (-1,)) for b in blocks))


def _unpack(flat, shapes) -> list:
    """``_pack``'s blocks back, by their shapes."""
    out, offset = [], 0
    for shape in shapes:
        n = math.prod(shape)
        out.append(_reshape(_slice(flat, (offset,), (n,)), tuple(shape)))
        offset += n
    return out


set_collective_ops(
    all_gather=_all_gather,
    all_reduce=_all_reduce,
    reduce_scatter=_reduce_scatter,
    all_to_all=_all_to_all,
    broadcast=_broadcast,
    slice=_block,
    world=_world,
    group=_group,
    exchange=_exchange,
    assign=lambda p, v: _assign(p, v),
    pack=_pack,
    unpack=_unpack,
)


# ---------------------------------------------------------------------------------------------
# Helpers


def shape_of(a) -> tuple:
    return tuple(a._meta[1])


def _tensor_positions(args, layouts) -> list:
    return [i for i, lay in enumerate(layouts) if isinstance(lay, TensorLayout)]


def check_strategy(prim, strategy, ranks: list) -> None:
    if len(strategy) != len(ranks):
        raise ValueError(
            f"For '{prim.name}', the strategy must have one tuple per tensor input ({len(ranks)}), but got "
            f"{len(strategy)}: {strategy}."
        )
    for k, (s, r) in enumerate(zip(strategy, ranks)):
        if len(s) != r:
            raise ValueError(
                f"For '{prim.name}', the strategy of input {k} must have one entry per dim ({r}), but got {s}."
            )


def first_mesh(layouts) -> tuple:
    for lay in layouts:
        if isinstance(lay, TensorLayout) and not lay.is_replicated:
            return lay.mesh
    return (world_size(),)


def on_mesh(lay: TensorLayout, mesh: tuple) -> TensorLayout:
    """``lay`` when it is on ``mesh``, else replicated there (redistribution goes through the whole tensor)."""
    if lay.mesh == mesh:
        return lay
    return replicated(len(lay.dims), mesh)


def _drop_repeats(dims: list) -> tuple:
    """A mesh axis splits at most one dim: later uses are dropped."""
    seen, out = set(), []
    for d in dims:
        if d is not None and d in seen:
            out.append(None)
            continue
        if d is not None:
            seen.add(d)
        out.append(d)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Elementwise operators (broadcasting): the output follows the inputs, or the strategy


def elementwise_rule(nout: int = 1):
    def rule(prim, args, layouts, strategy):
        pos = _tensor_positions(args, layouts)
        shapes = [shape_of(args[i]) for i in pos]
        rank = max((len(s) for s in shapes), default=0)
        out_shape = [1] * rank
        for s in shapes:
            for j, d in enumerate(s):
                k = rank - len(s) + j
                out_shape[k] = max(out_shape[k], d)
        if strategy is not None:
            check_strategy(prim, strategy, [len(s) for s in shapes])
            axes = [1] * rank
            for s, st in zip(shapes, strategy):
                for j, c in enumerate(st):
                    k = rank - len(s) + j
                    if c > 1:
                        if axes[k] not in (1, c):
                            raise ValueError(
                                f"For '{prim.name}', the strategies {strategy} split dim {k} of the output both "
                                f"{axes[k]} and {c} ways; inputs must agree."
                            )
                        axes[k] = c
            mesh = mesh_with_repeat(world_size(), axes, prim.name)
            out_dims = [k + 1 for k in range(rank)]
            lay_out = TensorLayout.make(mesh, out_dims)
            return _elementwise_plan(prim, args, pos, shapes, out_shape, lay_out, nout)
        # propagation: the output follows one input's layout (the others' splits filling its whole dims);
        # of those, the one moving the fewest elements, then splitting most; ties go to the first input
        orders = [pos[first:] + pos[:first] for first in range(max(len(pos), 1))]
        outs = [_follow_inputs(order, [shapes[pos.index(i)] for i in order], layouts, out_shape) for order in orders]
        plans = [(_elementwise_plan(prim, args, pos, shapes, out_shape, lay, nout), _splits(lay.dims)) for lay in outs]
        return _cheapest(plans, args, tuple(out_shape))

    rule.elementwise = True  # set_algo_parameters(elementwise_op_strategy_follow=True) reads it
    return rule


def _follow_inputs(order, shapes, layouts, out_shape) -> TensorLayout:
    """The output layout taking each dim's split from the first input in ``order`` that splits it."""
    rank = len(out_shape)
    mesh = first_mesh([layouts[i] for i in order])
    out_dims = [None] * rank
    for i, s in zip(order, shapes):
        lay = on_mesh(layouts[i], mesh)
        for j, d in enumerate(lay.dims):
            k = rank - len(s) + j
            if d is not None and s[j] == out_shape[k] and out_dims[k] is None:
                out_dims[k] = d
    return TensorLayout(mesh, _drop_repeats(out_dims))


def _elementwise_plan(prim, args, pos, shapes, out_shape, lay_out: TensorLayout, nout: int) -> ShardPlan:
    """Each input laid out as the output on the dims it does not broadcast; pending partial sums read by a
    linear operator kept pending (``_keep_partial``)."""
    rank = len(out_shape)
    inputs = [None] * len(args)
    for i, s in zip(pos, shapes):
        dims = [
            lay_out.dims[rank - len(s) + j] if s[j] == out_shape[rank - len(s) + j] else None for j in range(len(s))
        ]
        inputs[i] = lay_out.with_dims(dims)
    return _keep_partial(prim, args, ShardPlan(inputs=inputs, outputs=[lay_out] * nout))


# Linear operators -> the inputs that may hold pending partial sums: the sum of the ranks' results is the
# result of the sum (a scale, a negation, a float cast, the sum of two partial sums of one reduction, a
# change of shape: a bias's gradient, a row-parallel MatMul's output squeezed, reach their reader pending)
_LINEAR = {P.Neg: (0,), A.Cast: (0,), P.Mul: (0, 1), P.RealDiv: (0,), P.Div: (0,), P.Add: (0, 1), P.Sub: (0, 1)}
_LINEAR.update({A.Squeeze: (0,), A.ExpandDims: (0,), A.Transpose: (0,), A.Reshape: (0,)})


def _keep_partial(prim, args, plan: ShardPlan) -> ShardPlan:
    """A linear operator reading pending partial sums (or means) of one reduction, each in the layout it
    has, keeps them pending: its output holds the partial results of the same reduction, completed (a
    ReduceScatter or an AllReduce) once by the reader that needs them. An Add or Sub of a partial sum and a
    whole operand counts the whole one once per reduction: only the ranks at coordinate 0 of the pending
    axes add it (the others add zero); a partial mean adds it on every rank (the mean of ``p_i + r`` is
    ``mean(p) + r``). Otherwise ``plan`` is unchanged (the inputs completed as they are read)."""
    slots = _LINEAR.get(type(prim))
    partial = [i for i, a in enumerate(args) if pending_of(a) is not None]
    if slots is None or not partial or any(i not in slots for i in partial):
        return plan
    how, axes = pending = pending_of(args[partial[0]])
    out = plan.outputs[0]
    if (
        how not in ("sum", "mean")
        or any(pending_of(args[i]) != pending or plan.inputs[i] != layout_of(args[i]) for i in partial)
        or set(out.dims) & set(axes)  # the output split over a pending axis: a ReduceScatter first
        or (type(prim) is P.Mul and len(partial) > 1)  # a product of two partial sums is not linear
        or (type(prim) is A.Cast and args[1] not in float_type)
        or (type(prim) in (P.RealDiv, P.Div) and args[0].dtype not in float_type)  # an integer quotient rounds
    ):
        return plan
    whole = [i for i in slots if i not in partial and type(prim) in (P.Add, P.Sub)]
    if whole:
        other = args[whole[0]]
        if isinstance(other, bool) or not isinstance(other, (Tensor, int, float)):
            return plan
        here = coords(get_rank(), out.mesh)
        if how == "sum" and any(here[a] for a in axes):
            plan.local = _with_zero(prim, whole[0])
    plan.keep_partial = set(partial)
    plan.partial = {0: pending}
    return plan


def _with_zero(prim, k: int):
    """``prim``'s local call with argument ``k`` replaced by zeros (of its block's shape and dtype)."""

    def local(*args):
        zero = _zeros_like(args[k]) if isinstance(args[k], Tensor) else type(args[k])(0)
        return prim(*(zero if i == k else a for i, a in enumerate(args)))

    return local


_ELEMENTWISE = (
    P.Neg, P.Exp, P.Log, P.Sin, P.Cos, P.Log1p, P.Expm1, P.Reciprocal, P.Rsqrt, P.Square, P.Sqrt,
    P.Abs, P.Erf, P.Floor, P.Ceil, P.Round, P.Sign, P.IsNan, P.IsFinite, P.LogicalNot,
    P.Add, P.Sub, P.Mul, P.RealDiv, P.Maximum, P.Minimum, P.Equal, P.Pow, P.Div, P.FloorDiv,
    P.Greater, P.GreaterEqual, P.Less, P.LessEqual, P.NotEqual, P.LogicalAnd, P.LogicalOr,
    A.Cast, A.ZerosLike, A.OnesLike, A.Select,
    N.ReLU, N.Elu, N.Sigmoid, N.Tanh, N.GeLU, N.Softplus, N.HSigmoid, N.HSwish, N.ReLU6, G.ReLU6Grad,
    G.ReluGrad, G.EluGrad, G.SigmoidGrad, G.TanhGrad, G.SoftplusGrad, G.HSigmoidGrad, G.HSwishGrad, G.GeLUGrad,
    G.SqrtGrad, G.AbsGrad, G.DropoutGrad,
    N.SeLU, N.CeLU, N.Softsign, N.HShrink, N.SoftShrink, N.Mish, P.Atan2, P.Mod, P.FloorMod, P.Conj,
)  # fmt: skip
sharding_rules.register(*_ELEMENTWISE, *(getattr(X, name) for name in X.__all__))(elementwise_rule())
sharding_rules.register(N.Dropout)(elementwise_rule(nout=2))


# ---------------------------------------------------------------------------------------------
# Matrix products


def _matmul_axes(strategy, prim, ta: bool, tb: bool, batch: int):
    """(mesh sizes of batch..., m, k, n) from a MatMul/BatchMatMul strategy in the inputs' stored order."""
    sx, sw = (tuple(s) for s in strategy)
    xm, xk = (sx[-1], sx[-2]) if ta else (sx[-2], sx[-1])
    wk, wn = (sw[-1], sw[-2]) if tb else (sw[-2], sw[-1])
    if xk != wk:
        raise ValueError(
            f"For '{prim.name}', the strategy splits the contracted dim of 'x' {xk} ways and of 'y' {wk} ways; "
            f"they must be equal, but got {strategy}."
        )
    if sx[:-2] != sw[:-2]:
        raise ValueError(f"For '{prim.name}', the batch dims of the strategy must agree, but got {strategy}.")
    return (*sx[:batch], xm, xk, wn)


def _matmul_rule(prim, args, layouts, strategy):
    x, w = args[0], args[1]
    ta = bool(getattr(prim, "transpose_a", False) or getattr(prim, "transpose_x1", False))
    tb = bool(getattr(prim, "transpose_b", False) or getattr(prim, "transpose_x2", False))
    rx, rw = len(shape_of(x)), len(shape_of(w))
    if rx != rw or rx < 2:
        return None  # broadcasting batch dims: replicated
    batch = rx - 2
    if strategy is None:
        return _cheapest_matmul_plan(args, layouts, first_mesh(layouts[:2]), ta, tb, batch)
    check_strategy(prim, strategy, [rx, rw])
    if prim.attrs.get("enable_nd_tp") and batch == 0:
        return _nd_tp_plan(prim, strategy, ta, tb)
    sizes = _matmul_axes(strategy, prim, ta, tb, batch)
    mesh = mesh_with_repeat(world_size(), sizes, prim.name)
    axes = list(range(1, len(sizes) + 1))
    return _matmul_plan(args, TensorLayout.make, mesh, axes[:batch], axes[batch:], ta, tb)


def _matrix_splits(split, transposed: bool) -> tuple:
    """A 2-D strategy entry as (split of the rows, split of the columns) of the matrix it multiplies as."""
    return (split[1], split[0]) if transposed else (split[0], split[1])


def _nd_tp_plan(prim, strategy, ta: bool, tb: bool) -> ShardPlan:
    """MindSpore's 2D tensor parallel (``add_prim_attr("enable_nd_tp", True)``): y's k split ``a`` ways and n
    ``b`` ways, x's k split over both (``a * b`` blocks, a-major) and its m ``c`` ways. Each rank all-gathers its
    x block over the ``b`` ranks (x's k block of y's), multiplies: partial sums over the ``a`` ranks, left
    pending for the reader (a ReduceScatter or an AllReduce); the output's n split ``b`` ways. (MindSpore's
    output splits n over (b, a), its ReduceScatter's blocks, a Layout placement that opforge's split-count
    layouts do not express: a reader splitting n further re-cuts the blocks.)"""
    (xm, xk), (wk, wn) = _matrix_splits(strategy[0], ta), _matrix_splits(strategy[1], tb)
    if xk != wk * wn:
        raise ValueError(
            f"For '{prim.name}', with enable_nd_tp the strategy must split the contracted dim of 'x' over the "
            f"devices splitting both dims of 'y' ({wk} x {wn} = {wk * wn}), but got {strategy}."
        )
    mesh = mesh_with_repeat(world_size(), (xm, wk, wn), prim.name)  # (repeat, c, a, b)
    x_mesh = (*mesh[:2], wk * wn)  # the same ranks, a and b as one axis: x's k blocks a-major
    x_lay = TensorLayout.make(x_mesh, [2, 1] if ta else [1, 2])
    w_lay = TensorLayout.make(mesh, [3, 2] if tb else [2, 3])
    plan = ShardPlan(inputs=[x_lay, w_lay], outputs=[TensorLayout.make(mesh, [1, 3])])
    if wk > 1:  # the a axis (mesh axis 2) as the output layout numbers it (size-1 axes dropped)
        a_axis = TensorLayout.make(mesh, [2]).dims[0]
        plan.partial[0] = ("sum", (a_axis,))

    def local(x, w):
        return prim(gather_along(x, 0 if ta else 1, mesh, 3) if wn > 1 else x, w)

    plan.local = local
    return plan


def _matmul_plan(args, canon, mesh, bdims, mkn, ta: bool, tb: bool) -> ShardPlan:
    """The plan splitting the batch dims over ``bdims`` and m, k, n over the mesh axes ``mkn``."""
    m, k, n = mkn
    x_dims = [*bdims, *((k, m) if ta else (m, k))]
    w_dims = [*bdims, *((n, k) if tb else (k, n))]
    lay_x, lay_w, lay_o = canon(mesh, x_dims), canon(mesh, w_dims), canon(mesh, [*bdims, m, n])
    plan = ShardPlan(inputs=[lay_x, lay_w] + [None] * (len(args) - 2), outputs=[lay_o])
    k_axis = canon(mesh, [k]).dims[0]
    if k_axis is not None:
        plan.partial[0] = ("sum", (k_axis,))
    return plan


def _cheapest_matmul_plan(args, layouts, mesh, ta: bool, tb: bool, batch: int) -> ShardPlan:
    """Propagation: of the splits the inputs' layouts offer (m from x, n from y, the contracted k from
    either; one mesh axis splits one of them), the plan that moves the fewest elements (``_plan_cost``),
    then the one splitting most; ties go to x's layout (m, then x's k, then n)."""
    lx, lw = on_mesh(layouts[0], mesh), on_mesh(layouts[1], mesh)
    xm, xk = (lx.dims[-1], lx.dims[-2]) if ta else (lx.dims[-2], lx.dims[-1])
    wk, wn = (lw.dims[-1], lw.dims[-2]) if tb else (lw.dims[-2], lw.dims[-1])
    bdims = list(lx.dims[:batch])
    taken = {d for d in bdims if d is not None}
    sx, sw = shape_of(args[0]), shape_of(args[1])
    out_shape = (*sx[:batch], sx[-1] if ta else sx[-2], sw[-2] if tb else sw[-1])
    ks = (xk, wk, None) if xk is not None else (wk, None)
    choices = [
        mkn
        for mkn in itertools.product(dict.fromkeys((xm, None)), dict.fromkeys(ks), dict.fromkeys((wn, None)))
        if _distinct_axes(mkn, taken)
    ]
    plans = [(_matmul_plan(args, TensorLayout, mesh, bdims, mkn, ta, tb), _splits(mkn)) for mkn in choices]
    return _cheapest(plans, args, out_shape)


def _splits(axes) -> int:
    return sum(d is not None for d in axes)


def _distinct_axes(axes, taken: set) -> bool:
    """Whether no mesh axis in ``axes`` repeats or is in ``taken`` (a mesh axis splits one dim)."""
    used = [d for d in axes if d is not None]
    return len(set(used)) == len(used) and not taken.intersection(used)


def _cheapest(candidates: list, args, out_shape: tuple) -> ShardPlan:
    """Of ``(plan, dims it splits)`` candidates, the plan moving the fewest elements (``_plan_cost``), then
    the one splitting most; ties go to the first."""
    return min(candidates, key=lambda c: (_plan_cost(c[0], args, out_shape), -c[1]))[0]


def _plan_cost(plan: ShardPlan, args, out_shape: tuple) -> float:
    """The elements a rank receives to run ``plan``: its inputs given the plan's layouts (``read_cost``),
    and its partial output completed (at least a ReduceScatter; its reader decides)."""
    cost = sum(
        read_cost(args[i], want)
        for i, want in enumerate(plan.inputs)
        if want is not None and i not in plan.keep_partial  # kept partial: read as it is
    )
    for k, (_, axes) in plan.partial.items():
        out = plan.outputs[k]
        block = math.prod(out.local_shape(out_shape))
        cost += sum(block * (out.mesh[a] - 1) / out.mesh[a] for a in axes)
    return cost


sharding_rules.register(P.MatMul, P.BatchMatMul)(_matmul_rule)


@sharding_rules.register(N.BiasAdd)
def _bias_add_rule(prim, args, layouts, strategy):
    x = args[0]
    rank = len(shape_of(x))
    channel = 1 if rank > 1 else 0
    if strategy is not None:
        check_strategy(prim, strategy, [rank, 1])
        if strategy[1][0] != strategy[0][channel]:
            raise ValueError(
                f"For '{prim.name}', the strategy must split 'bias' as the channel of 'input_x', but got {strategy}."
            )
        mesh = mesh_with_repeat(world_size(), strategy[0], prim.name)
        lay = TensorLayout.make(mesh, list(range(1, rank + 1)))
    else:
        mesh = first_mesh(layouts[:2])
        lay = on_mesh(layouts[0], mesh)
        if lay.dims[channel] is None and layouts[1].dims[0] is not None and layouts[1].mesh == mesh:
            lay = lay.with_dims([layouts[1].dims[0] if i == channel else d for i, d in enumerate(lay.dims)])
            lay = lay.with_dims(_drop_repeats(list(lay.dims)))
    return ShardPlan(inputs=[lay, lay.with_dims([lay.dims[channel]])], outputs=[lay])


# ---------------------------------------------------------------------------------------------
# Reductions: the split reduced dims leave partial results


def _norm_axes(axis, rank: int) -> tuple:
    if axis is None or axis == () or axis == []:
        return tuple(range(rank))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % rank if rank else 0 for a in axes)


_REDUCE_KIND = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod"}


@sharding_rules.register(P.ReduceSum, P.ReduceMean, P.ReduceMax, P.ReduceMin, P.ReduceProd)
def _reduce_rule(prim, args, layouts, strategy):
    x = args[0]
    rank = len(shape_of(x))
    if strategy is not None:
        check_strategy(prim, strategy[:1], [rank])
        mesh = mesh_with_repeat(world_size(), strategy[0], prim.name)
        lay = TensorLayout.make(mesh, list(range(1, rank + 1)))
    else:
        lay = layouts[0]
    axes = _norm_axes(args[1] if len(args) > 1 else (), rank)
    split = tuple(lay.dims[a] for a in axes if lay.dims[a] is not None)
    keep = (
        [None if i in axes else d for i, d in enumerate(lay.dims)]
        if prim.keep_dims
        else [d for i, d in enumerate(lay.dims) if i not in axes]
    )
    plan = ShardPlan(inputs=[lay] + [None] * (len(args) - 1), outputs=[TensorLayout(lay.mesh, tuple(keep))])
    if split:
        plan.partial[0] = (_REDUCE_KIND[prim.name], split)
    return plan


# ---------------------------------------------------------------------------------------------
# Operators along an axis: that axis whole, the others follow


def unsplit(lay: TensorLayout, axes) -> TensorLayout:
    return lay.with_dims([None if i in axes else d for i, d in enumerate(lay.dims)])


def strategy_or(prim, strategy, layouts, rank):
    if strategy is None:
        return layouts[0]
    check_strategy(prim, strategy[:1], [rank])
    return strategy_layout(strategy[0], prim.name)


_relayouts: dict = {}


def relayout(x: Tensor, strategy: tuple, name: str) -> Tensor:
    """``x`` laid out as ``strategy`` says (a split count per dim): a Cast to its own dtype carrying that
    strategy, an elementwise operator whose rule lays its input, and so its output, out so; differentiable, so
    the backward pass moves the gradient back. ``name`` is the caller, for errors."""
    if len(strategy) != len(shape_of(x)):
        raise ValueError(
            f"For '{name}', a strategy must have one split count per dim of its tensor ({len(shape_of(x))}), but got "
            f"{strategy} for a tensor of shape {list(shape_of(x))}."
        )
    cast = _relayouts.get(strategy)
    if cast is None:
        cast = _relayouts[strategy] = A.Cast().shard((strategy,))
    return cast(x, x.dtype)


def along_axes_rule(axes_of, nout: int = 1):
    """The rule of an operator computing along some axes of its first input (``axes_of(prim, args, rank)``):
    those axes whole, the others split as the strategy or the input says; every other input of the first's
    rank laid out alike (a gradient's ``dy``, a pooling gradient's pooled output), and each output in that
    layout (``nout`` of them)."""

    def rule(prim, args, layouts, strategy):
        rank = len(shape_of(args[0]))
        lay = unsplit(strategy_or(prim, strategy, layouts, rank), axes_of(prim, args, rank))
        inputs = [lay if isinstance(a, Tensor) and len(shape_of(a)) == rank else None for a in args]
        return ShardPlan(inputs=inputs, outputs=[lay] * nout)

    return rule


def _axes(axis, rank: int) -> list:
    """``axis`` (an int, a sequence, or None/() for every axis) as non-negative axes."""
    if axis is None or axis == () or axis == []:
        return list(range(rank))
    return [a % rank for a in ((axis,) if isinstance(axis, int) else axis)]


def _attr_axes(prim, args, rank):
    return _axes(prim.axis, rank)


def _arg_axes(prim, args, rank):
    return _axes(args[1], rank)


def _last_axis(prim, args, rank):
    return [rank - 1]


sharding_rules.register(N.Softmax, N.LogSoftmax, A.ReverseV2)(along_axes_rule(_attr_axes))
sharding_rules.register(P.Cummax, P.Cummin, A.Sort)(along_axes_rule(_attr_axes, nout=2))
sharding_rules.register(P.CumSum, P.CumProd)(along_axes_rule(_arg_axes))
sharding_rules.register(A.TopK)(along_axes_rule(_last_axis, nout=2))


@sharding_rules.register(A.Split)
def _split_rule(prim, args, layouts, strategy):
    return along_axes_rule(_attr_axes, nout=prim.output_num)(prim, args, layouts, strategy)


@sharding_rules.register(A.Unstack)
def _unstack_rule(prim, args, layouts, strategy):
    """The unstacked axis whole; each output (one per index of it) the others' layout."""
    shape = shape_of(args[0])
    axis = prim.axis % len(shape)
    lay = unsplit(strategy_or(prim, strategy, layouts, len(shape)), [axis])
    out = lay.with_dims([d for i, d in enumerate(lay.dims) if i != axis])
    return ShardPlan(inputs=[lay], outputs=[out] * shape[axis])


@sharding_rules.register(A.Argmax, A.Argmin, P.ReduceAll, P.ReduceAny)
def _reduce_whole_rule(prim, args, layouts, strategy):
    """An index or a logical reduction along axes read whole (their results do not combine across blocks as
    sums do): the output drops those axes (or keeps them at size 1)."""
    rank = len(shape_of(args[0]))
    axes = _axes(prim.axis, rank) if hasattr(prim, "axis") else _axes(args[1] if len(args) > 1 else (), rank)
    lay = unsplit(strategy_or(prim, strategy, layouts, rank), axes)
    keep = getattr(prim, "keep_dims", False)
    out = lay.with_dims([None if i in axes else d for i, d in enumerate(lay.dims) if keep or i not in axes])
    return ShardPlan(inputs=[lay] + [None] * (len(args) - 1), outputs=[out])


@sharding_rules.register(A.OneHot)
def _one_hot_rule(prim, args, layouts, strategy):
    """MindSpore's strategy is the output's (``((dp, mp), (), ())`` for indices of rank 1: the depth axis too);
    one of the indices' rank is taken as theirs. The depth axis split, each rank encodes the indices in its
    range of classes (shifted by its offset; the others fall outside and take ``off_value``)."""
    rank = len(shape_of(args[0]))
    axis = prim.axis % (rank + 1)
    if strategy is not None and len(strategy[0]) == rank + 1:
        check_strategy(prim, strategy[:1], [rank + 1])
        out = strategy_layout(strategy[0], prim.name)
        lay = out.with_dims([d for i, d in enumerate(out.dims) if i != axis])
    else:
        lay = strategy_or(prim, strategy, layouts, rank)
        dims = list(lay.dims)
        dims.insert(axis, None)
        out = lay.with_dims(dims)
    values = [replicated(len(shape_of(a)), lay.mesh) if isinstance(a, Tensor) else None for a in args[2:]]
    plan = ShardPlan(inputs=[lay, None, *values], outputs=[out])
    if strategy is not None and len(strategy[0]) == rank + 1:
        plan.strategy_of = [("output", out), *(("", v) for v in values)]
    if out.dims[axis] is not None:
        if not args[1] or args[1] % out.splits(axis):
            raise ValueError(
                f"For '{prim.name}', the strategy {strategy} splits the depth axis {out.splits(axis)} ways, but the "
                f"depth {args[1]} does not divide so."
            )
        depth = args[1] // out.splits(axis)
        offset = coords(get_rank(), out.mesh)[out.dims[axis]] * depth
        plan.local = lambda indices, _, on, off: prim(_sub(indices, offset), depth, on, off)
    return plan


@sharding_rules.register(A.Tile)
def _tile_rule(prim, args, layouts, strategy):
    """The dims tiled more than once whole (a tiled block is not a block of the tiled tensor); the others
    split, each rank tiling its block."""
    rank, multiples = len(shape_of(args[0])), tuple(args[1])
    lead = len(multiples) - rank
    lay = strategy_or(prim, strategy, layouts, rank)
    lay = unsplit(lay, [i for i in range(rank) if multiples[lead + i] != 1])
    return ShardPlan(inputs=[lay, None], outputs=[lay.with_dims([None] * lead + list(lay.dims))])


@sharding_rules.register(N.L2Loss)
def _l2_loss_rule(prim, args, layouts, strategy):
    """``sum(x ** 2) / 2`` of each block: partial sums over the axes that split x."""
    lay = strategy_or(prim, strategy, layouts, len(shape_of(args[0])))
    plan = ShardPlan(inputs=[lay], outputs=[lay.with_dims([])])
    split = tuple(d for d in lay.dims if d is not None)
    if split:
        plan.partial[0] = ("sum", split)
    return plan


@sharding_rules.register(N.LayerNorm)
def _layer_norm_rule(prim, args, layouts, strategy):
    rank = len(shape_of(args[0]))
    begin = prim.begin_norm_axis % rank
    lay = unsplit(strategy_or(prim, strategy, layouts, rank), range(begin, rank))
    params = [replicated(len(shape_of(a)), lay.mesh) for a in args[1:3]]
    return ShardPlan(inputs=[lay, *params], outputs=[lay, lay, lay])


@sharding_rules.register(G.LayerNormGrad)
def _layer_norm_grad_rule(prim, args, layouts, strategy):
    """LayerNorm's backward by the rows its forward split: dx in x's layout; dgamma and dbeta, sums over the
    rows, partial sums over the axes that split them."""
    rank = len(shape_of(args[0]))
    begin = min(prim.begin_norm_axis % rank, prim.begin_params_axis % rank)
    lay = unsplit(strategy_or(prim, strategy, layouts, rank), range(begin, rank))
    stat = lay.with_dims([d if i < prim.begin_norm_axis % rank else None for i, d in enumerate(lay.dims)])
    params = replicated(len(shape_of(args[4])), lay.mesh)
    plan = ShardPlan(inputs=[lay, lay, stat, stat, params], outputs=[lay, params, params])
    axes = tuple(sorted({d for d in lay.dims if d is not None}))
    if axes:
        plan.partial = {1: ("sum", axes), 2: ("sum", axes)}
    return plan


_broadcasts: dict = {}


@sharding_rules.register(A.BroadcastTo)
def _broadcast_to_rule(prim, args, layouts, strategy):
    """The output split as the input on the dims it does not broadcast; each rank broadcasts its block to its
    block of the output."""
    x_shape = shape_of(args[0])
    out = [x_shape[i - (len(prim.shape) - len(x_shape))] if d == -1 else d for i, d in enumerate(prim.shape)]
    lead = len(out) - len(x_shape)
    have = strategy_or(prim, strategy, layouts, len(x_shape))
    lay = have.with_dims([d if x_shape[i] == out[lead + i] else None for i, d in enumerate(have.dims)])
    dims = [None] * lead + list(lay.dims)
    local = tuple(s // lay.mesh[d] if d is not None else s for s, d in zip(out, dims))
    key = local
    if key not in _broadcasts:
        _broadcasts[key] = A.BroadcastTo(local)
    return ShardPlan(inputs=[lay], outputs=[lay.with_dims(dims)], local=_broadcasts[key])


@sharding_rules.register(N.SoftmaxCrossEntropyWithLogits)
def _softmax_ce_rule(prim, args, layouts, strategy):
    lay = unsplit(strategy_or(prim, strategy, layouts, 2), [1])
    return ShardPlan(inputs=[lay, lay], outputs=[lay.with_dims([lay.dims[0]]), lay])


@sharding_rules.register(N.SparseSoftmaxCrossEntropyWithLogits)
def _sparse_ce_rule(prim, args, layouts, strategy):
    lay = unsplit(strategy_or(prim, strategy, layouts, 2), [1])
    labels = lay.with_dims([lay.dims[0]])
    if prim.is_grad:  # the gradient of the mean: each block's is divided by the block's size, not the batch's
        plan = ShardPlan(inputs=[lay, labels], outputs=[lay])
        if lay.dims[0] is not None:
            scale = 1.0 / lay.mesh[lay.dims[0]]
            plan.local = lambda logits, y: _mul(prim(logits, y), scale)
        return plan
    plan = ShardPlan(inputs=[lay, labels], outputs=[lay.with_dims([])])
    if lay.dims[0] is not None:  # the mean over equal batch blocks: the mean of the blocks' means
        plan.partial[0] = ("mean", (lay.dims[0],))
    return plan


# ---------------------------------------------------------------------------------------------
# Operators of several tensors (a tuple): alike on every dim they do not join along


def _common_layout(prim, args, layouts, strategy) -> TensorLayout:
    """The layout every tensor of the tuple ``args[0]`` takes: the strategy's (one per tensor, all alike, as
    MindSpore asks) or the first split one's, on its device matrix."""
    shapes = [shape_of(t) for t in args[0]]
    if strategy is not None:
        check_strategy(prim, strategy, [len(s) for s in shapes])
        if len(set(map(tuple, strategy))) > 1:
            raise ValueError(f"For '{prim.name}', every input must have the same strategy, but got {strategy}.")
        return strategy_layout(strategy[0], prim.name)
    mesh = first_mesh(layouts[0])
    split = [lay for lay in layouts[0] if not lay.is_replicated and lay.mesh == mesh]
    return split[0] if split else replicated(len(shapes[0]), mesh)


@sharding_rules.register(A.Concat)
def _concat_rule(prim, args, layouts, strategy):
    lay = unsplit(_common_layout(prim, args, layouts, strategy), [prim.axis % len(shape_of(args[0][0]))])
    return ShardPlan(inputs=[[lay] * len(args[0])], outputs=[lay])


@sharding_rules.register(A.Stack)
def _stack_rule(prim, args, layouts, strategy):
    lay = _common_layout(prim, args, layouts, strategy)
    dims = list(lay.dims)
    dims.insert(prim.axis % (len(dims) + 1), None)
    return ShardPlan(inputs=[[lay] * len(args[0])], outputs=[lay.with_dims(dims)])


@sharding_rules.register(P.AddN)
def _add_n_rule(prim, args, layouts, strategy):
    lay = _common_layout(prim, args, layouts, strategy)
    return ShardPlan(inputs=[[lay] * len(args[0])], outputs=[lay])


# ---------------------------------------------------------------------------------------------
# Slicing and padding: the dims taken whole may be split, each rank slicing its block


def _whole_dims_of_slice(shape, begin, end, strides, prim) -> list:
    """The dims a StridedSlice takes whole (begin 0, end past the dim, stride 1); none when a mask other than
    begin's and end's is set or ``begin`` does not name every dim."""
    if (
        prim.ellipsis_mask
        or prim.new_axis_mask
        or prim.shrink_axis_mask
        or not (len(begin) == len(end) == len(strides) == len(shape))
    ):
        return []
    whole = []
    for i, n in enumerate(shape):
        b = 0 if prim.begin_mask >> i & 1 else begin[i] + (n if begin[i] < 0 else 0)
        e = n if prim.end_mask >> i & 1 else end[i] + (n if end[i] < 0 else 0)
        if strides[i] == 1 and b <= 0 and e >= n:
            whole.append(i)
    return whole


def _slice_layout(prim, strategy, layouts, shape, whole, sizes) -> tuple:
    """The layout splitting only the dims a slice takes ``whole``, and ``sizes`` (its sizes or ends per dim)
    with those dims' block sizes."""
    lay = unsplit(strategy_or(prim, strategy, layouts, len(shape)), [i for i in range(len(shape)) if i not in whole])
    local = tuple(n // lay.splits(i) if lay.dims[i] is not None else z for i, (n, z) in enumerate(zip(shape, sizes)))
    return lay, local


def _whole_in_slice(shape, begin, size) -> list:
    return [i for i, n in enumerate(shape) if begin[i] == 0 and size[i] in (-1, n)]


@sharding_rules.register(A.StridedSlice)
def _strided_slice_rule(prim, args, layouts, strategy):
    shape, (begin, end, strides) = shape_of(args[0]), (tuple(a) for a in args[1:4])
    whole = _whole_dims_of_slice(shape, begin, end, strides, prim)
    lay, local_end = _slice_layout(prim, strategy, layouts, shape, whole, end)
    out = lay if whole else lay.with_dims([None] * len(prim.infer_shape(list(shape), begin, end, strides)))
    return ShardPlan(inputs=[lay, None, None, None], outputs=[out], args={1: begin, 2: local_end, 3: strides})


@sharding_rules.register(A.Slice)
def _slice_rule(prim, args, layouts, strategy):
    shape, begin, size = shape_of(args[0]), tuple(args[1]), tuple(args[2])
    lay, local = _slice_layout(prim, strategy, layouts, shape, _whole_in_slice(shape, begin, size), size)
    return ShardPlan(inputs=[lay, None, None], outputs=[lay], args={2: local})


@sharding_rules.register(G.SliceGrad)
def _slice_grad_rule(prim, args, layouts, strategy):
    """dx: dy placed at ``begin`` in zeros of x's shape; the dims the slice took whole split alike."""
    shape, begin, size = shape_of(args[1]), tuple(args[2]), tuple(args[3])
    lay, local = _slice_layout(prim, strategy, layouts, shape, _whole_in_slice(shape, begin, size), size)
    return ShardPlan(inputs=[lay, lay, None, None], outputs=[lay], args={3: local})


@sharding_rules.register(G.StridedSliceGrad)
def _strided_slice_grad_rule(prim, args, layouts, strategy):
    """dx: dy placed in zeros of x's shape (``shapex``); the dims the slice took whole split alike."""
    shape, (begin, end, strides) = tuple(args[1]), (tuple(a) for a in args[2:5])
    lay, local_end = _slice_layout(
        prim, strategy, layouts, shape, _whole_dims_of_slice(shape, begin, end, strides, prim), end
    )
    return ShardPlan(
        inputs=[lay, None, None, None, None], outputs=[lay], args={1: lay.local_shape(shape), 3: local_end}
    )


@sharding_rules.register(A.Pad)
def _pad_rule(prim, args, layouts, strategy):
    rank = len(shape_of(args[0]))
    padded = [i for i, pair in enumerate(prim.paddings) if any(pair)]
    lay = unsplit(strategy_or(prim, strategy, layouts, rank), padded)
    return ShardPlan(inputs=[lay], outputs=[lay])


# ---------------------------------------------------------------------------------------------
# Shape operators


@sharding_rules.register(A.Transpose)
def _transpose_rule(prim, args, layouts, strategy):
    lay = strategy_or(prim, strategy, layouts, len(shape_of(args[0])))
    perm = tuple(args[1])
    return _keep_partial(
        prim, args, ShardPlan(inputs=[lay, None], outputs=[lay.with_dims([lay.dims[p] for p in perm])])
    )


@sharding_rules.register(A.ExpandDims)
def _expand_dims_rule(prim, args, layouts, strategy):
    lay = strategy_or(prim, strategy, layouts, len(shape_of(args[0])))
    axis = args[1] % (len(lay.dims) + 1)
    dims = list(lay.dims)
    dims.insert(axis, None)
    return _keep_partial(prim, args, ShardPlan(inputs=[lay, None], outputs=[lay.with_dims(dims)]))


@sharding_rules.register(A.Squeeze)
def _squeeze_rule(prim, args, layouts, strategy):
    shape = shape_of(args[0])
    lay = strategy_or(prim, strategy, layouts, len(shape))
    axis = prim.axis if isinstance(prim.axis, (tuple, list)) else (prim.axis,)
    gone = [a % len(shape) for a in axis] if axis else [i for i, s in enumerate(shape) if s == 1]
    out = lay.with_dims([d for i, d in enumerate(lay.dims) if i not in gone])
    plan = ShardPlan(inputs=[lay], outputs=[out])
    if not axis:  # the dims of size 1 in the whole tensor, not those of this rank's block
        local_shape = out.local_shape([s for i, s in enumerate(shape) if i not in gone])
        plan.local = lambda x: _reshape(x, local_shape)
    return _keep_partial(prim, args, plan)


def _resolve_shape(shape, size: int) -> tuple:
    shape = list(shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = size // known if known else 0
    return tuple(shape)


def _reshape_target(x_shape, out, i: int, parts: int):
    """The output dim that input dim ``i`` (split ``parts`` ways) becomes the outer factor of, or None: the
    dims before both hold the same number of elements, and that output dim divides into ``parts``."""
    before = math.prod(x_shape[:i])
    acc = 1
    for j, s in enumerate(out):
        if acc == before and s % parts == 0 and s >= parts:
            if s <= x_shape[i] and x_shape[i] % s == 0 or s % x_shape[i] == 0:
                return j
        acc *= s
        if acc > before:
            return None
    return None


@sharding_rules.register(A.Reshape)
def _reshape_rule(prim, args, layouts, strategy):
    x_shape = shape_of(args[0])
    out = _resolve_shape(args[1], math.prod(x_shape))
    lay = strategy_or(prim, strategy, layouts, len(x_shape))
    dims, local = [None] * len(out), list(out)
    for i, d in enumerate(lay.dims):
        if d is None:
            continue
        j = _reshape_target(x_shape, out, i, lay.mesh[d])
        if j is None or dims[j] is not None:  # the split does not survive the reshape: reshape it whole
            whole = replicated(len(x_shape), lay.mesh)
            return ShardPlan(inputs=[whole, None], outputs=[replicated(len(out), lay.mesh)], args={1: out})
        dims[j] = d
        local[j] //= lay.mesh[d]
    plan = ShardPlan(inputs=[lay, None], outputs=[lay.with_dims(dims)], args={1: tuple(local)})
    return _keep_partial(prim, args, plan)


# ---------------------------------------------------------------------------------------------
# Gather: a table split by rows (a sharded embedding) or by columns


_sub = P.Sub()
_mul = P.Mul()
_cast = A.Cast()
_ge = P.GreaterEqual()
_lt = P.Less()
_and = P.LogicalAnd()
_select = A.Select()
_zeros_like = A.ZerosLike()
_expand = A.ExpandDims()
_segment_sum = A.UnsortedSegmentSum()
_reshape = A.Reshape()


def _row_block_gather(table, indices, axis, offset: int, rows: int):
    local = _sub(indices, offset)
    inside = _and(_ge(local, 0), _lt(local, rows))
    safe = _select(inside, local, _zeros_like(local))
    out = A.Gather()(table, safe, axis)
    mask = _cast(inside, out.dtype)
    for _ in range(len(table.shape) - 1):
        mask = _expand(mask, -1)
    return _mul(out, mask)


@sharding_rules.register(A.Gather)
def _gather_rule(prim, args, layouts, strategy):
    """The table split by rows (a block of rows on each rank: the rows it holds gathered, the others zero, a
    partial sum) or along other dims, and the indices by their strategy (each rank gathers for its block
    of them): one device matrix for the two strategies."""
    table, indices, axis = args[0], args[1], args[2]
    rank, n_idx = len(shape_of(table)), len(shape_of(indices))
    axis = axis % rank
    if strategy is None:
        lay = layouts[0]
        idx = replicated(n_idx, lay.mesh)
    else:
        check_strategy(prim, strategy[:2], [rank, n_idx][: len(strategy)])
        of_indices = tuple(strategy[1]) if len(strategy) > 1 else (1,) * n_idx
        mesh = mesh_with_repeat(world_size(), (*strategy[0], *of_indices), prim.name)
        lay = TensorLayout.make(mesh, list(range(1, rank + 1)))
        idx = TensorLayout.make(mesh, list(range(rank + 1, rank + n_idx + 1)))
    out = lay.with_dims([*lay.dims[:axis], *idx.dims, *lay.dims[axis + 1 :]])
    if lay.dims[axis] is None:
        return ShardPlan(inputs=[lay, idx, None], outputs=[out])
    mesh_axis = lay.dims[axis]
    rows = shape_of(table)[axis] // lay.mesh[mesh_axis]
    offset = coords(get_rank(), lay.mesh)[mesh_axis] * rows

    def local(t, i, a):
        return _row_block_gather(t, i, a, offset, rows)

    plan = ShardPlan(inputs=[lay, idx, None], outputs=[out], local=local)
    plan.partial[0] = ("sum", (mesh_axis,))
    return plan


@sharding_rules.register(A.GatherNd)
def _gather_nd_rule(prim, args, layouts, strategy):
    """The slices addressed by the indices' last dim (K coordinates): the table's first K dims whole, its others
    split (each rank gathers its part of every slice), the indices' other dims split (each rank its rows)."""
    table, indices = shape_of(args[0]), shape_of(args[1])
    k = indices[-1] if indices else 0
    if strategy is None:
        lay = unsplit(layouts[0], range(min(k, len(table))))
        idx = replicated(len(indices), lay.mesh)
    else:
        check_strategy(prim, strategy, [len(table), len(indices)])
        mesh = mesh_with_repeat(world_size(), (*strategy[0], *strategy[1]), prim.name)
        lay = TensorLayout.make(mesh, list(range(1, len(table) + 1)))
        idx = TensorLayout.make(mesh, list(range(len(table) + 1, len(table) + len(indices) + 1)))
        lay, idx = unsplit(lay, range(min(k, len(table)))), unsplit(idx, [len(indices) - 1])
    return ShardPlan(inputs=[lay, idx], outputs=[lay.with_dims([*idx.dims[:-1], *lay.dims[k:]])])


def _scatter_rule(prim, args, layouts, strategy):
    """A scatter writes whole slices: the addressed dims of ``input_x`` (its first, or the K the indices give)
    and the rows of ``updates`` whole, the slices' dims split alike in both (each rank writes its part)."""
    x, indices = shape_of(args[0]), shape_of(args[1])
    k = 1 if prim.row_indices else (indices[-1] if indices else 0)
    rows = len(indices) if prim.row_indices else len(indices) - 1
    lay = unsplit(strategy_or(prim, strategy, layouts, len(x)), range(min(k, len(x))))
    updates = lay.with_dims([None] * rows + list(lay.dims[k:]))
    return ShardPlan(inputs=[lay, replicated(len(indices), lay.mesh), updates], outputs=[lay])


sharding_rules.register(
    *(c for c in vars(A).values() if isinstance(c, type) and issubclass(c, A._Scatter) and c is not A._Scatter)
)(_scatter_rule)


@sharding_rules.register(A.UnsortedSegmentSum)
def _segment_sum_rule(prim, args, layouts, strategy):
    """The segments (output rows) split by ``out_strategy`` (the gradient of a vocabulary-parallel Gather:
    each rank sums only the rows of its block, ids shifted by its offset, the others dropped); else the
    ids' dims split leave partial sums."""
    x, ids, num = args[0], args[1], args[2]
    ni, rank = len(shape_of(ids)), len(shape_of(x))
    out_strategy = getattr(prim, "out_strategy", None)
    if strategy is not None and out_strategy is not None:
        check_strategy(prim, strategy, [rank, ni])
        mesh = mesh_with_repeat(world_size(), out_strategy[0], prim.name)
        out = TensorLayout.make(mesh, list(range(1, rank - ni + 2)))
        x_lay = out.with_dims([None] * ni + list(out.dims[1:]))
    else:
        x_lay = strategy_or(prim, strategy, [on_mesh(layouts[0], first_mesh(layouts[:2]))], rank)
        out = x_lay.with_dims((None, *x_lay.dims[ni:]))
    plan = ShardPlan(inputs=[x_lay, x_lay.with_dims(x_lay.dims[:ni]), None], outputs=[out])
    split = tuple(d for d in x_lay.dims[:ni] if d is not None)
    if split:
        plan.partial[0] = ("sum", split)
    if out.dims[0] is not None:
        rows = num // out.mesh[out.dims[0]]
        offset = coords(get_rank(), out.mesh)[out.dims[0]] * rows
        plan.local = lambda data, i, n: _segment_sum(data, _sub(i, offset), n)
        plan.args[2] = rows
    return plan


# ---------------------------------------------------------------------------------------------
# In-place updates (optimizers, Assign): everything of the variable's shape takes its layout


def _inplace_rule(prim, args, layouts, strategy):
    """Assign, AssignSub: the variable's layout for all tensors of its shape, the value redistributed to it. A
    trainable weight keeps the layout its forward pass gave it, as MindSpore's; a whole clone (an optimizer state)
    is first split as the weight it was cloned from, if that is split (MindSpore lays a clone out as its source);
    a whole buffer (BatchNorm's moving statistics, written, not trained) takes the first split layout among the
    tensors of its shape (in MindSpore, that of the operator computing it)."""
    var, lay = args[0], layouts[0]
    if not lay.is_replicated or not isinstance(var, Parameter):
        return _inplace_plan(prim, args, layouts, lay)
    if var.param_info.cloned_from is not None:
        lay = cloned_layout(var) or lay
    elif not var.requires_grad:
        var_shape = shape_of(var)
        split = (h for a, h in zip(args, layouts) if isinstance(h, TensorLayout) and shape_of(a) == var_shape)
        lay = next((h for h in split if not h.is_replicated), lay)
    return _inplace_plan(prim, args, layouts, lay)


def _update_rule(prim, args, layouts, strategy):
    """An optimizer's update follows its variable's layout, which the forward pass gave it (MindSpore's): a
    gradient split otherwise (its backward propagated another split) is gathered or sliced to it, and the
    variable's states are split with it."""
    return _inplace_plan(prim, args, layouts, layouts[0])


def _inplace_plan(prim, args, layouts, lay: TensorLayout) -> ShardPlan:
    var_shape = shape_of(args[0])
    inputs = [
        (lay if shape_of(a) == var_shape else replicated(len(shape_of(a)), lay.mesh))
        if isinstance(have, TensorLayout)
        else None
        for a, have in zip(args, layouts)
    ]
    return ShardPlan(inputs=inputs, outputs=[lay] * len(prim.__mindspore_signature__))


_OPTIMIZER_UPDATES = (
    N.ApplyMomentum,
    N.ApplyGradientDescent,
    N.Adam,
    N.ApplyRMSProp,
    N.ApplyCenteredRMSProp,
    N.ApplyAdagrad,
    N.AdamWeightDecay,
)
sharding_rules.register(*_OPTIMIZER_UPDATES)(_update_rule)
sharding_rules.register(A.Assign, P.AssignSub)(_inplace_rule)
optimizer_updates.update(prim.__name__ for prim in _OPTIMIZER_UPDATES)
