"""Batching rules (vmap) of the math operators: the elementwise ones (with broadcasting), the
reductions, CumSum, AddN and the matrix products. See ``opforge/dispatch/batching.py``."""

from __future__ import annotations

from opforge.dispatch.batching import batching_rules, sequential
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as A
from opforge.primitives import math_ext_ops as X
from opforge.primitives import math_ops as P
from opforge.primitives.batching_array_ops import (
    elem_rank,
    elementwise_rule,
    materialize,
    norm_axis,
    pad_rank,
    reducing_elementwise_rule,
    to_front,
    with_attrs,
)

_reshape = A.Reshape()

# The third elementwise batch (math_ext_ops), every one unary or broadcasting binary (Polygamma's order is
# one value: its rule follows).
_ELEMENTWISE_EXT = tuple(getattr(X, name) for name in X.__all__ if name != "Polygamma")

_ELEMENTWISE = (
    # unary
    P.Neg, P.Exp, P.Log, P.Sin, P.Cos, P.Log1p, P.Expm1, P.Reciprocal, P.Conj, P.Rsqrt, P.Square, P.Sqrt,
    P.Abs, P.Erf, P.Floor, P.Ceil, P.Round, P.Sign, P.IsNan, P.IsFinite, P.LogicalNot,
    # binary, broadcasting
    P.Add, P.Sub, P.Mul, P.RealDiv, P.Maximum, P.Minimum, P.Equal, P.Pow, P.Atan2, P.Div, P.FloorDiv,
    P.Mod, P.FloorMod, P.Greater, P.GreaterEqual, P.Less, P.LessEqual, P.NotEqual, P.LogicalAnd, P.LogicalOr,
)  # fmt: skip
batching_rules.register(*_ELEMENTWISE, *_ELEMENTWISE_EXT)(elementwise_rule())


@batching_rules.register(X.Polygamma)
def _polygamma_rule(prim, args, dims, size):
    a, x = args
    if dims[0] is None:  # one order for every element: elementwise in x
        return prim(a, x), dims[1]
    return sequential(prim, args, dims, size, "batches the order 'a'")


# Gradient operators of the elementwise family: inputs of one shape.
batching_rules.register(G.SqrtGrad, G.AbsGrad)(elementwise_rule(broadcasting=False))
# MaximumGrad/MinimumGrad: dx and dy are summed to x's and y's shapes.
batching_rules.register(G.MaximumGrad, G.MinimumGrad)(reducing_elementwise_rule)


@batching_rules.register(P.AddN)
def _addn_rule(prim, args, dims, size):
    (xs,) = args
    return prim(tuple(materialize(x, d, size) for x, d in zip(xs, dims[0]))), 0


# ---------------------------------------------------------------------------------------------
# Reductions: the element's axes shifted past the batch dimension in front


@batching_rules.register(P.ReduceSum, P.ReduceMean, P.ReduceMax, P.ReduceMin, P.ReduceProd, P.ReduceAll, P.ReduceAny)
def _reduce_rule(prim, args, dims, size):
    x, axis = args
    x = to_front(x, dims[0])
    rank = len(x.shape) - 1
    if rank == 0:  # a 0-d element: reduce a unit axis, so the operator still checks the dtype
        out = prim(pad_rank(x, 1), 1)
        return (_reshape(out, (size,)) if prim.keep_dims else out), 0
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if not axes:
        axes = tuple(range(rank))
    return prim(x, tuple(norm_axis(prim, a, rank) + 1 for a in axes)), 0


@batching_rules.register(P.CumSum, P.CumProd)
def _cumsum_rule(prim, args, dims, size):
    x, axis = args
    rank = elem_rank(x, dims[0])
    if rank == 0:
        return _reshape(prim(pad_rank(to_front(x, dims[0]), 1), 1), (size,)), 0
    return prim(to_front(x, dims[0]), norm_axis(prim, axis, rank) + 1), 0


@batching_rules.register(P.Cummax, P.Cummin)
def _extreme_scan_rule(prim, args, dims, size):
    (x,) = args
    axis = norm_axis(prim, prim.axis, elem_rank(x, dims[0]))
    return with_attrs(prim, axis=axis + 1)(to_front(x, dims[0])), 0


# ---------------------------------------------------------------------------------------------
# Matrix products


@batching_rules.register(P.MatMul)
def _matmul_rule(prim, args, dims, size):
    # Per element a 2-D product: BatchMatMul over the batch (an unbatched side broadcasts).
    x, y = args
    for name, a, d in (("x", x, dims[0]), ("y", y, dims[1])):
        if elem_rank(a, d) != 2:
            raise ValueError(
                f"For '{prim.name}', the input '{name}' must be a 2-D Tensor, but got rank {elem_rank(a, d)}."
            )
    bmm = P.BatchMatMul(transpose_a=prim.transpose_a, transpose_b=prim.transpose_b)
    return bmm(to_front(x, dims[0]), to_front(y, dims[1])), 0


@batching_rules.register(P.BatchMatMul)
def _batch_matmul_rule(prim, args, dims, size):
    x, y = args
    rank = max(elem_rank(x, dims[0]), elem_rank(y, dims[1]))
    x = x if dims[0] is None else pad_rank(to_front(x, dims[0]), rank)
    y = y if dims[1] is None else pad_rank(to_front(y, dims[1]), rank)
    return prim(x, y), 0
