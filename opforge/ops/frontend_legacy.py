"""MindSpore 1.x operators the model zoo's research programs still call, built from other primitives with no
kernel of their own (as the classes of opforge/ops/frontend_ops.py):

- scalars and ranges: ``ScalarCast`` / ``scalar_cast`` (a Python number cast to a dtype's kind, on the host),
  ``ScalarToArray`` (a number as a 0-D Tensor), ``LinSpace`` (Range-free: ``start + i * step`` on the device);
- old names: ``Gelu`` (GeLU) and ``Pack`` (Stack);
- ``DiagPart`` (Gather of the flattened diagonal), ``LpNorm`` (Abs, Pow, ReduceSum, Maximum), ``MaskedSelect``
  (``masked_select``), ``InplaceAdd`` (TensorScatterAdd of whole rows), ``PReLU`` (``prelu``), ``KLDivLoss``
  (``kl_div``), ``LRN`` (AvgPool over the padded channels), ``tensor_dot`` (Transpose, Reshape, MatMul) and
  ``batch_dot`` (Transpose, Reshape, BatchMatMul).

Each runs as the primitives it calls, so gradients, ``jit`` and both backends come with them (the scalar ones
have no Tensor inputs)."""

from __future__ import annotations

import functools
import math

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.functional_extra import masked_select
from opforge.ops.functional_loss import kl_div
from opforge.primitives import conv_ops, math_ops
from opforge.primitives.array_ops import Stack as Pack
from opforge.primitives.nn_ops import GeLU as Gelu
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "ScalarCast", "scalar_cast", "ScalarToArray", "LinSpace", "Gelu", "Pack", "DiagPart", "LpNorm",
    "MaskedSelect", "InplaceAdd", "PReLU", "KLDivLoss", "LRN", "tensor_dot", "batch_dot",
]  # fmt: skip


def _tensor(op: str, arg: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(value).__name__}.")
    return value


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


# ---------------------------------------------------------------------------------------------
# Scalars and ranges


def scalar_cast(input_x, input_y):
    """``F.scalar_cast``: the number ``input_x`` (bool, int or float) as a Python number of the kind of the number
    dtype ``input_y``: ``bool`` for bool_, ``int`` (truncated toward zero) for the int and uint dtypes, ``float``
    for the float dtypes."""
    if isinstance(input_x, np.generic):
        input_x = input_x.item()
    if not isinstance(input_x, (bool, int, float)):
        raise TypeError(
            f"For 'ScalarCast', the 'input_x' must be a bool, an int or a float, but got {type(input_x).__name__}."
        )
    if not isinstance(input_y, mstype.Type) or input_y.kind not in "biuf":
        raise TypeError(f"For 'ScalarCast', the 'input_y' must be a number dtype (mstype.int32, ...), got {input_y!r}.")
    if input_y.kind == "b":
        return bool(input_x)
    if input_y.kind in "iu":
        return int(input_x)
    return float(input_x)


class ScalarCast:
    """``ScalarCast()(input_x, input_y)``: ``scalar_cast`` (MindSpore's ``ops.ScalarCast``): a bool, int or float
    cast to the kind of the number dtype ``input_y`` (``ScalarCast()(2.7, mstype.int32)`` is 2), on the host."""

    def __call__(self, input_x, input_y):
        return scalar_cast(input_x, input_y)


class ScalarToArray:
    """``ScalarToArray()(input_x)``: the int or float ``input_x`` as a 0-D Tensor, int32 for an int and float32
    for a float (MindSpore 1.x's ``ops.ScalarToArray``; a bool is a TypeError)."""

    def __call__(self, input_x):
        if isinstance(input_x, bool) or not isinstance(input_x, (int, float)):
            raise TypeError(
                f"For 'ScalarToArray', the 'input_x' must be an int or a float, but got {type(input_x).__name__}."
            )
        return Tensor(np.array(input_x, np.int32 if isinstance(input_x, int) else np.float32))


