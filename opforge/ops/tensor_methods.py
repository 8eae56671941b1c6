"""Tensor's operators and methods, each a primitive call.

They are installed on ``Tensor`` here because the primitives are built on Tensor: Tensor cannot
import them, so the operator layer attaches its methods once it exists (as JAX's array methods).
"""

from __future__ import annotations

import numpy as np

from opforge import _C
from opforge import dtype as mstype
from opforge.dispatch.interpreter import current_interpreter
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.ops import functional_index as FI
from opforge.tensor import Parameter, Tensor

__all__ = ["install"]


def _operand(other):
    """The other operand of a Python operator: NumPy arrays join as Tensors."""
    return Tensor(other) if isinstance(other, np.ndarray) else other


def __add__(self, other):
    return F.add(self, _operand(other))


def __radd__(self, other):
    return F.add(_operand(other), self)


def __sub__(self, other):
    return F.sub(self, _operand(other))


def __rsub__(self, other):
    return F.sub(_operand(other), self)


def __mul__(self, other):
    return F.mul(self, _operand(other))


def __rmul__(self, other):
    return F.mul(_operand(other), self)


def __truediv__(self, other):
    return F.div(self, _operand(other))


def __rtruediv__(self, other):
    return F.div(_operand(other), self)


def __matmul__(self, other):
    return F.matmul(self, _operand(other))


def __rmatmul__(self, other):
    return F.matmul(_operand(other), self)


def __neg__(self):
    return F.neg(self)


def __pos__(self):
    return self


def astype(self, dtype) -> Tensor:
    """Cast to ``dtype`` (the Cast primitive)."""
    return F.cast(self, mstype.to_dtype(dtype))


def reshape(self, *shape) -> Tensor:
    """Reshape (the Reshape primitive); accepts ``reshape(2, 3)`` or ``reshape((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return F.reshape(self, tuple(shape))


def view(self, *shape) -> Tensor:
    """MindSpore's ``Tensor.view``: ``reshape`` (the data is never shared with a Parameter's)."""
    return reshape(self, *shape)


def broadcast_to(self, shape) -> Tensor:
    """MindSpore's ``Tensor.broadcast_to``: ``ops.broadcast_to(self, shape)`` (a -1 keeps the dim there)."""
    return F.broadcast_to(self, shape)


def expand_as(self, other=None, *, x=None) -> Tensor:
    """MindSpore's ``Tensor.expand_as``: ``self`` broadcast to the shape of ``other`` (or of ``x``, the keyword
    of MindSpore's older overload)."""
    target = x if other is None else other
    if not isinstance(target, Tensor):
        raise TypeError(f"For 'Tensor.expand_as', the 'other' must be a Tensor, but got {type(target).__name__}.")
    return F.broadcast_to(self, target.shape)


def sum(self, axis=(), keepdims=False) -> Tensor:  # noqa: A001 (the Tensor method's name)
    """ReduceSum over ``axis`` (all axes by default)."""
    # The default axis left out: an all-Tensor call runs on the C fast path.
    return (
        F.reduce_sum_op(keepdims)(self) if type(axis) is tuple and not axis else F.reduce_sum_op(keepdims)(self, axis)
    )


def mean(self, axis=(), keepdims=False) -> Tensor:
    """ReduceMean over ``axis`` (all axes by default)."""
    return (
        F.reduce_mean_op(keepdims)(self) if type(axis) is tuple and not axis else F.reduce_mean_op(keepdims)(self, axis)
    )


# MindSpore's Tensor methods: each the primitive of the same name.
def add(self, other):
    return F.add(self, _operand(other))


def sub(self, other):
    return F.sub(self, _operand(other))


def mul(self, other):
    return F.mul(self, _operand(other))


def div(self, other, rounding_mode=None):
    """MindSpore's ``Tensor.div``: RealDiv for a float division without rounding (as before), else
    ``ops.div`` (Div, FloorDiv or the truncated quotient)."""
    if rounding_mode is None and self.dtype.kind == "f":
        return F.div(self, _operand(other))
    return F.divide(self, _operand(other), rounding_mode)


def matmul(self, other):
    return F.matmul(self, other)


def maximum(self, other):
    return F.maximum(self, _operand(other))


def minimum(self, other):
    return F.minimum(self, _operand(other))


def equal(self, other):
    return F.equal(self, _operand(other))


def tanh(self):
    return F.tanh(self)


def sigmoid(self):
    return F.sigmoid(self)


def relu(self):
    return F.relu(self)


