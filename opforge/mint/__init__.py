"""MindSpore's ``mindspore.mint``: functions with PyTorch's names and arguments (``dim``, ``keepdim``), over
opforge's operators. A core of it: creation, elementwise, comparison, reduction, shape and matrix functions
(``__all__``), ``mint.nn`` (cells), ``mint.nn.functional``, ``mint.linalg`` and ``mint.special``; each is the
``opforge.ops`` function or primitive of the same math with mint's arguments, so its kernels, dtypes and gradients
are those operators' (docs/mint.md).
"""

from __future__ import annotations

import builtins
import math

from opforge import dtype as mstype
from opforge import ops
from opforge.mint import distributed, linalg, nn, optim, special
from opforge.mint.nn.functional import pad as _pad
from opforge.mint.nn.functional import softmax
from opforge.mint.special import erfc, exp2, sinc
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
    # more elementwise
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctanh", "arctan2", "cosh", "sinh", "sigmoid", "erfc", "exp2", "sinc", "log10", "trunc", "fix", "frac",
    "bitwise_and", "bitwise_or", "bitwise_xor", "addcdiv", "addcmul", "xlogy", "float_power", "logaddexp",
    "logaddexp2", "nan_to_num", "isneginf", "isclose", "allclose", "equal", "cross", "diff",
    # more reductions and scans
    "cummax", "cummin", "median", "std", "var", "std_mean", "var_mean", "nansum", "count_nonzero", "norm",
    "histc", "bincount", "unique", "unique_consecutive", "searchsorted",
    # more creation, indexing and matrices
    "empty", "empty_like", "clone", "linspace", "select", "scatter", "scatter_add", "index_add", "diag",
    "meshgrid", "trace", "mv", "addmv", "addbmm", "inverse", "cdist",
    "randint_like", "normal", "multinomial",
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


# -- more elementwise -------------------------------------------------------------------------------

acos, acosh, asin, asinh, atan, atanh = ops.acos, ops.acosh, ops.asin, ops.asinh, ops.atan, ops.atanh
arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2 = acos, acosh, asin, asinh, atan, atanh, atan2
cosh, sinh, sigmoid, trunc, log10 = ops.cosh, ops.sinh, ops.sigmoid, ops.trunc, ops.log10
bitwise_and, bitwise_or, bitwise_xor = ops.bitwise_and, ops.bitwise_or, ops.bitwise_xor
fix = trunc


def _tensor(name: str, arg: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{name}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")


def frac(input) -> Tensor:
    """The fractional part: input - trunc(input) (its sign the input's)."""
    return ops.sub(input, ops.trunc(input))


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """input + value * tensor1 / tensor2, broadcast; float dtypes."""
    return ops.addcdiv(input, tensor1, tensor2, value)


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """input + value * tensor1 * tensor2, broadcast."""
    return ops.addcmul(input, tensor1, tensor2, value)


def xlogy(input, other) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is NaN); float dtypes."""
    return ops.xlogy(input, other)


def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in float64 (PyTorch's float_power: the result is float64 whatever the inputs)."""
    base = ops.cast(input, mstype.float64) if isinstance(input, Tensor) else Tensor(float(input), mstype.float64)
    power = ops.cast(exponent, mstype.float64) if isinstance(exponent, Tensor) else float(exponent)
    return ops.pow(base, power)


def logaddexp(input, other) -> Tensor:
    r""":math:`\log(e^{x} + e^{y})`, computed as max(x, y) + log1p(exp(-|x - y|)) (no overflow); float dtypes."""
    big = ops.maximum(input, other)
    return ops.add(big, ops.log1p(ops.exp(ops.neg(ops.abs(ops.sub(input, other))))))