class LinSpace:
    r"""``LinSpace()(start, stop, num)`` (MindSpore's ``ops.LinSpace``): ``num`` evenly spaced values from ``start``
    to ``stop``, both included: :math:`start + i \cdot (stop - start) / (num - 1)` for i in [0, num) (``[start]``
    for ``num`` 1). ``start`` and ``stop`` are 0-D float32 Tensors, read on the device (a jitted call follows new
    values); ``num`` a positive int (or a 0-D int Tensor, read as a constant). Output: 1-D float32."""

    def __call__(self, start, stop, num):
        name = "LinSpace"
        for arg, value in (("start", start), ("stop", stop)):
            _tensor(name, arg, value)
            validator.check_tensor_dtype_valid(arg, value.dtype, (mstype.float32,), name)
            if value.ndim != 0:
                raise ValueError(f"For '{name}', the '{arg}' must be a 0-D Tensor, but got shape {list(value.shape)}.")
        if isinstance(num, Tensor) and num.ndim == 0 and num.dtype.kind in "iu":
            num = int(num.asnumpy())
        if not _is_int(num):
            raise TypeError(f"For '{name}', the 'num' must be an int, but got {type(num).__name__}.")
        if num <= 0:
            raise ValueError(f"For '{name}', the 'num' must be positive, but got {num}.")
        if num == 1:
            return F.reshape(start, (1,))
        steps = Tensor(np.arange(int(num), dtype=np.float32) / np.float32(num - 1), device=start.device)
        return F.add(start, F.mul(F.sub(stop, start), steps))


# ---------------------------------------------------------------------------------------------
# Array and math


class DiagPart:
    """``DiagPart()(input_x)`` (MindSpore's ``ops.DiagPart``): the diagonal of ``input_x`` of shape (D1, ..., Dk,
    D1, ..., Dk), ``out[i1, ..., ik] = input_x[i1, ..., ik, i1, ..., ik]`` of shape (D1, ..., Dk): a Gather of the
    flattened [P * P] input (P = D1 * ... * Dk) at ``i * (P + 1)``, so it differentiates (the gradient is
    ``Diag``'s placement)."""

    def __call__(self, input_x):
        x = _tensor("DiagPart", "input_x", input_x)
        shape = tuple(x.shape)
        half = len(shape) // 2
        if not shape or len(shape) % 2:
            raise ValueError(f"For 'DiagPart', the rank of 'input_x' must be even and positive, but got {list(shape)}.")
        if shape[:half] != shape[half:]:
            raise ValueError(
                f"For 'DiagPart', the 'input_x' shape must be (D1, ..., Dk, D1, ..., Dk), but got {list(shape)}."
            )
        size = math.prod(shape[:half])
        index = Tensor(np.arange(size, dtype=np.int64) * (size + 1), device=x.device)
        return F.reshape(F.gather(F.reshape(x, (size * size,)), index, 0), shape[:half])


def _axes(op: str, axis, rank: int) -> tuple:
    if isinstance(axis, bool) or not isinstance(axis, (int, list, tuple)):
        raise TypeError(f"For '{op}', the 'axis' must be an int, a list or a tuple, but got {type(axis).__name__}.")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if not all(_is_int(a) for a in axes):
        raise TypeError(f"For '{op}', the 'axis' must hold ints, but got {axis!r}.")
    if len(axes) > rank:
        raise ValueError(f"For '{op}', the 'axis' must have at most {rank} (the input's rank) dims, but got {axis!r}.")
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"For '{op}', each 'axis' must be in [{-rank}, {rank}), but got {a}.")
    return tuple(int(a) % rank for a in axes)


