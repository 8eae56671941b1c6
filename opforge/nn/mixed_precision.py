"""The parameters of a cell set by ``Cell.to_float``: cast to its dtype where its primitives read them.

``to_float(float16)`` casts a cell's float Tensor inputs; its weights stay float32 Parameters (the
optimizer updates them in float32). While such a cell's construct runs, ``ParameterCast`` (an
interpreter) casts each float Parameter a primitive reads to the cell's dtype first, with a Cast the
enclosing tape or trace records (so the gradient comes back to the float32 Parameter, cast back),
as MindSpore inserts casts of a float16 cell's weights. The innermost such cell decides (a BatchNorm
kept in float32 inside a float16 network reads its Parameters uncast); Parameters a primitive writes in
place are never cast, nor those MindSpore's signature marks written where opforge's does not (BatchNorm's
scale, bias, mean and variance in training). So amp's O3 runs BatchNorm on a float16 x with float32
parameters, as MindSpore does; opforge computes that call in float32 (the dtype group's promotion) and, as
MindSpore's kernel does, gives y back in x's dtype (float16), the statistics in float32.
"""

from __future__ import annotations

import contextlib

from opforge import dtype as mstype
from opforge.dispatch import binding
from opforge.dispatch.interpreter import Interpreter, current_interpreter
from opforge.primitives.array_ops import Cast
from opforge.tensor import Parameter, Tensor

__all__ = ["ParameterCast", "parameters_cast_to", "mixed_precision_cast", "kept_positions"]

_cast = Cast()

# MindSpore's RW_WRITE inputs that opforge's signatures leave plain (opforge's BatchNorm updates its moving
# statistics after the kernel): not cast either, when the primitive runs with this attr set.
_WRITTEN_IN_MINDSPORE = {"BatchNorm": ("is_training", (1, 2, 3, 4))}
# (output, input): MindSpore's kernel gives that output in that input's dtype when the other inputs are wider
# (BatchNorm's y in x's dtype, its statistics in the parameters'); opforge's computes the group in the widest.
_OUTPUT_FOLLOWS_INPUT = {"BatchNorm": (0, 0)}


def kept_positions(prim) -> tuple:
    """The inputs of ``prim`` amp never casts: those it writes in place (RW_WRITE), and those MindSpore's
    signature marks written where opforge's does not (BatchNorm's parameters in training)."""
    written = binding.written_positions(prim._signature())
    rule = _WRITTEN_IN_MINDSPORE.get(prim.name)
    if rule is not None and getattr(prim, rule[0], False):
        written = written + rule[1]
    return written


def mixed_precision_cast(dst_type, x):
    """MindSpore's ``F.mixed_precision_cast``: ``x`` with its float Tensors (in tuples, lists and dicts too)
    cast to ``dst_type``; anything else unchanged."""
    if isinstance(x, Tensor):
        return _cast(x, dst_type) if x.dtype in mstype.float_type and x.dtype is not dst_type else x
    if isinstance(x, (tuple, list)):
        return type(x)(mixed_precision_cast(dst_type, v) for v in x)
    if isinstance(x, dict):
        return {k: mixed_precision_cast(dst_type, v) for k, v in x.items()}
    return x


class ParameterCast(Interpreter):
    """Casts the float Parameters of each primitive call to the innermost to_float cell's dtype."""

    def __init__(self):
        self.dtypes: list = []

    def process_primitive(self, prim, args: tuple):
        dtype = self.dtypes[-1]
        other = [i for i, a in enumerate(args) if isinstance(a, Parameter) and a.dtype in mstype.float_type]
        other = [i for i in other if args[i].dtype is not dtype]
        if other:  # (most calls read no Parameter: the signature is looked at only for those that do)
            written = kept_positions(prim)
            cast = [i for i in other if i not in written]
            args = tuple(
                self.parent.process_primitive(_cast, (a, dtype)) if i in cast else a for i, a in enumerate(args)
            )
        out = self.parent.process_primitive(prim, args)
        follows = _OUTPUT_FOLLOWS_INPUT.get(prim.name)
        if follows is not None:  # (the call computed in its group's promoted dtype: that output comes back)
            o, i = follows
            want = getattr(args[i], "dtype", None)
            if want in mstype.float_type and out[o].dtype is not want:
                cast = self.parent.process_primitive(_cast, (out[o], want))
                out = (*out[:o], cast, *out[o + 1 :])
        return out


@contextlib.contextmanager
def parameters_cast_to(dtype):
    """Within: primitives read float Parameters cast to ``dtype`` (a to_float cell's construct)."""
    innermost = current_interpreter()
    if isinstance(innermost, ParameterCast):  # a to_float cell inside another: its dtype, then back
        innermost.dtypes.append(dtype)
        try:
            yield
        finally:
            innermost.dtypes.pop()
        return
    interpreter = ParameterCast()
    interpreter.dtypes.append(dtype)
    with interpreter:
        yield