def logaddexp2(input, other) -> Tensor:
    r""":math:`\log_2(2^{x} + 2^{y})`, computed as max(x, y) + log2(1 + 2^{-|x - y|}); float dtypes."""
    big = ops.maximum(input, other)
    gap = ops.mul(ops.neg(ops.abs(ops.sub(input, other))), math.log(2.0))
    return ops.add(big, ops.div(ops.log1p(ops.exp(gap)), math.log(2.0)))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (None: the dtype's largest / lowest)."""
    return ops.nan_to_num(input, nan, posinf, neginf)


def isneginf(input) -> Tensor:
    """Whether each element is -inf (bool)."""
    return ops.logical_and(ops.isinf(input), ops.lt(input, 0))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise (bool); NaNs equal when ``equal_nan``."""
    return ops.isclose(input, other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether ``isclose`` holds for every element (a Python bool, as PyTorch's)."""
    return builtins.bool(ops.allclose(input, other, rtol, atol, equal_nan))


def equal(input, other) -> bool:
    """Whether the two Tensors have one shape and equal elements (a Python bool, as PyTorch's)."""
    _tensor("equal", "input", input)
    _tensor("equal", "other", other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(ops.equal(input, other).all().asnumpy()) if input.size else True


def cross(input, other, dim=None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (None: the first dim of size 3, PyTorch's torch.cross)."""
    return ops.cross(input, other, dim)


def diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference out[i] = x[i + 1] - x[i] along ``dim``, after ``prepend`` and ``append``
    are concatenated there (bools: their xor, as PyTorch's)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"For 'diff', the 'n' must be an int >= 0, but got {n!r}.")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = ops.cat(tuple(parts), dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = ops.narrow(x, dim, 1, length - 1), ops.narrow(x, dim, 0, length - 1)
        x = ops.logical_xor(hi, lo) if x.dtype == mstype.bool_ else ops.sub(hi, lo)
    return x


# -- more reductions and scans --------------------------------------------------------------------


def cummax(input, dim):
    """(values, int64 indices): the running maximum along ``dim`` and where it was taken."""
    values, indices = ops.cummax(input, dim)
    return values, _int64(indices)


def cummin(input, dim):
    """(values, int64 indices): the running minimum along ``dim`` and where it was taken."""
    values, indices = ops.cummin(input, dim)
    return values, _int64(indices)


def median(input, dim=None, keepdim=False):
    """The lower median of every element without ``dim``; else (values, int64 indices) along it (PyTorch's)."""
    if dim is None:
        return ops.median(ops.reshape(input, (-1,)), 0, False)[0]
    values, indices = ops.median(input, dim, keepdim)
    return values, _int64(indices)


def _correction(name: str, correction) -> int:
    if isinstance(correction, bool) or not isinstance(correction, (int, float)) or correction < 0:
        raise ValueError(f"For '{name}', the 'correction' must be a number >= 0, but got {correction!r}.")
    return correction


def var(input, dim=None, *, correction=1, keepdim=False) -> Tensor:
    """sum((x - mean)^2) / (N - correction) over ``dim`` (None: every element); float dtypes."""
    return ops.var(input, _dims(dim) or None, _correction("var", correction), keepdim)


def std(input, dim=None, *, correction=1, keepdim=False) -> Tensor:
    """sqrt(var(input, dim, correction=correction)); float dtypes."""
    return ops.std(input, _dims(dim) or None, _correction("std", correction), keepdim)


def var_mean(input, dim=None, *, correction=1, keepdim=False) -> tuple:
    """(var, mean) over ``dim``, as ``var`` and ``mean`` give them."""
    return var(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim)


def std_mean(input, dim=None, *, correction=1, keepdim=False) -> tuple:
    """(std, mean) over ``dim``, as ``std`` and ``mean`` give them."""
    return std(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim)


def nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """The sum over ``dim`` with NaNs counted as 0 (integers: int64, as ``sum``)."""
    if input.dtype.kind == "f":
        input = ops.where(ops.isnan(input), ops.zeros_like(input), input)
    return sum(input, dim, keepdim, dtype=dtype)


def count_nonzero(input, dim=None) -> Tensor:
    """The number of nonzero elements over ``dim`` (None: every element), int64."""
    return ops.cast(ops.count_nonzero(input, _dims(dim)), mstype.int64)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:
    """PyTorch's torch.norm: a number ``p`` is the vector p-norm over ``dim`` (None: every element); "fro" the
    2-norm over at most 2 dims; "nuc" the nuclear norm of the matrices over ``dim`` (default the last two)."""
    if p == "nuc":
        return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if p == "fro":
        if dim is not None and len(_dims(dim)) > 2:
            raise ValueError(f"For 'norm', the 'p' 'fro' takes at most 2 dims, but got dim {dim!r}.")
        p = 2
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise ValueError(f"For 'norm', the 'p' must be a number, 'fro' or 'nuc', but got {p!r}.")
    return linalg.vector_norm(input, p, dim, keepdim, dtype=dtype)


def histc(input, bins=100, min=0, max=0) -> Tensor:
    """Counts of the elements in ``bins`` equal-width bins over [min, max] (both 0: the data's range); elements
    outside are ignored; the input's float dtype."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise ValueError(f"For 'histc', the 'bins' must be an int > 0, but got {bins!r}.")
    if min > max:
        raise ValueError(f"For 'histc', the 'min' ({min}) must not exceed the 'max' ({max}).")
    return ops.histc(input, bins, float(min), float(max))


def bincount(input, weights=None, minlength=0) -> Tensor:
    """The count (or the sum of ``weights``) of each value 0 .. max(input) of a 1-D non-negative integer Tensor;
    int64 counts, or the weights' dtype; at least ``minlength`` bins."""
    _tensor("bincount", "input", input)
    if input.ndim != 1 or input.dtype.kind not in "iu":
        raise ValueError(
            f"For 'bincount', the 'input' must be a 1-D integer Tensor, got {input.dtype} {list(input.shape)}."
        )
    out = ops.bincount(input, weights, minlength)
    return _int64(out) if weights is None else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (flattened), sorted; with ``return_inverse`` the int64 index of each
    element in them (``input``'s shape), with ``return_counts`` their int64 counts."""
    if dim is not None:
        raise ValueError(f"For 'unique', a 'dim' is not supported (the elements are flattened), but got {dim!r}.")
    values, inverse = ops.unique(ops.reshape(input, (-1,)))
    inverse = _int64(inverse)
    out = [values]
    if return_inverse:
        out.append(ops.reshape(inverse, tuple(input.shape)))
    if return_counts:
        out.append(_int64(ops.bincount(inverse, None, values.shape[0])))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The elements of ``input`` (flattened) with each run of equal consecutive ones kept once; the int64 inverse
    (``input``'s shape) and run lengths when asked."""
    if dim is not None:
        raise ValueError(f"For 'unique_consecutive', a 'dim' is not supported, but got {dim!r}.")
    flat = ops.reshape(input, (-1,))
    if flat.shape[0] == 0:
        values, run = flat, ops.zeros((0,), mstype.int64)
    else:
        changed = ops.ne(flat[1:], flat[:-1])
        starts = ops.cat((ops.ones((1,), mstype.bool_), changed), 0)
        values = ops.masked_select(flat, starts)
        run = ops.sub(ops.cumsum(ops.cast(starts, mstype.int64), 0), 1)
    out = [values]
    if return_inverse:
        out.append(ops.reshape(run, tuple(input.shape)))
    if return_counts:
        out.append(_int64(ops.bincount(run, None, values.shape[0])) if flat.shape[0] else ops.zeros((0,), mstype.int64))
    return out[0] if len(out) == 1 else tuple(out)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None) -> Tensor:
    """The indices (int64, int32 with ``out_int32``) at which ``values`` would be inserted into the innermost dim
    of ``sorted_sequence`` to keep it sorted: the first such place, or the last with ``right`` / side="right"."""
    if side not in (None, "left", "right"):
        raise ValueError(f"For 'searchsorted', the 'side' must be 'left' or 'right', but got {side!r}.")
    if side is not None and right and side == "left":
        raise ValueError("For 'searchsorted', the 'side' 'left' contradicts right=True.")
    return ops.searchsorted(sorted_sequence, values, out_int32=out_int32, right=right, side=side, sorter=sorter)


# -- more creation, indexing and matrices ---------------------------------------------------------


def empty(*size, dtype=None) -> Tensor:
    """A Tensor of shape ``size`` (its values unspecified: zeros here)."""
    return ops.zeros(_size(size), dtype)


def empty_like(input, *, dtype=None) -> Tensor:
    """A Tensor of ``input``'s shape and dtype (or ``dtype``), its values unspecified (zeros here)."""
    return _as(ops.zeros_like(input), dtype)


def clone(input) -> Tensor:
    """A copy of ``input`` (a new Tensor; the gradient flows through)."""
    return ops.Identity()(input)


def linspace(start, end, steps, *, dtype=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (float32 unless ``dtype``)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"For 'linspace', the 'steps' must be an int >= 0, but got {steps!r}.")
    if steps == 0:
        return ops.zeros((0,), dtype or mstype.float32)
    if steps == 1:
        return ops.full((1,), start, dtype=dtype or mstype.float32)
    return _as(ops.linspace(float(start), float(end), steps), dtype)


def select(input, dim, index) -> Tensor:
    """The slice of ``input`` at ``index`` along ``dim``, that dim removed."""
    size = input.shape[dim]
    if isinstance(index, bool) or not isinstance(index, int) or not -size <= index < size:
        raise ValueError(f"For 'select', the 'index' must be an int in [{-size}, {size}), but got {index!r}.")
    return ops.squeeze(ops.narrow(input, dim, index % size, 1), (dim % input.ndim,))


def _scattered(name, input, dim, index, src):
    """``src`` as a Tensor of ``index``'s shape and ``input``'s dtype (a number filled in; a larger Tensor cut)."""
    if not isinstance(src, Tensor):
        return ops.full(tuple(index.shape), src, dtype=input.dtype)
    if src.ndim != index.ndim:
        raise ValueError(f"For '{name}', the 'src' and 'index' must have one number of dims.")
    if tuple(src.shape) != tuple(index.shape):
        src = src[tuple(slice(0, n) for n in index.shape)]
    return src


def scatter(input, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with out[index[i][j]][j] = src[i][j] along ``dim`` (``src`` a Tensor or a number, or
    ``value``); ``reduce`` "add" adds there instead."""
    if (src is None) == (value is None):
        raise ValueError("For 'scatter', give exactly one of 'src' and 'value'.")
    if reduce not in (None, "add"):
        raise ValueError(f"For 'scatter', the 'reduce' must be None or 'add', but got {reduce!r}.")
    updates = _scattered("scatter", input, dim, index, value if src is None else src)
    return ops.tensor_scatter_elements(input, index, updates, dim, "none" if reduce is None else "add")


def scatter_add(input, dim, index, src) -> Tensor:
    """A copy of ``input`` with src[i][j] added at out[index[i][j]][j] along ``dim`` (repeated indices add up)."""
    return ops.tensor_scatter_elements(input, index, _scattered("scatter_add", input, dim, index, src), dim, "add")


def index_add(input, dim, index, source, *, alpha=1) -> Tensor:
    """A copy of ``input`` with alpha * source[..., i, ...] added at input[..., index[i], ...] along ``dim``
    (``index`` 1-D, its length ``source``'s size along ``dim``; repeated indices add up)."""
    if index.ndim != 1 or source.shape[dim] != index.shape[0]:
        raise ValueError(
            f"For 'index_add', the 'index' must be 1-D of the length of 'source' along dim {dim}, but got "
            f"{list(index.shape)} and {list(source.shape)}."
        )
    axis = dim % input.ndim
    where_ = ops.reshape(_int64(index), tuple(-1 if d == axis else 1 for d in range(source.ndim)))
    where_ = ops.broadcast_to(where_, tuple(source.shape))
    updates = source if alpha == 1 else ops.mul(source, alpha)
    return ops.tensor_scatter_elements(input, where_, ops.cast(updates, input.dtype), axis, "add")


def diag(input, diagonal=0) -> Tensor:
    """A 1-D ``input`` as the ``diagonal``-th diagonal of a square matrix (0: the main one, > 0 above it); a 2-D
    ``input``'s ``diagonal``-th diagonal as a 1-D Tensor."""
    if input.ndim == 1:
        k = builtins.abs(diagonal)
        square_ = ops.mul(ops.expand_dims(input, 1), ops.eye(input.shape[0], input.shape[0], input.dtype))
        return _pad(square_, (k, 0, 0, k) if diagonal >= 0 else (0, k, k, 0)) if k else square_
    if input.ndim != 2:
        raise ValueError(f"For 'diag', the 'input' must be 1-D or 2-D, but got shape {list(input.shape)}.")
    rows, cols = input.shape
    first = diagonal if diagonal >= 0 else -diagonal * cols
    length = builtins.max(
        0, builtins.min(rows, cols - diagonal) if diagonal >= 0 else builtins.min(rows + diagonal, cols)
    )
    if length == 0:
        return ops.zeros((0,), input.dtype)
    return ops.reshape(input, (-1,))[first : first + (length - 1) * (cols + 1) + 1 : cols + 1]


def meshgrid(*tensors, indexing=None) -> tuple:
    """Coordinate grids of 1-D ``tensors``: "ij" (the default, PyTorch's) or "xy" (the first two dims swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise ValueError(f"For 'meshgrid', the 'indexing' must be 'ij' or 'xy', but got {indexing!r}.")
    return tuple(ops.meshgrid(*tensors, indexing=indexing))


def trace(input) -> Tensor:
    """The sum of a matrix's main diagonal."""
    if input.ndim != 2:
        raise ValueError(f"For 'trace', the 'input' must be 2-D, but got shape {list(input.shape)}.")
    return ops.trace(input)


def mv(input, vec) -> Tensor:
    """The product of a matrix [n, m] and a vector [m]: a vector [n]."""
    if input.ndim != 2 or vec.ndim != 1:
        raise ValueError(
            f"For 'mv', the 'input' must be 2-D and the 'vec' 1-D, but got shapes {list(input.shape)} and "
            f"{list(vec.shape)}."
        )
    return ops.matmul(input, vec)


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return ops.add(ops.mul(input, beta) if beta != 1 else input, ops.mul(mv(mat, vec), alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * sum_b batch1[b] @ batch2[b] (the products of the batches summed)."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise ValueError(
            f"For 'addbmm', the 'batch1' and 'batch2' must be 3-D, but got shapes {list(batch1.shape)} and "
            f"{list(batch2.shape)}."
        )
    total = ops.sum(ops.bmm(batch1, batch2), 0)
    return ops.add(ops.mul(input, beta) if beta != 1 else input, ops.mul(total, alpha))


def inverse(input) -> Tensor:
    """The inverse of each square matrix (the last two dims); float dtypes."""
    return linalg.inv(input)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distances between the rows of ``x1`` [..., P, M] and ``x2`` [..., R, M]: [..., P, R]."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
        raise ValueError(f"For 'cdist', the 'p' must be a number >= 0, but got {p!r}.")
    return ops.cdist(x1, x2, float(p))


def randint_like(input, *args, low=None, high=None, generator=None, dtype=None) -> Tensor:
    """Integers uniform in [low, high) of ``input``'s shape: ``randint_like(input, high)`` or
    ``randint_like(input, low, high)``; ``input``'s dtype (or ``dtype``)."""
    _no_generator("randint_like", generator)
    given = list(args) + [v for v in (low, high) if v is not None]
    if len(given) not in (1, 2):
        raise TypeError(f"For 'randint_like', give (input, high) or (input, low, high); got {given!r}.")
    low, high = (0, *given) if len(given) == 1 else tuple(given)
    dtype = input.dtype if dtype is None else dtype
    drawn = ops.randint(low, high, tuple(input.shape), dtype=mstype.int64)
    return drawn if dtype == mstype.int64 else ops.cast(drawn, dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None) -> Tensor:
    """Normal draws of mean ``mean`` and standard deviation ``std`` (Tensors broadcast, or numbers with a
    ``size``): mean + std * N(0, 1)."""
    _no_generator("normal", generator)
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise ValueError("For 'normal', a 'size' is needed when 'mean' and 'std' are numbers.")
        return ops.add(ops.mul(ops.randn(*tuple(size)), std), mean)
    like = mean if isinstance(mean, Tensor) else std
    shape = tuple(ops.broadcast_to(like, tuple(ops.add(mean, std).shape)).shape)
    return ops.add(ops.mul(ops.randn(*shape, dtype=like.dtype), std), mean)


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """``num_samples`` int64 indices drawn from each row of ``input`` (non-negative weights), with or without
    ``replacement``."""
    _no_generator("multinomial", generator)
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise ValueError(f"For 'multinomial', the 'num_samples' must be an int > 0, but got {num_samples!r}.")
    if not replacement and num_samples > input.shape[-1]:
        raise ValueError(
            f"For 'multinomial', without replacement the 'num_samples' ({num_samples}) must not exceed the "
            f"number of categories ({input.shape[-1]})."
        )
    return _int64(ops.multinomial(input, num_samples, replacement))