class LpNorm:
    r"""``LpNorm(axis, p=2, keep_dims=False, epsilon=1e-12)(input)`` (MindSpore's ``ops.LpNorm``): the p-norm
    :math:`\max((\sum |x|^p)^{1/p}, \epsilon)` over ``axis`` (an int, list or tuple; MindSpore's later
    documentation: a norm below ``epsilon`` is replaced by it). ``p`` a positive int (p = 1: ReduceSum of Abs;
    p = 2: Sqrt of ReduceSum of Square; else Pow), so it differentiates. dtypes: float16, float32."""

    def __init__(self, axis, p=2, keep_dims=False, epsilon=1e-12):
        name = "LpNorm"
        validator.check_value_type("axis", axis, [int, tuple, list], name)
        for a in (axis,) if isinstance(axis, int) else axis:
            validator.check_value_type("axis", a, [int], name)
        self.axis = axis
        self.p = validator.check_value_type("p", p, [int], name)
        if p < 1:
            raise ValueError(f"For '{name}', opforge computes the p-norm of a positive 'p', but got {p}.")
        self.keep_dims = validator.check_value_type("keep_dims", keep_dims, [bool], name)
        self.epsilon = validator.check_value_type("epsilon", epsilon, [float], name)

    def __call__(self, input):  # noqa: A002 (MindSpore's name)
        x = _tensor("LpNorm", "input", input)
        validator.check_tensor_dtype_valid("input", x.dtype, (mstype.float16, mstype.float32), "LpNorm")
        axes = _axes("LpNorm", self.axis, x.ndim)
        total = math_ops.ReduceSum(self.keep_dims)
        if self.p == 1:
            norm = total(F.abs(x), axes)
        elif self.p == 2:
            norm = F.sqrt(total(F.square(x), axes))
        else:
            norm = F.pow(total(F.pow(F.abs(x), float(self.p)), axes), 1.0 / self.p)
        return F.maximum(norm, F.cast(Tensor(np.array(self.epsilon, np.float32), device=x.device), norm.dtype))


class MaskedSelect:
    """``MaskedSelect()(x, mask)`` (MindSpore's ``ops.MaskedSelect``): the elements of ``x`` where the bool
    ``mask`` (broadcast with it) is True, as a 1-D Tensor (``ops.masked_select``: GatherNd of the coordinates,
    read on the host, so it differentiates in ``x``)."""

    def __call__(self, x, mask):
        return masked_select(x, mask)


_INPLACE_DTYPES = (mstype.float16, mstype.float32, mstype.int32)


class InplaceAdd:
    """``InplaceAdd(indices)(x, input_v)`` (MindSpore's ``ops.InplaceAdd``): ``x`` with ``input_v[i]`` added to its
    row ``indices[i]`` for each i (a row given twice gets both), as a new Tensor. ``indices`` an int or a tuple of
    ints in [0, x.shape[0]); ``input_v`` of shape (len(indices), *x.shape[1:]) and ``x``'s dtype (float16, float32
    or int32). TensorScatterAdd, so it differentiates in both."""

    def __init__(self, indices):
        name = "InplaceAdd"
        validator.check_value_type("indices", indices, [int, tuple], name)
        self.indices = (indices,) if isinstance(indices, int) else tuple(indices)
        for i in self.indices:
            validator.check_value_type("item of indices", i, [int], name)

    def __call__(self, x, input_v):
        name = "InplaceAdd"
        x, v = _tensor(name, "x", x), _tensor(name, "input_v", input_v)
        validator.check_tensors_dtypes_same_and_valid({"x": x.dtype, "input_v": v.dtype}, _INPLACE_DTYPES, name)
        if x.ndim == 0 or tuple(v.shape) != (len(self.indices), *x.shape[1:]):
            raise ValueError(
                f"For '{name}', the 'input_v' must have shape {[len(self.indices), *x.shape[1:]]} (len(indices), "
                f"x.shape[1:]) for 'x' of shape {list(x.shape)}, but got {list(v.shape)}."
            )
        for i in self.indices:
            if not 0 <= i < x.shape[0]:
                raise ValueError(f"For '{name}', each of 'indices' must be in [0, {x.shape[0]}), but got {i}.")
        rows = Tensor(np.array(self.indices, np.int64).reshape(-1, 1), device=x.device)
        return F.tensor_scatter_add(x, rows, v)


