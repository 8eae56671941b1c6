"""The parameters of a cell set by ``Cell.to_float``: cast to its dtype where its primitives read them.

``to_float(float16)`` casts a cell's float Tensor inputs; its weights stay float32 Parameters (the
optimizer updates them in float32). While such a cell's construct runs, ``ParameterCast`` (an
interpreter) casts each float Parameter a primitive reads to the cell's dtype first, with a Cast the
enclosing tape or trace records (so the gradient comes back to the float32 Parameter, cast back),
as MindSpore inserts casts of a float16 cell's weights. The innermost such cell decides (a BatchNorm
kept in float32 inside a float16 network reads its Parameters uncast); Parameters a primitive writes in
place are never cast.
"""

from __future__ import annotations

import contextlib

from opforge import dtype as mstype
from opforge.dispatch import binding
from opforge.dispatch.interpreter import Interpreter, current_interpreter
from opforge.primitives.array_ops import Cast
from opforge.tensor import Parameter

__all__ = ["ParameterCast", "parameters_cast_to"]

_cast = Cast()


class ParameterCast(Interpreter):
    """Casts the float Parameters of each primitive call to the innermost to_float cell's dtype."""

    def __init__(self):
        self.dtypes: list = []

    def process_primitive(self, prim, args: tuple):
        dtype = self.dtypes[-1]
        other = [i for i, a in enumerate(args) if isinstance(a, Parameter) and a.dtype in mstype.float_type]
        other = [i for i in other if args[i].dtype is not dtype]
        if other:  # (most calls read no Parameter: the signature is looked at only for those that do)
            written = binding.written_positions(prim._signature())
            cast = [i for i in other if i not in written]
            args = tuple(
                self.parent.process_primitive(_cast, (a, dtype)) if i in cast else a for i, a in enumerate(args)
            )
        return self.parent.process_primitive(prim, args)


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
