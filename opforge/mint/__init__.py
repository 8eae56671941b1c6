"""MindSpore's ``mindspore.mint``: functions with PyTorch's names and arguments (``dim``, ``keepdim``), over
opforge's operators. A core of it: creation, elementwise, comparison, reduction, shape and matrix functions
(``__all__``), ``mint.nn`` (cells), ``mint.nn.functional``, ``mint.linalg`` and ``mint.special``; each is the
``opforge.ops`` function or primitive of the same math with mint's arguments, so its kernels, dtypes and gradients
are those operators' (docs/mint.md).
"""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.mint import distributed, linalg, nn, optim, special
from opforge.mint.nn.functional import softmax
from opforge.primitives import math_ops as P
from opforge.tensor import Tensor

__all__ = [
    # creation
    "zeros", "ones", "full", "arange", "eye", "zeros_like", "ones_like", "full_like",
    # elementwise
    "abs", "neg", "negative", "exp", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "square", "sin", "cos",
    "tan", "tanh", "erf", "erfinv", "floor", "ceil", "round", "sign", "reciprocal", "add", "sub", "mul", "div",
    "divide", "pow", "clamp", "where", "maximum", "minimum", "atan2", "remainder", "fmod", "lerp",
    # comparison and logic
    "eq", "ne", "not_equal", "gt", "greater", "ge", "greater_equal", "lt", "less", "le", "less_equal",
    "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor",
    # reductions
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "cumsum",
    "cumprod", "logsumexp", "topk", "sort", "argsort", "softmax",
    # shape
    "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "cat", "concat", "stack", "split",
    "chunk", "narrow", "index_select", "gather", "tile", "repeat_interleave", "flip", "roll", "t",
    "broadcast_to", "unbind", "tril", "triu", "swapaxes", "masked_select", "nonzero",
    # matrices
    "matmul", "bmm", "mm", "dot", "outer", "einsum", "baddbmm", "addmm",
    # random (the global seed's stream: opforge.set_seed)
    "rand", "randn", "rand_like", "randn_like", "randint", "randperm", "bernoulli",
    "nn", "optim", "distributed", "linalg", "special",
]  # fmt: skip


def _dims(dim) -> tuple:
    """mint's ``dim`` (None: every dim; an int or a sequence of them) as the axis tuple of opforge's reductions."""
    return () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)


def _as(x, dtype):
    return x if dtype is None else ops.cast(x, dtype)


# -- creation ------------------------------------------------------------------------------------


def zeros(size, *, dtype=None) -> Tensor:
    return ops.zeros(size, dtype)


def ones(size, *, dtype=None) -> Tensor:
    return ops.ones(size, dtype)


def full(size, fill_value, *, dtype=None) -> Tensor:
    return ops.full(size, fill_value, dtype=dtype)


def arange(start=0, end=None, step=1, *, dtype=None) -> Tensor:
    return ops.arange(start, end, step, dtype=dtype)


def eye(n, m=None, dtype=None) -> Tensor:
    return ops.eye(n, m, dtype)


def zeros_like(input, *, dtype=None) -> Tensor:
    return _as(ops.zeros_like(input), dtype)


def ones_like(input, *, dtype=None) -> Tensor:
    return _as(ops.ones_like(input), dtype)


def full_like(input, fill_value, *, dtype=None) -> Tensor:
    return ops.full(tuple(input.shape), fill_value, dtype=input.dtype if dtype is None else dtype)


# -- elementwise (opforge's functions take mint's arguments as they are) -------------------------

abs, neg, exp, log, log2, log1p, expm1 = ops.abs, ops.neg, ops.exp, ops.log, ops.log2, ops.log1p, ops.expm1
sqrt, rsqrt, square, sin, cos, tan, tanh = ops.sqrt, ops.rsqrt, ops.square, ops.sin, ops.cos, ops.tan, ops.tanh
erf, erfinv, floor, ceil, round, sign = ops.erf, ops.erfinv, ops.floor, ops.ceil, ops.round, ops.sign
reciprocal, maximum, minimum, atan2, remainder, fmod = (
    ops.reciprocal, ops.maximum, ops.minimum, ops.atan2, ops.remainder, ops.fmod
)  # fmt: skip
lerp, pow, mul, isnan, isinf, isfinite = ops.lerp, ops.pow, ops.mul, ops.isnan, ops.isinf, ops.isfinite
logical_and, logical_or, logical_not, logical_xor = ops.logical_and, ops.logical_or, ops.logical_not, ops.logical_xor
negative = neg


def add(input, other, *, alpha=1) -> Tensor:
    """input + alpha * other."""
    return ops.add(input, other if alpha == 1 else ops.mul(other, alpha))


def sub(input, other, *, alpha=1) -> Tensor:
    """input - alpha * other."""
    return ops.sub(input, other if alpha == 1 else ops.mul(other, alpha))


def div(input, other, *, rounding_mode=None) -> Tensor:
    """input / other; ``rounding_mode`` "trunc" or "floor" rounds the quotient."""
    return ops.div(input, other, rounding_mode=rounding_mode)