class PReLU:
    """``PReLU()(x, weight)`` (MindSpore's ``ops.PReLU``): ``x`` where positive, else ``weight * x``, ``weight`` a
    1-D Tensor of C (the channels, dim 1) elements or of 1 shared by all (``ops.prelu``: Select of x and x *
    weight). dtypes: float16, float32, both the same."""

    def __call__(self, x, weight):
        name = "PReLU"
        x, weight = _tensor(name, "x", x), _tensor(name, "weight", weight)
        floats = (mstype.float16, mstype.float32)
        validator.check_tensors_dtypes_same_and_valid({"x": x.dtype, "weight": weight.dtype}, floats, name)
        return F.prelu(x, weight)


class KLDivLoss:
    r"""``KLDivLoss(reduction="mean")(logits, labels)`` (MindSpore's ``ops.KLDivLoss``): the Kullback-Leibler
    divergence :math:`labels \cdot (\log labels - logits)` (0 where labels is 0) of the log-probabilities
    ``logits``, reduced by "none", "mean" (over all elements), "sum" or "batchmean" (the sum over dim 0's size):
    ``ops.kl_div``."""

    def __init__(self, reduction="mean"):
        validator.check_value_type("reduction", reduction, [str], "KLDivLoss")
        reductions = ["none", "mean", "sum", "batchmean"]
        self.reduction = validator.check_string(reduction, reductions, "reduction", "KLDivLoss")

    def __call__(self, logits, labels):
        return kl_div(logits, labels, self.reduction)


@functools.lru_cache(maxsize=64)
def _channel_window(size: int) -> conv_ops.AvgPool:
    return conv_ops.AvgPool((size, 1), (1, 1), "valid")


