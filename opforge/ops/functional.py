"""Functional forms of common operators: shared primitive instances (``F.add(x, y)``)."""

from __future__ import annotations

import functools

from opforge import dtype as mstype
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


# ---------------------------------------------------------------------------------------------
# Elementwise math, second batch: MindSpore's functional names (ops.abs, ops.pow, ops.greater, ...).
abs = math_ops.Abs()  # noqa: A001 (MindSpore's name)
erf = math_ops.Erf()
floor = math_ops.Floor()
ceil = math_ops.Ceil()
round = math_ops.Round()  # noqa: A001
sign = math_ops.Sign()
isnan = math_ops.IsNan()
isfinite = math_ops.IsFinite()
logical_not = math_ops.LogicalNot()
logical_and = math_ops.LogicalAnd()
logical_or = math_ops.LogicalOr()
pow = math_ops.Pow()  # noqa: A001
atan2 = math_ops.Atan2()
floor_div = math_ops.FloorDiv()
floor_divide = floor_div
floor_mod = math_ops.FloorMod()
remainder = floor_mod  # input - floor(input / other) * other
fmod = math_ops.Mod()  # truncated, with the sign of input
greater = math_ops.Greater()
gt = greater
greater_equal = math_ops.GreaterEqual()
ge = greater_equal
less = math_ops.Less()
lt = less
less_equal = math_ops.LessEqual()
le = less_equal
not_equal = math_ops.NotEqual()
ne = not_equal
hardsigmoid = nn_ops.HSigmoid()
hardswish = nn_ops.HSwish()
_div = math_ops.Div()
_gelu = nn_ops.GeLU()
_softplus = nn_ops.Softplus()


def divide(input, other, rounding_mode=None):  # noqa: A002 (MindSpore's argument name)
    """``input / other`` (MindSpore's ``ops.div`` / ``ops.divide``): ``rounding_mode`` None (the Div
    primitive: true division for floats, truncation for integers), "floor" (FloorDiv) or "trunc"
    (the quotient rounded toward zero)."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode == "floor":
        return floor_div(input, other)
    if rounding_mode == "trunc":
        q = _div(input, other)
        if q.dtype.kind != "f":
            return q  # integer Div already truncates
        return sub(q, fmod(q, 1.0))
    raise ValueError(f"For 'div', the 'rounding_mode' must be None, 'floor' or 'trunc', but got {rounding_mode!r}.")


def gelu(input_x, approximate="tanh"):
    """GeLU: ``approximate="tanh"`` the GeLU primitive (MindSpore's tanh formula), ``"none"`` the exact
    :math:`x \\Phi(x) = x (1 + erf(x / \\sqrt 2)) / 2`."""
    if approximate == "tanh":
        return _gelu(input_x)
    if approximate == "none":
        return mul(mul(input_x, 0.5), add(erf(mul(input_x, 0.7071067811865476)), 1.0))
    raise ValueError(f"For 'gelu', the 'approximate' must be 'tanh' or 'none', but got {approximate!r}.")


def softplus(input, beta=1, threshold=20):  # noqa: A002
    """:math:`\\frac{1}{\\beta} \\log(1 + e^{\\beta x})` (the Softplus primitive on ``beta * x``). The
    primitive is overflow-free, so ``threshold`` (MindSpore's switch to the identity above it) only
    changes results by under one ulp; it is accepted for MindSpore's signature."""
    if not isinstance(beta, (int, float)) or isinstance(beta, bool) or beta == 0:
        raise ValueError(f"For 'softplus', the 'beta' must be a nonzero number, but got {beta!r}.")
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise TypeError(f"For 'softplus', the 'threshold' must be a number, but got {type(threshold).__name__}.")
    if beta == 1:
        return _softplus(input)
    return div(_softplus(mul(input, float(beta))), float(beta))


def leaky_relu(input, alpha=0.2):  # noqa: A002
    """MindSpore's ``ops.leaky_relu``: :math:`\\max(\\alpha x, x)` (:math:`\\min` for alpha > 1), i.e.
    x for x >= 0 and alpha * x below, built on Maximum / Minimum."""
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
        raise TypeError(f"For 'leaky_relu', the 'alpha' must be a number, but got {type(alpha).__name__}.")
    select = minimum if alpha > 1 else maximum
    return select(mul(input, float(alpha)), input)


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """MindSpore's ``ops.clip_by_value``: ``max(x, clip_value_min)`` then ``min(., clip_value_max)``
    (Maximum / Minimum), so every element is ``clip_value_max`` when min > max. A bound may be a
    Tensor or a number, None leaves that side open; the result keeps ``x``'s dtype. ``x`` may be a
    list or tuple of Tensors, each clipped."""
    if isinstance(x, (list, tuple)):
        return type(x)(clip_by_value(t, clip_value_min, clip_value_max) for t in x)
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("For 'clip_by_value', at least one of 'clip_value_min' and 'clip_value_max' must be given.")
    if getattr(x, "dtype", None) is mstype.bool_:
        raise TypeError("For 'clip_by_value', the 'x' must be a Tensor of numbers, but got a bool Tensor.")
    out = x
    if clip_value_min is not None:
        out = maximum(out, clip_value_min)
    if clip_value_max is not None:
        out = minimum(out, clip_value_max)
    if hasattr(x, "dtype") and out.dtype is not x.dtype:
        out = cast(out, x.dtype)
    return out


clamp = clip_by_value
