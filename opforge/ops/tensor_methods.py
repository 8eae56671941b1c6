"""Tensor's operators and methods, each a primitive call.

They are installed on ``Tensor`` here because the primitives are built on Tensor: Tensor cannot
import them, so the operator layer attaches its methods once it exists (as JAX's array methods).
"""

from __future__ import annotations

import numpy as np

from opforge import _C
from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.tensor import Tensor

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


def sum(self, axis=(), keepdims=False) -> Tensor:  # noqa: A001 (the Tensor method's name)
    """ReduceSum over ``axis`` (all axes by default)."""
    # The default axis left out: an all-Tensor call runs on the C fast path.
    return F.reduce_sum(keepdims)(self) if type(axis) is tuple and not axis else F.reduce_sum(keepdims)(self, axis)


def mean(self, axis=(), keepdims=False) -> Tensor:
    """ReduceMean over ``axis`` (all axes by default)."""
    return F.reduce_mean(keepdims)(self) if type(axis) is tuple and not axis else F.reduce_mean(keepdims)(self, axis)


# MindSpore's Tensor methods: each the primitive of the same name.
def add(self, other):
    return F.add(self, _operand(other))


def sub(self, other):
    return F.sub(self, _operand(other))


def mul(self, other):
    return F.mul(self, _operand(other))


def div(self, other):
    return F.div(self, _operand(other))


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


def expand_dims(self, axis: int):
    return F.expand_dims(self, axis)


def squeeze(self, axis=()):
    return F.squeeze(self, axis)


def transpose(self, *axes):
    """Transpose by ``axes`` (reversed when none), as MindSpore's ``Tensor.transpose``."""
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return F.transpose(self, axes or tuple(reversed(range(self.ndim))))


def argmax(self, axis=None):
    return F.argmax(self, -1 if axis is None else axis)


def max(self, axis=(), keepdims=False):  # noqa: A001 (the Tensor method's name)
    return F.reduce_max(keepdims)(self) if type(axis) is tuple and not axis else F.reduce_max(keepdims)(self, axis)


def argmin(self, axis=None):
    return F.argmin(self, -1 if axis is None else axis)


def _reduce(prim, self, axis):
    return prim(self) if type(axis) is tuple and not axis else prim(self, axis)


def min(self, axis=(), keepdims=False):  # noqa: A001 (the Tensor method's name)
    return _reduce(F.reduce_min(keepdims), self, axis)


def prod(self, axis=(), keep_dims=False):
    return _reduce(F.reduce_prod(keep_dims), self, axis)


def all(self, axis=(), keep_dims=False):  # noqa: A001 (the Tensor method's name)
    return _reduce(F.reduce_all(keep_dims), self, axis)


def any(self, axis=(), keep_dims=False):  # noqa: A001 (the Tensor method's name)
    return _reduce(F.reduce_any(keep_dims), self, axis)


def cumsum(self, axis=None):
    """The cumulative sum along ``axis``; ``None``: of the flattened Tensor (MindSpore's ``Tensor.cumsum``)."""
    if axis is None:
        return F.cumsum(F.reshape(self, (-1,)), 0)
    return F.cumsum(self, axis)


_METHODS = (
    __add__, __radd__, __sub__, __rsub__, __mul__, __rmul__, __truediv__, __rtruediv__,
    __matmul__, __rmatmul__, __neg__, __pos__, astype, reshape, sum, mean,
    add, sub, mul, div, matmul, maximum, minimum, equal, tanh, sigmoid, relu, exp, log, sqrt, square,
    expand_dims, squeeze, transpose, argmax, max, argmin, min, prod, all, any, cumsum,
)  # fmt: skip


# The arithmetic operators' primitives; ``reflected``: the Tensor is the right operand.
_OPERATORS = {
    __add__: (F.add, False), __radd__: (F.add, True), __sub__: (F.sub, False), __rsub__: (F.sub, True),
    __mul__: (F.mul, False), __rmul__: (F.mul, True), __truediv__: (F.div, False), __rtruediv__: (F.div, True),
    __matmul__: (F.matmul, False), __rmatmul__: (F.matmul, True),
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


install()