class LRN:
    r"""``LRN(depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS")(x)`` (MindSpore's
    ``ops.LRN``): local response normalisation of ``x`` [N, C, H, W] across channels,

    .. math:: out_c = x_c / (bias + alpha \sum_{c' = c - r}^{c + r} x_{c'}^2)^{beta}

    (channels outside [0, C) count as 0; ``r`` is ``depth_radius``). The window sums are an AvgPool over the
    zero-padded channels, so it differentiates. dtypes: float16, float32."""

    def __init__(self, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
        name = "LRN"
        validator.check_value_type("depth_radius", depth_radius, [int], name)
        self.depth_radius = validator.check_non_negative_int(depth_radius, "depth_radius", name)
        self.bias = validator.check_value_type("bias", bias, [float], name)
        self.alpha = validator.check_value_type("alpha", alpha, [float], name)
        self.beta = validator.check_value_type("beta", beta, [float], name)
        validator.check_value_type("norm_region", norm_region, [str], name)
        self.norm_region = validator.check_string(norm_region, ["ACROSS_CHANNELS"], "norm_region", name)

    def __call__(self, x):
        name = "LRN"
        x = _tensor(name, "x", x)
        validator.check_tensor_dtype_valid("x", x.dtype, (mstype.float16, mstype.float32), name)
        if x.ndim != 4:
            raise ValueError(f"For '{name}', the 'x' must be 4-D (N, C, H, W), but got shape {list(x.shape)}.")
        n, c, h, w = x.shape
        r = self.depth_radius
        squares = F.reshape(F.square(x), (n, 1, c, h * w))
        if r:
            squares = F._pad(((0, 0), (0, 0), (r, r), (0, 0)))(squares)
        window = F.mul(_channel_window(2 * r + 1)(squares), float(2 * r + 1))
        scale = F.add(F.mul(F.reshape(window, (n, c, h, w)), self.alpha), self.bias)
        return F.mul(x, F.pow(scale, -self.beta))


# ---------------------------------------------------------------------------------------------
# Contractions


def _check_float_pair(op: str, x1, x2, floats: tuple) -> None:
    _tensor(op, "x1", x1)
    _tensor(op, "x2", x2)
    for arg, value in (("x1", x1), ("x2", x2)):
        validator.check_tensor_dtype_valid(arg, value.dtype, floats, op)
    if x1.dtype != x2.dtype:
        raise TypeError(f"For '{op}', the 'x1' and 'x2' must have one dtype, but got {x1.dtype} and {x2.dtype}.")


def tensor_dot(x1, x2, axes):
    """MindSpore's ``ops.tensor_dot``: the contraction of ``x1`` and ``x2`` over ``axes``: an int N (the last N
    dims of ``x1`` with the first N of ``x2``; 0 is the outer product) or two ints / int sequences (the dims of
    ``x1``, those of ``x2``, paired in order). The free dims of ``x1``, then those of ``x2``. Transpose,
    Reshape and MatMul, so it differentiates. dtypes: float16, float32, both the same."""
    op = "tensor_dot"
    _check_float_pair(op, x1, x2, (mstype.float16, mstype.float32))
    if isinstance(axes, bool) or not isinstance(axes, (int, tuple, list)):
        raise TypeError(f"For '{op}', the 'axes' must be an int, a tuple or a list, but got {type(axes).__name__}.")
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"For '{op}', an int 'axes' must be at least 0, but got {axes}.")
        if axes > x1.ndim or axes > x2.ndim:
            raise ValueError(f"For '{op}', the 'axes' {axes} is larger than an input's rank ({x1.ndim}, {x2.ndim}).")
        pairs = (tuple(range(x1.ndim - axes, x1.ndim)), tuple(range(axes)))
    else:
        if len(axes) != 2:
            raise ValueError(f"For '{op}', the 'axes' must hold two entries (x1's dims, x2's dims), but got {axes!r}.")
        pairs = tuple((a,) if isinstance(a, int) else tuple(a) for a in axes)
        if len(pairs[0]) != len(pairs[1]):
            raise ValueError(f"For '{op}', the two 'axes' entries must have one length, but got {axes!r}.")
        for dims in pairs:
            if len(set(dims)) != len(dims):
                raise ValueError(f"For '{op}', the 'axes' must not repeat a dim, but got {axes!r}.")
    resolved = []
    for x, dims, which in ((x1, pairs[0], 1), (x2, pairs[1], 2)):
        if len(dims) > x.ndim:
            raise ValueError(f"For '{op}', x{which} has {x.ndim} dims, fewer than its 'axes' {dims}.")
        for a in dims:
            if not _is_int(a) or not -x.ndim <= a < x.ndim:
                raise ValueError(f"For '{op}', the 'axes' of x{which} must be in [{-x.ndim}, {x.ndim}), got {a!r}.")
        resolved.append(tuple(int(a) % x.ndim for a in dims))
    for a, b in zip(*resolved):
        if x1.shape[a] != x2.shape[b]:
            raise ValueError(
                f"For '{op}', the contracted dims must match, but x1's dim {a} is {x1.shape[a]} and x2's dim {b} "
                f"is {x2.shape[b]}."
            )
    free1 = tuple(i for i in range(x1.ndim) if i not in resolved[0])
    free2 = tuple(i for i in range(x2.ndim) if i not in resolved[1])
    size = math.prod(x1.shape[a] for a in resolved[0])
    m1 = _as_matrix(x1, free1 + resolved[0], (math.prod(x1.shape[i] for i in free1), size))
    m2 = _as_matrix(x2, resolved[1] + free2, (size, math.prod(x2.shape[i] for i in free2)))
    out = math_ops.MatMul()(m1, m2)
    return F.reshape(out, tuple(x1.shape[i] for i in free1) + tuple(x2.shape[i] for i in free2))


def _as_matrix(x, perm: tuple, shape: tuple):
    if perm != tuple(range(x.ndim)):
        x = F.transpose(x, perm)
    return F.reshape(x, shape)


