"""MindSpore operator classes that opforge builds from other primitives, with no kernel of their own:
``Zeros``, ``Ones`` (Fill), ``Depend`` (graph-mode ordering: eagerly its first input), ``Print``, ``Shape``
(the shape as a tuple), ``TensorShape``/``DynamicShape`` (the shape as an int Tensor) and ``Unique`` (on the
host). They are constructed and called as MindSpore's (``ops.Zeros()((2, 3), mstype.float32)``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.tensor import Tensor

__all__ = [
    "Zeros", "Ones", "Depend", "Print", "Meshgrid", "Einsum", "Shape", "TensorShape", "DynamicShape", "Unique",
    "shape", "dyn_shape", "unique", "depend", "print_",
]  # fmt: skip


class _Filled:
    value = 0

    def __call__(self, size, type=None):  # noqa: A002 (MindSpore's argument name)
        return F._filled(self.__class__.__name__, size, type, self.value)


class Zeros(_Filled):
    """``Zeros()(size, type)``: a tensor of ``size`` (an int or a tuple) filled with 0, of ``type``."""

    value = 0


class Ones(_Filled):
    """``Ones()(shape, type)``: a tensor of ``shape`` (an int or a tuple) filled with 1, of ``type``."""

    value = 1


class Depend:
    """``Depend()(value, expr)``: ``value``. In MindSpore's graph mode it orders ``expr`` before the users
    of ``value``; calls run in program order here (eagerly and in a trace), so ``expr`` has run already."""

    def __call__(self, value, expr):
        return value


class Print:
    """``Print()(*inputs)``: prints the Tensors (their values) and strings, one line each, as MindSpore's
    Print in PyNative mode; returns None."""

    def __call__(self, *inputs):
        for x in inputs:
            if isinstance(x, Tensor):
                print(f"Tensor(shape={list(x.shape)}, dtype={x.dtype}, value=\n{np.array2string(x.asnumpy())})")
            elif isinstance(x, (str, int, float, bool, mstype.Type)):
                print(x)
            else:
                raise TypeError(
                    f"For 'Print', each input must be a Tensor, a string or a number, but got {type(x).__name__}."
                )


class Einsum:
    """``Einsum(equation)(inputs)``: ``ops.einsum(equation, *inputs)``."""

    def __init__(self, equation):
        if not isinstance(equation, str):
            raise TypeError(f"For 'Einsum', the 'equation' must be a str, but got {type(equation).__name__}.")
        self.equation = equation

    def __call__(self, inputs):
        return F.einsum(self.equation, *inputs)


class Meshgrid:
    """``Meshgrid(indexing="xy")(inputs)``: ``ops.meshgrid(*inputs, indexing=indexing)``."""

    def __init__(self, indexing="xy"):
        if indexing not in ("xy", "ij"):
            raise ValueError(f"For 'Meshgrid', the 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
        self.indexing = indexing

    def __call__(self, inputs):
        return F.meshgrid(*inputs, indexing=self.indexing)


def depend(value, expr):
    """MindSpore's ``ops.depend``: ``Depend()(value, expr)``, that is ``value``."""
    return value


def print_(*input_x):
    """MindSpore's ``ops.print_``: ``Print()(*input_x)``."""
    return Print()(*input_x)


def _tensor_arg(op_name: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op_name}', the 'input_x' must be a Tensor, but got {type(x).__name__}.")
    return x


class Shape:
    """``Shape()(input_x)``: the shape of ``input_x`` as a tuple of ints (-1 where a placeholder's dim is
    unknown), as MindSpore's."""

    def __call__(self, input_x):
        return tuple(_tensor_arg("Shape", input_x).shape)


class TensorShape:
    """``TensorShape(dtype=mstype.int64)()(input_x)``: the shape of ``input_x`` as a 1-D int Tensor."""

    def __init__(self, dtype=mstype.int64):
        self.dtype = mstype.to_dtype(dtype)
        if self.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{type(self).__name__}', the 'dtype' must be int32 or int64, but got {self.dtype}.")

    def __call__(self, input_x):
        shape = tuple(_tensor_arg(type(self).__name__, input_x).shape)
        if any(d < 0 for d in shape):
            raise ValueError(
                f"For '{type(self).__name__}', the shape {list(shape)} has unknown dims: there is no value to give yet."
            )
        return Tensor(np.asarray(shape, self.dtype.np_dtype), device=input_x.device)


class DynamicShape(TensorShape):
    """``DynamicShape()(input_x)``: MindSpore's older name of TensorShape."""


class Unique:
    """``Unique()(input_x)`` for a 1-D ``input_x``: ``(y, idx)`` with ``y`` the distinct values in ascending
    order and ``idx`` (int32) the position in ``y`` of each element, so ``y[idx] == input_x``. The output's
    length depends on the data, so it is computed on the host (``np.unique``; a GPU tensor is copied there and
    back); not differentiable, and reading the data inside ``jit`` raises a TraceError."""

    def __call__(self, input_x):
        x = _tensor_arg("Unique", input_x)
        if x.ndim != 1:
            raise ValueError(f"For 'Unique', the 'input_x' must be 1-D, but got shape {list(x.shape)}.")
        values, inverse = np.unique(x.asnumpy(), return_inverse=True)
        return (
            Tensor(values.astype(x.dtype.np_dtype), dtype=x.dtype, device=x.device),
            Tensor(inverse.reshape(-1).astype(np.int32), device=x.device),
        )


def shape(input_x) -> tuple:
    """MindSpore's ``ops.shape``: ``input_x``'s shape as a tuple."""
    return Shape()(input_x)


def dyn_shape(input_x) -> Tensor:
    """MindSpore's ``ops.dyn_shape``: ``input_x``'s shape as an int64 Tensor."""
    return TensorShape()(input_x)


def unique(input) -> tuple:  # noqa: A002 (MindSpore's argument name)
    """MindSpore's ``ops.unique``: ``(output, idx)`` of ``Unique`` (the input flattened first)."""
    x = input if input.ndim == 1 else F.reshape(input, (-1,))
    return Unique()(x)
