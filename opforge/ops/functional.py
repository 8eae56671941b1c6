"""Functional forms of common operators: shared primitive instances (``F.add(x, y)``)."""

from __future__ import annotations

import functools

from opforge.primitives import array_ops, math_ops, nn_ops

add = math_ops.Add()
sub = math_ops.Sub()
mul = math_ops.Mul()
div = math_ops.RealDiv()
neg = math_ops.Neg()
exp = math_ops.Exp()
log = math_ops.Log()
matmul = math_ops.MatMul()
relu = nn_ops.ReLU()
sigmoid = nn_ops.Sigmoid()
tanh = nn_ops.Tanh()
cast = array_ops.Cast()
reshape = array_ops.Reshape()
assign = array_ops.Assign()
assign_sub = math_ops.AssignSub()
zeros_like = array_ops.ZerosLike()
ones_like = array_ops.OnesLike()
fill = array_ops.Fill()


@functools.cache
def reduce_sum(keep_dims: bool = False) -> math_ops.ReduceSum:
    return math_ops.ReduceSum(keep_dims)


@functools.cache
def reduce_mean(keep_dims: bool = False) -> math_ops.ReduceMean:
    return math_ops.ReduceMean(keep_dims)