divide = div


def clamp(input, min=None, max=None) -> Tensor:
    return ops.clamp(input, min, max)


def where(condition, input, other) -> Tensor:
    return ops.where(condition, input, other)


# -- comparison -------------------------------------------------------------------------------------

eq, ne, gt, ge, lt, le = ops.equal, ops.ne, ops.gt, ops.ge, ops.lt, ops.le
not_equal, greater, greater_equal, less, less_equal = ops.ne, ops.gt, ops.ge, ops.lt, ops.le


# -- reductions -------------------------------------------------------------------------------------


def _accumulated(input, dtype):
    """The input of a sum or a product: in ``dtype``, else int64 for integers and bools (PyTorch's)."""
    if dtype is None and (input.dtype == mstype.bool_ or input.dtype.kind in "iu"):
        dtype = mstype.int64
    return _as(input, dtype)


def sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    return ops.sum(_accumulated(input, dtype), dim, keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    return ops.mean(_as(input, dtype), _dims(dim), keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    return ops.prod(_accumulated(input, dtype), _dims(dim), keepdim)


def _int64(indices) -> Tensor:
    """Indices as mint gives them: int64 (PyTorch's)."""
    return indices if indices.dtype == mstype.int64 else ops.cast(indices, mstype.int64)


def _extreme(fn, input, dim, keepdim):
    """mint.max / mint.min: the value over every element without ``dim``; else (values, int64 indices) along it."""
    if dim is None:
        return fn(input)[0]
    values, indices = fn(input, dim, keepdim)
    return values, _int64(indices)


def max(input, dim=None, keepdim=False):
    return _extreme(ops.max, input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    return _extreme(ops.min, input, dim, keepdim)


def amax(input, dim=(), keepdim=False) -> Tensor:
    return ops.amax(input, _dims(dim) or None, keepdim)


def amin(input, dim=(), keepdim=False) -> Tensor:
    return ops.amin(input, _dims(dim) or None, keepdim)


def argmax(input, dim=None, keepdim=False) -> Tensor:
    return ops.argmax(input, dim, keepdim)


def argmin(input, dim=None, keepdim=False) -> Tensor:
    return _int64(ops.argmin(input, dim, keepdim))


def _bools(input) -> Tensor:
    return input if input.dtype == mstype.bool_ else ops.cast(input, mstype.bool_)


def all(input, dim=None, keepdim=False) -> Tensor:
    """Whether every element (along ``dim``) is nonzero."""
    return P.ReduceAll(keepdim)(_bools(input), _dims(dim))


def any(input, dim=None, keepdim=False) -> Tensor:
    """Whether any element (along ``dim``) is nonzero."""
    return P.ReduceAny(keepdim)(_bools(input), _dims(dim))


def cumsum(input, dim, dtype=None) -> Tensor:
    return ops.cumsum(_accumulated(input, dtype), dim)


def cumprod(input, dim, dtype=None) -> Tensor:
    return ops.cumprod(input, dim, dtype)


def logsumexp(input, dim, keepdim=False) -> Tensor:
    return ops.logsumexp(input, _dims(dim), keepdim)


def topk(input, k, dim=-1, largest=True, sorted=True):
    values, indices = ops.topk(input, k, dim, largest, sorted)
    return values, _int64(indices)


def sort(input, dim=-1, descending=False, stable=False):
    """(values, int64 indices) sorted along ``dim`` (opforge's sorts are stable)."""
    values, indices = ops.sort(input, dim, descending)
    return values, _int64(indices)


def argsort(input, dim=-1, descending=False, stable=False) -> Tensor:
    return _int64(ops.argsort(input, dim, descending))


# -- shape ------------------------------------------------------------------------------------------


def reshape(input, shape) -> Tensor:
    return ops.reshape(input, tuple(shape))


def flatten(input, start_dim=0, end_dim=-1) -> Tensor:
    return ops.flatten(input, start_dim=start_dim, end_dim=end_dim)


def squeeze(input, dim=None) -> Tensor:
    """The size-1 dims removed: all, or those of ``dim`` (a listed dim of another size stays, PyTorch's)."""
    if dim is None:
        return ops.squeeze(input)
    dims = tuple(d for d in _dims(dim) if input.shape[d] == 1)
    return ops.squeeze(input, dims) if dims else input


def unsqueeze(input, dim) -> Tensor:
    return ops.unsqueeze(input, dim)


def transpose(input, dim0, dim1) -> Tensor:
    return ops.swapaxes(input, dim0, dim1)


def permute(input, dims) -> Tensor:
    return ops.permute(input, tuple(dims))


def cat(tensors, dim=0) -> Tensor:
    return ops.cat(tuple(tensors), dim)


concat = cat


def stack(tensors, dim=0) -> Tensor:
    return ops.stack(tuple(tensors), dim)


def split(tensor, split_size_or_sections, dim=0) -> tuple:
    return ops.split(tensor, split_size_or_sections, dim)


def chunk(input, chunks, dim=0) -> tuple:
    return ops.chunk(input, chunks, dim)


def narrow(input, dim, start, length) -> Tensor:
    return ops.narrow(input, dim, start, length)


def index_select(input, dim, index) -> Tensor:
    return ops.index_select(input, dim, index)


def gather(input, dim, index) -> Tensor:
    """out[i][j] = input[index[i][j]][j] along ``dim`` (PyTorch's gather)."""
    return ops.gather_elements(input, dim, index)


def tile(input, dims) -> Tensor:
    """``input`` repeated ``dims[i]`` times along each dim (fewer entries than dims: 1 for the leading ones)."""
    dims = tuple(dims)
    return ops.tile(input, (1,) * (input.ndim - len(dims)) + dims)


def repeat_interleave(input, repeats, dim=None) -> Tensor:
    return ops.repeat_interleave(input, repeats, dim)


def flip(input, dims) -> Tensor:
    return ops.flip(input, _dims(dims))


def roll(input, shifts, dims=None) -> Tensor:
    return ops.roll(input, shifts, dims)


def t(input) -> Tensor:
    """The transpose of a matrix (a vector as it is); more dims raise, as PyTorch's."""
    if input.ndim > 2:
        raise ValueError(f"For 't', the 'input' must have at most 2 dims, but got shape {list(input.shape)}.")
    return input if input.ndim < 2 else ops.swapaxes(input, 0, 1)


def broadcast_to(input, size) -> Tensor:
    return ops.broadcast_to(input, tuple(size))


def unbind(input, dim=0) -> tuple:
    return ops.unbind(input, dim)


tril, triu, swapaxes, masked_select = ops.tril, ops.triu, ops.swapaxes, ops.masked_select


def nonzero(input, *, as_tuple=False):
    return ops.nonzero(input, as_tuple=as_tuple)


# -- matrices ---------------------------------------------------------------------------------------

matmul, outer, einsum = ops.matmul, ops.outer, ops.einsum


def bmm(input, mat2) -> Tensor:
    return ops.bmm(input, mat2)


def mm(input, mat2) -> Tensor:
    """The product of two matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise ValueError(
            f"For 'mm', both inputs must be 2-D, but got shapes {list(input.shape)} and {list(mat2.shape)}."
        )
    return ops.matmul(input, mat2)


def dot(input, other) -> Tensor:
    """The inner product of two vectors of one length (PyTorch's dot: 1-D only)."""
    if input.ndim != 1 or other.ndim != 1 or input.shape != other.shape:
        raise ValueError(
            f"For 'dot', both inputs must be 1-D of one length, but got shapes {list(input.shape)} and "
            f"{list(other.shape)}."
        )
    return ops.sum(ops.mul(input, other))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    return ops.baddbmm(input, batch1, batch2, beta, alpha)


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    return ops.addmm(input, mat1, mat2, beta=beta, alpha=alpha)


# -- random -----------------------------------------------------------------------------------------


def _no_generator(name: str, generator) -> None:
    if generator is not None:
        raise ValueError(f"For '{name}', a 'generator' is not supported: the draws follow opforge.set_seed.")


def _size(size) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def rand(*size, generator=None, dtype=None) -> Tensor:
    """Uniform draws in [0, 1) of shape ``size``."""
    _no_generator("rand", generator)
    return ops.rand(*_size(size), dtype=dtype)


def randn(*size, generator=None, dtype=None) -> Tensor:
    """Standard normal draws of shape ``size``."""
    _no_generator("randn", generator)
    return ops.randn(*_size(size), dtype=dtype)


def rand_like(input, *, dtype=None) -> Tensor:
    return ops.rand_like(input, dtype=dtype)


def randn_like(input, *, dtype=None) -> Tensor:
    return ops.randn_like(input, dtype=dtype)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None) -> Tensor:
    """Integers uniform in [low, high) of shape ``size`` (int64): ``randint(high, size)``, ``randint(low, high,
    size)``, or by keyword."""
    _no_generator("randint", generator)
    given = list(args) + [v for v in (low, high, size) if v is not None]
    if len(given) not in (2, 3) or not isinstance(given[-1], (tuple, list)):
        raise TypeError(f"For 'randint', give (high, size) or (low, high, size), size a tuple; got {given!r}.")
    *bounds, size = given
    low, high = (0, *bounds) if len(bounds) == 1 else tuple(bounds)
    return ops.randint(low, high, tuple(size), dtype=dtype)


def randperm(n, *, generator=None, dtype=mstype.int64) -> Tensor:
    """A random permutation of 0 .. n - 1."""
    _no_generator("randperm", generator)
    return ops.randperm(n, dtype=dtype)


def bernoulli(input, *, generator=None) -> Tensor:
    """1 with the probability each element of ``input`` gives, else 0 (``input``'s dtype)."""
    _no_generator("bernoulli", generator)
    return ops.cast(ops.lt(ops.rand_like(input), input), input.dtype)