def exp(self):
    return F.exp(self)


def log(self):
    return F.log(self)


def sqrt(self):
    return F.sqrt(self)


def square(self):
    return F.square(self)


def conj(self):
    """The complex conjugate (MindSpore's ``Tensor.conj``; a real tensor is returned as it is)."""
    return F.conj(self)


def expand_dims(self, axis: int):
    return F.expand_dims(self, axis)


def squeeze(self, axis=()):
    return F.squeeze(self, axis)


def transpose(self, *axes):
    """Transpose by ``axes`` (reversed when none), as MindSpore's ``Tensor.transpose``."""
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return F.transpose(self, axes or tuple(reversed(range(self.ndim))))


def argmax(self, axis=None, keepdims=False):
    """MindSpore 2's ``Tensor.argmax``: along ``axis``, of the flattened Tensor when None (int64)."""
    return F.argmax(self, axis, keepdims)


def max(self, axis=(), keepdims=False):  # noqa: A001 (the Tensor method's name)
    return (
        F.reduce_max_op(keepdims)(self) if type(axis) is tuple and not axis else F.reduce_max_op(keepdims)(self, axis)
    )


# Elementwise math, second batch: Python operators and MindSpore's Tensor methods.
def _is_operand(other) -> bool:
    return isinstance(other, (Tensor, np.ndarray, np.generic, bool, int, float))


def __pow__(self, other):
    return F.pow(self, _operand(other))


def __rpow__(self, other):
    return F.pow(_operand(other), self)


def __floordiv__(self, other):
    return F.floor_div(self, _operand(other))


def __rfloordiv__(self, other):
    return F.floor_div(_operand(other), self)


def __mod__(self, other):
    return F.floor_mod(self, _operand(other))  # Python's %: the sign of the divisor


def __rmod__(self, other):
    return F.floor_mod(_operand(other), self)


def __abs__(self):
    return F.abs(self)


# The comparisons answer NotImplemented for what is not an operand (None, a string), so Python falls
# back to its own rule (`t != None` is True) instead of raising.
def __lt__(self, other):
    return F.less(self, _operand(other)) if _is_operand(other) else NotImplemented


def __le__(self, other):
    return F.less_equal(self, _operand(other)) if _is_operand(other) else NotImplemented


def __gt__(self, other):
    return F.greater(self, _operand(other)) if _is_operand(other) else NotImplemented


def __ge__(self, other):
    return F.greater_equal(self, _operand(other)) if _is_operand(other) else NotImplemented


def __eq__(self, other):
    # elementwise, as MindSpore's (a Tensor stays hashable by identity: Tensor keeps object.__hash__)
    return F.equal(self, _operand(other)) if _is_operand(other) else NotImplemented


def __ne__(self, other):
    return F.not_equal(self, _operand(other)) if _is_operand(other) else NotImplemented


def abs(self):  # noqa: A001 (the Tensor method's name)
    return F.abs(self)


def pow(self, exponent):  # noqa: A001
    return F.pow(self, _operand(exponent))


def floor(self):
    return F.floor(self)


def ceil(self):
    return F.ceil(self)


def round(self):  # noqa: A001
    return F.round(self)


def sign(self):
    return F.sign(self)


def erf(self):
    return F.erf(self)


def isnan(self):
    return F.isnan(self)


def isfinite(self):
    return F.isfinite(self)


def logical_not(self):
    return F.logical_not(self)


def logical_and(self, other):
    return F.logical_and(self, _operand(other))


def logical_or(self, other):
    return F.logical_or(self, _operand(other))


def atan2(self, other):
    return F.atan2(self, _operand(other))


def floor_divide(self, other):
    return F.floor_div(self, _operand(other))


def remainder(self, divisor):
    return F.floor_mod(self, _operand(divisor))


def fmod(self, other):
    return F.fmod(self, _operand(other))


def greater(self, other):
    return F.greater(self, _operand(other))


def greater_equal(self, other):
    return F.greater_equal(self, _operand(other))


def less(self, other):
    return F.less(self, _operand(other))


def less_equal(self, other):
    return F.less_equal(self, _operand(other))


def not_equal(self, other):
    return F.not_equal(self, _operand(other))


def gt(self, other):
    return F.greater(self, _operand(other))


def ge(self, other):
    return F.greater_equal(self, _operand(other))


def lt(self, other):
    return F.less(self, _operand(other))


def le(self, other):
    return F.less_equal(self, _operand(other))