def _batch_dot_axes(op: str, axes, r1: int, r2: int) -> list:
    if axes is None:
        return [r1 - 1, r2 - 1 if r2 == 2 else r2 - 2]
    if isinstance(axes, (list, tuple)):
        if 0 in axes:
            raise ValueError(f"For '{op}', the batch dim 0 cannot be in 'axes', but got {axes!r}.")
        if len(axes) != 2:
            raise ValueError(f"For '{op}', the 'axes' must hold two ints (x1's dim, x2's dim), but got {axes!r}.")
        out = []
        for arg, a, rank in (("axes[0]", axes[0], r1), ("axes[1]", axes[1], r2)):
            validator.check_value_type(arg, a, [int], op)
            a = a + rank if a < 0 else a
            if a < 0:
                raise ValueError(f"For '{op}', the {arg} is too low for an input of rank {rank}: {axes!r}.")
            out.append(a)
    elif isinstance(axes, int) and not isinstance(axes, bool):
        if axes == 0:
            raise ValueError(f"For '{op}', the batch dim 0 cannot be in 'axes'.")
        out = [axes + r1, axes + r2] if axes < 0 else [axes, axes]
        if out[0] < 0 or out[1] < 0:
            raise ValueError(f"For '{op}', the 'axes' {axes} is too low for inputs of ranks {r1} and {r2}.")
    else:
        raise ValueError(f"For '{op}', the 'axes' must be None, an int or (int, int), but got {axes!r}.")
    if out[0] >= r1 or out[1] >= r2:
        raise ValueError(f"For '{op}', the 'axes' {axes!r} is too high for inputs of ranks {r1} and {r2}.")
    return out


def batch_dot(x1, x2, axes=None):
    """MindSpore's ``ops.batch_dot``: for each index b of dim 0 (the batch, the same size in both), the
    contraction of ``x1[b]`` and ``x2[b]`` over one dim each (``axes``: None is x1's last dim with x2's last
    for a 2-D ``x2``, its second-last otherwise; an int N is dim N of both; (a1, a2) dim a1 of ``x1`` and a2 of
    ``x2``; dim 0 is not allowed). Output (batch, x1's free dims, x2's free dims); a 2-D ``x1`` gets an inserted
    dim 1 first (removed after), a 2-D ``x2`` a last one, so two 2-D inputs give (batch, 1). Transpose, Reshape
    and BatchMatMul, so it differentiates. dtype: float32."""
    op = "batch_dot"
    _check_float_pair(op, x1, x2, (mstype.float32,))
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(f"For '{op}', the inputs must have rank >= 2, but got {x1.ndim} and {x2.ndim}.")
    if x1.shape[0] != x2.shape[0]:
        raise ValueError(f"For '{op}', the inputs must have one batch size, but got {x1.shape[0]} and {x2.shape[0]}.")
    a1, a2 = _batch_dot_axes(op, axes, x1.ndim, x2.ndim)
    r1, r2 = x1.ndim, x2.ndim
    if r1 == 2:
        x1, a1 = F.expand_dims(x1, 1), a1 + 1
    if r2 == 2:
        x2 = F.expand_dims(x2, 2)
    if x1.shape[a1] != x2.shape[a2]:
        raise ValueError(
            f"For '{op}', the contracted dims must match, but x1's is {x1.shape[a1]} and x2's is {x2.shape[a2]}."
        )
    batch = x1.shape[0]
    free1 = tuple(i for i in range(1, x1.ndim) if i != a1)
    free2 = tuple(i for i in range(1, x2.ndim) if i != a2)
    size = x1.shape[a1]
    m1 = _as_matrix(x1, (0, *free1, a1), (batch, math.prod(x1.shape[i] for i in free1), size))
    m2 = _as_matrix(x2, (0, a2, *free2), (batch, size, math.prod(x2.shape[i] for i in free2)))
    out = F.reshape(
        math_ops.BatchMatMul()(m1, m2), (batch, *(x1.shape[i] for i in free1), *(x2.shape[i] for i in free2))
    )
    if r1 == 2:
        return F.squeeze(out, 1)
    if r2 == 2:
        return F.squeeze(out, -1)
    return out
