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
maximum = math_ops.Maximum()
minimum = math_ops.Minimum()
equal = math_ops.Equal()
sqrt = math_ops.Sqrt()
square = math_ops.Square()
transpose = array_ops.Transpose()
_expand_dims = array_ops.ExpandDims()
_l2_loss = nn_ops.L2Loss()


def expand_dims(input_x, axis: int):
    """``input_x`` with a new dim of size 1 at ``axis`` (MindSpore's ``ops.expand_dims``)."""
    return _expand_dims(input_x, axis)


@functools.cache
def _squeeze(axis) -> array_ops.Squeeze:
    return array_ops.Squeeze(axis)


def squeeze(input_x, axis=()):
    """``input_x`` without the size-1 dims in ``axis`` (all of them by default)."""
    return _squeeze(tuple(axis) if isinstance(axis, list) else axis)(input_x)


@functools.cache
def _argmax(axis: int) -> array_ops.ArgMax:
    return array_ops.ArgMax(axis)


def argmax(input_x, axis: int = -1):
    """The index of the largest element along ``axis`` (int32; MindSpore's ``ops.argmax``)."""
    return _argmax(axis)(input_x)


@functools.cache
def reduce_max(keep_dims: bool = False) -> math_ops.ReduceMax:
    return math_ops.ReduceMax(keep_dims)


@functools.cache
def _argmin(axis: int) -> array_ops.Argmin:
    return array_ops.Argmin(axis)


def argmin(input_x, axis: int = -1):
    """The index of the smallest element along ``axis`` (int32; MindSpore's ``ops.argmin``)."""
    return _argmin(axis)(input_x)


@functools.cache
def reduce_min(keep_dims: bool = False) -> math_ops.ReduceMin:
    return math_ops.ReduceMin(keep_dims)


@functools.cache
def reduce_prod(keep_dims: bool = False) -> math_ops.ReduceProd:
    return math_ops.ReduceProd(keep_dims)


@functools.cache
def reduce_all(keep_dims: bool = False) -> math_ops.ReduceAll:
    return math_ops.ReduceAll(keep_dims)


@functools.cache
def reduce_any(keep_dims: bool = False) -> math_ops.ReduceAny:
    return math_ops.ReduceAny(keep_dims)


@functools.cache
def _cumsum(exclusive: bool, reverse: bool) -> math_ops.CumSum:
    return math_ops.CumSum(exclusive, reverse)


def cumsum(x, axis: int, exclusive: bool = False, reverse: bool = False):
    """The cumulative sum of ``x`` along ``axis`` (the CumSum primitive)."""
    return _cumsum(exclusive, reverse)(x, axis)


def l2_loss(x):
    """``sum(x ** 2) / 2`` (the L2Loss primitive)."""
    return _l2_loss(x)


def mse_loss(input_x, target, reduction: str = "mean"):
    """``(input_x - target) ** 2``, averaged ("mean"), summed ("sum") or not ("none")."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"For 'mse_loss', the 'reduction' must be 'mean', 'sum' or 'none', but got {reduction!r}.")
    loss = square(sub(input_x, target))
    if reduction == "none":
        return loss
    return (reduce_mean if reduction == "mean" else reduce_sum)(False)(loss)


@functools.cache
def reduce_sum(keep_dims: bool = False) -> math_ops.ReduceSum:
    return math_ops.ReduceSum(keep_dims)


@functools.cache
def reduce_mean(keep_dims: bool = False) -> math_ops.ReduceMean:
    return math_ops.ReduceMean(keep_dims)