def ne(self, other):
    return F.not_equal(self, _operand(other))


def clip(self, xmin, xmax, dtype=None):
    """MindSpore's ``Tensor.clip(xmin, xmax, dtype=None)``: ``ops.clip_by_value(self, xmin, xmax)``, cast to
    ``dtype`` when one is given (the zoo's YOLOX: ``k.clip(xmin=1, xmax=n, dtype=mindspore.int32)``)."""
    out = F.clip_by_value(self, xmin, xmax)
    if dtype is not None and mstype.to_dtype(dtype) is not out.dtype:
        out = F.cast(out, mstype.to_dtype(dtype))
    return out


_ELEMWISE_METHODS = (
    __pow__, __rpow__, __floordiv__, __rfloordiv__, __mod__, __rmod__, __abs__,
    __lt__, __le__, __gt__, __ge__, __eq__, __ne__,
    abs, pow, floor, ceil, round, sign, erf, isnan, isfinite, logical_not, logical_and, logical_or,
    atan2, floor_divide, remainder, fmod, greater, greater_equal, less, less_equal, not_equal,
    gt, ge, lt, le, ne, clip,
)  # fmt: skip


def __getitem__(self, key):
    """Basic indexing (ints, slices, None, Ellipsis) through StridedSlice; a boolean mask through GatherNd."""
    return F.getitem(self, key)


def __setitem__(self, key, value):
    """``self[key] = value`` (basic, slice and boolean-mask indices; ``value`` a Tensor or a number,
    broadcast and cast to ``self``'s dtype), in place as MindSpore's: ``self`` takes the updated value,
    computed by primitives (``ops.setitem``), so it is differentiable: under a gradient, the calls
    that read ``self`` before see its old value. A Parameter is written as an in-place operator writes it
    (its version moves on, so a backward pass that saved it raises)."""
    updated = F.setitem(self, key, value)
    if updated is self:
        return
    if isinstance(self, Parameter):
        self._data, self._meta = updated._data, updated._meta
        self._version += 1
        return
    interpreter = current_interpreter()
    enclosing = list(interpreter.enclosing()) if interpreter is not None else []
    self._data, updated._data = updated._data, self._data
    self._meta, updated._meta = updated._meta, self._meta
    try:
        for interp in enclosing:
            interp.swap_tensors(self, updated)
    except Exception:
        self._data, updated._data = updated._data, self._data  # the assignment did not happen
        self._meta, updated._meta = updated._meta, self._meta
        raise


@property
def T(self):  # noqa: N802 (MindSpore's name)
    """The tensor with its dims reversed (MindSpore's ``Tensor.T``)."""
    return F.transpose(self, tuple(range(self.ndim - 1, -1, -1)))


def tile(self, multiples):
    return F.tile(self, multiples)


def flip(self, dims):
    return F.flip(self, dims)


def split(self, split_size_or_sections, axis=0):
    return F.split(self, split_size_or_sections, axis)


def gather(self, input_indices, axis):
    """``Gather()(self, input_indices, axis)`` (MindSpore's ``Tensor.gather``)."""
    return F.gather(self, input_indices, axis)


def sort(self, axis=-1, descending=False):
    return F.sort(self, axis, descending)


def topk(self, k, dim=None, largest=True, sorted=True):  # noqa: A002 (MindSpore's name)
    return F.topk(self, k, dim, largest, sorted)


def argmin(self, axis=None, keepdims=False):
    """MindSpore 2's ``Tensor.argmin``: along ``axis``, of the flattened Tensor when None (int32)."""
    return F.argmin(self, axis, keepdims)


def _reduce(prim, self, axis):
    return prim(self) if type(axis) is tuple and not axis else prim(self, axis)


def min(self, axis=(), keepdims=False):  # noqa: A001 (the Tensor method's name)
    return _reduce(F.reduce_min_op(keepdims), self, axis)


def prod(self, axis=(), keep_dims=False):
    return _reduce(F.reduce_prod_op(keep_dims), self, axis)


def all(self, axis=(), keep_dims=False):  # noqa: A001 (the Tensor method's name)
    return _reduce(F.reduce_all_op(keep_dims), self, axis)


def any(self, axis=(), keep_dims=False):  # noqa: A001 (the Tensor method's name)
    return _reduce(F.reduce_any_op(keep_dims), self, axis)


def cumsum(self, axis=None):
    """The cumulative sum along ``axis``; ``None``: of the flattened Tensor (MindSpore's ``Tensor.cumsum``)."""
    if axis is None:
        return F.cumsum(F.reshape(self, (-1,)), 0)
    return F.cumsum(self, axis)


