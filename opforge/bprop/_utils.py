"""Helpers shared by bprop definitions, written with primitives so they differentiate again."""

from __future__ import annotations

import functools

from opforge import dtype as mstype
from opforge.bprop.tape import needs_input_grad, output_grad_reached
from opforge.ops import functional as F
from opforge.primitives.array_ops import BroadcastTo, Squeeze
from opforge.tensor import Tensor

__all__ = [
    "needs_input_grad",
    "output_grad_reached",
    "broadcast_axes",
    "sum_to_shape",
    "sum_rows",
    "grad_for",
    "broadcast_to",
    "zeros_like",
    "ones_like",
    "zero_grads",
    "reduced_shape",
]


_squeeze0 = Squeeze(0)


@functools.lru_cache(maxsize=512)
def _broadcast_to(shape: tuple) -> BroadcastTo:
    return BroadcastTo(shape)


def broadcast_axes(shape: tuple, out_shape: tuple) -> tuple:
    """Axes of ``out_shape`` along which an input of ``shape`` was broadcast."""
    lead = len(out_shape) - len(shape)
    axes = list(range(lead))
    axes += [lead + i for i, d in enumerate(shape) if d == 1 and out_shape[lead + i] != 1]
    return tuple(axes)


_ones_rows: dict = {}  # (rows, dtype) -> a constant ones(1, rows) Tensor


def sum_rows(t: Tensor) -> Tensor:
    """The sum over axis 0 of a 2-D tensor (the gradient of a bias added to every row).

    For float32 / float64 it is ``ones(1, N) @ t`` squeezed: one BLAS call, about twice as fast as
    the ReduceSum kernel along the batch axis. Both are primitives, so it differentiates again.
    """
    dtype, shape, device = t._meta
    if len(shape) != 2 or dtype.kind != "f" or dtype.itemsize < 4 or shape[0] < 0:
        return F.reduce_sum_op(False)(t, (0,))
    key = (shape[0], dtype, device)
    ones = _ones_rows.get(key)
    if ones is None:
        if len(_ones_rows) >= 64:
            _ones_rows.clear()
        ones = _ones_rows[key] = Tensor._from_array(device.full((1, shape[0]), 1, dtype.np_dtype), dtype, device)
    return _squeeze0(F.matmul(ones, t))


def is_complex(t) -> bool:
    """Whether ``t`` is a complex Tensor or a Python complex number."""
    return isinstance(t, complex) or (isinstance(t, Tensor) and t.dtype.kind == "c")


def conj(t):
    """``conj(t)`` for a complex Tensor or Python complex, ``t`` itself otherwise. A holomorphic
    op's bprop is ``dx = dout * conj(f'(x))`` (MindSpore's and PyTorch's convention: the gradient of
    a real loss L w.r.t. z = a + ib is dL/da + i dL/db)."""
    if isinstance(t, complex):
        return t.conjugate()
    return F.conj(t) if is_complex(t) else t


def _sum_complex_to_shape(dout: Tensor, shape: tuple) -> Tensor:
    # The reductions have no complex kernels: sum the real and the imaginary parts apart (Cast to
    # the real dtype takes the real part; re(-i z) = im(z)) and put them back together.
    real = mstype.float32 if dout.dtype is mstype.complex64 else mstype.float64
    re = sum_to_shape(F.cast(dout, real), shape)
    im = sum_to_shape(F.cast(F.mul(dout, -1j), real), shape)
    return F.add(F.cast(re, dout.dtype), F.mul(F.cast(im, dout.dtype), 1j))


def sum_to_shape(dout: Tensor, shape: tuple) -> Tensor:
    """Reduce a broadcast gradient back to the input's ``shape`` (the adjoint of broadcasting)."""
    shape = tuple(shape)
    if dout.shape == shape:
        return dout
    if dout.dtype.kind == "c":
        return _sum_complex_to_shape(dout, shape)
    axes = broadcast_axes(shape, dout.shape)
    if axes and axes == tuple(range(len(dout.shape) - len(shape))):  # only leading axes: no Reshape
        return sum_rows(dout) if axes == (0,) and len(shape) == 1 else F.reduce_sum_op(False)(dout, axes)
    summed = F.reduce_sum_op(True)(dout, axes) if axes else dout
    return F.reshape(summed, shape) if summed.shape != shape else summed


def broadcast_to(t: Tensor, shape: tuple) -> Tensor:
    """``t`` broadcast to ``shape`` (BroadcastTo; its adjoint is ``sum_to_shape``)."""
    shape = tuple(shape)
    if t.shape == shape:
        return t
    if any(d < 0 for d in shape):  # (only placeholders have unknown dims; ``t`` may be a concrete seed)
        # Abstract evaluation of a placeholder: BroadcastTo reads a -1 in 'shape' as "keep the input's
        # dim", which a new leading dim has not; the result is the placeholder of the unknown shape.
        return Tensor._placeholder(t.dtype, shape, t._meta[2])
    return _broadcast_to(shape)(t)


def grad_for(x, g):
    """The gradient ``g`` of a broadcast, maybe promoted, input ``x`` in ``x``'s shape and dtype;
    ``None`` when ``x`` is not a Tensor (a Python scalar or a constant)."""
    if not isinstance(x, Tensor):
        return None
    g = sum_to_shape(g, x.shape)
    if g.dtype is not x.dtype and x.dtype.kind in "fc":
        g = F.cast(g, x.dtype)
    return g


def zeros_like(t: Tensor) -> Tensor:
    """Zeros of ``t``'s shape and dtype (ZerosLike): the gradient of inputs that have none."""
    return F.zeros_like(t)


def ones_like(t: Tensor) -> Tensor:
    """Ones of ``t``'s shape and dtype (OnesLike)."""
    return F.ones_like(t)


def zero_grads(*args) -> tuple:
    """Zero gradients for every input: zeros for Tensors, ``None`` for constants, scalars and inputs
    whose gradient nobody uses (``needs_input_grad``)."""
    return tuple(zeros_like(a) if isinstance(a, Tensor) and needs_input_grad(i) else None for i, a in enumerate(args))


def reduced_shape(x_shape: tuple, axis) -> tuple:
    """``x_shape`` with the reduced axes kept as 1 (``axis``: an int, a sequence, or () for all)."""
    ndim = len(x_shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if not axes:
        return (1,) * ndim
    axes = {a % ndim for a in axes}
    return tuple([1 if i in axes else d for i, d in enumerate(x_shape)])
