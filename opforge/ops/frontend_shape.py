"""MindSpore operator classes that need nothing but a Tensor's metadata or values, no primitive:
``Depend`` (graph-mode ordering: eagerly its first input), ``Print``, ``Shape`` (the shape as a tuple),
``DType`` (the dtype) and ``TensorShape``/``DynamicShape`` (the shape as an int Tensor), with their functional
forms ``depend``, ``print_``, ``shape`` and ``dyn_shape`` (which ``ops.functional`` exports, as MindSpore's
``F`` has them)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch import sharding, side_outputs
from opforge.ops.host_op import HostOp
from opforge.tensor import Tensor, is_placeholder

__all__ = ["Depend", "Print", "Shape", "DType", "TensorShape", "DynamicShape", "depend", "print_", "shape", "dyn_shape"]


class Depend:
    """``Depend()(value, expr)``: ``value``. In MindSpore's graph mode it orders ``expr`` before the users
    of ``value``; calls run in program order here (eagerly and in a trace), so ``expr`` has run already."""

    def __call__(self, value, expr):
        return value


class Print:
    """``Print()(*inputs)``: prints the Tensors (their values) and strings, one line each, as MindSpore's Print;
    returns None. Under ``jit`` (GRAPH_MODE) each run of the step prints its own values once its program has run
    (the Tensors are extra outputs of the trace: opforge/dispatch/side_outputs.py). In a parallel network each
    rank prints its block of a split Tensor, as MindSpore's ranks print their slices, and a rank of another
    pipeline stage (whose Tensors there are placeholders, as under abstract evaluation) prints nothing."""

    def __call__(self, *inputs):
        for x in inputs:
            if not isinstance(x, (Tensor, str, int, float, bool, mstype.Type)):
                raise TypeError(
                    f"For 'Print', each input must be a Tensor, a string or a number, but got {type(x).__name__}."
                )
        tensors = tuple(x for x in inputs if isinstance(x, Tensor))
        if any(is_placeholder(x) for x in tensors):
            return
        layout = tuple(None if isinstance(x, Tensor) else x for x in inputs)
        side_outputs.emit(_print_lines, layout, tuple(sharding.local_of(x) for x in tensors))


def _print_lines(layout: tuple, tensors: tuple) -> None:
    """One line per item of ``layout``: the next of ``tensors`` where it holds None."""
    values = iter(tensors)
    for item in layout:
        if item is None:
            x = next(values)
            print(f"Tensor(shape={list(x.shape)}, dtype={x.dtype}, value=\n{np.array2string(x.asnumpy())})")
        else:
            print(item)


def depend(value, expr):
    """MindSpore's ``ops.depend``: ``Depend()(value, expr)``, that is ``value``."""
    return value


def print_(*input_x):
    """MindSpore's ``ops.print_``: ``Print()(*input_x)``."""
    return Print()(*input_x)


def tensor_arg(op_name: str, x) -> Tensor:
    """``x``, checked to be a Tensor (the 'input_x' of ``op_name``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op_name}', the 'input_x' must be a Tensor, but got {type(x).__name__}.")
    return x


class Shape(HostOp):
    """``Shape()(input_x)``: the shape of ``input_x`` as a tuple of ints (-1 where a placeholder's dim is
    unknown), as MindSpore's."""

    def __call__(self, input_x):
        return tuple(tensor_arg("Shape", input_x).shape)


class DType(HostOp):
    """``DType()(input_x)``: the dtype of the Tensor ``input_x`` (``mstype.float32``, ...), as MindSpore's."""

    def __call__(self, input_x):
        if not isinstance(input_x, Tensor):
            raise TypeError(f"For 'DType', the 'input_x' must be a Tensor, but got {type(input_x).__name__}.")
        return input_x.dtype


class TensorShape(HostOp):
    """``TensorShape(dtype=mstype.int64)()(input_x)``: the shape of ``input_x`` as a 1-D int Tensor."""

    def __init__(self, dtype=mstype.int64):
        self.dtype = mstype.to_dtype(dtype)
        if self.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{type(self).__name__}', the 'dtype' must be int32 or int64, but got {self.dtype}.")

    def __call__(self, input_x):
        shape = tuple(tensor_arg(type(self).__name__, input_x).shape)
        if any(d < 0 for d in shape):
            raise ValueError(
                f"For '{type(self).__name__}', the shape {list(shape)} has unknown dims: there is no value to give yet."
            )
        return Tensor(np.asarray(shape, self.dtype.np_dtype), device=input_x.device)


class DynamicShape(TensorShape):
    """``DynamicShape()(input_x)``: MindSpore's older name of TensorShape."""


def shape(input_x) -> tuple:
    """MindSpore's ``ops.shape``: ``input_x``'s shape as a tuple."""
    return Shape()(input_x)


def dyn_shape(input_x) -> Tensor:
    """MindSpore's ``ops.dyn_shape``: ``input_x``'s shape as an int64 Tensor."""
    return TensorShape()(input_x)