def cumprod(self, dim, dtype=None):
    """The cumulative product along ``dim`` (MindSpore's ``Tensor.cumprod``)."""
    return F.cumprod(self, dim, dtype)


_METHODS = (
    __add__, __radd__, __sub__, __rsub__, __mul__, __rmul__, __truediv__, __rtruediv__,
    __matmul__, __rmatmul__, __neg__, __pos__, astype, reshape, view, broadcast_to, expand_as, sum, mean,
    add, sub, mul, div, matmul, maximum, minimum, equal, tanh, sigmoid, relu, exp, log, sqrt, square, conj,
    expand_dims, squeeze, transpose, argmax, max, *_ELEMWISE_METHODS, __getitem__, __setitem__, tile, flip, split,
    gather, sort, topk, argmin, min, prod, all, any, cumsum, cumprod,
)  # fmt: skip


# The arithmetic operators' primitives; ``reflected``: the Tensor is the right operand.
_OPERATORS = {
    __add__: (F.add, False), __radd__: (F.add, True), __sub__: (F.sub, False), __rsub__: (F.sub, True),
    __mul__: (F.mul, False), __rmul__: (F.mul, True), __truediv__: (F.div, False), __rtruediv__: (F.div, True),
    __pow__: (F.pow, False), __rpow__: (F.pow, True), __floordiv__: (F.floor_div, False),
    __rfloordiv__: (F.floor_div, True), __mod__: (F.floor_mod, False), __rmod__: (F.floor_mod, True),
}  # fmt: skip


def _method(fn):
    """``fn``, or for an arithmetic operator its C twin (``_C.make_binary_operator``): the same
    primitive call without a Python frame, ``fn`` itself taking operands it does not (arrays)."""
    if fn not in _OPERATORS:
        return fn
    prim, reflected = _OPERATORS[fn]
    return _C.make_binary_operator(fn.__name__, prim, reflected, fn)


def install() -> None:
    for fn in _METHODS:
        setattr(Tensor, fn.__name__, _method(fn))
    Tensor.T = T


install()


# -- MindSpore 2.x Tensor methods of the composite ops (opforge/ops/functional_extra.py) -------------------
# Each is the function of the same name with the Tensor as its first argument; installed only where Tensor
# has no attribute of that name (so a method defined above, or by Tensor itself, wins).
_EXTRA_METHODS = (
    FX.argsort, FX.tril, FX.triu, FX.roll, FX.chunk, FX.unbind, FX.narrow, FX.index_select, FX.gather_elements,
    FX.dot, FX.outer, FX.inner, FX.addmm, FX.baddbmm, FX.kron, FX.cross, FX.isclose, FX.allclose, FX.isinf,
    FX.nan_to_num, FX.logsumexp, FX.log2, FX.log10, FX.hypot, FX.lerp, FX.addcmul, FX.addcdiv, FX.std, FX.var,
    FX.swapaxes, FX.moveaxis, FX.trace, FX.repeat_interleave, FX.diag, FX.median,
)  # fmt: skip
for _fn in _EXTRA_METHODS:
    if not hasattr(Tensor, _fn.__name__):
        setattr(Tensor, _fn.__name__, _fn)

# MindSpore's ``Tensor.scatter(axis, index, src)`` and ``Tensor.index_add(dim, index, source, *, alpha=1)``
# (opforge/ops/functional_index.py), likewise only where Tensor has no such attribute.
for _name, _fn in (("scatter", FI.scatter), ("index_add", FI.tensor_index_add)):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _fn)


def _tensor_repeat(self, repeats, axis=None):
    """MindSpore's ``Tensor.repeat(repeats, axis=None)``: each element repeated ``repeats`` times along ``axis``
    (None: of the flattened tensor), ``np.repeat``'s semantics; ``ops.repeat_interleave``."""
    return FX.repeat_interleave(self, repeats, axis)


_tensor_repeat.__name__ = "repeat"
if not hasattr(Tensor, "repeat"):
    Tensor.repeat = _tensor_repeat


def _parameter_value(self):
    """MindSpore's ``Parameter.value()``: a Tensor of the Parameter's value now (a differentiable Reshape to its
    own shape: gradients reach the Parameter, and a later in-place update does not change the result)."""
    return F.reshape(self, tuple(self.shape))


_parameter_value.__name__ = "value"
Parameter.value = _parameter_value
