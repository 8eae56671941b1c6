"""The values a cell set by ``Cell.to_float`` reads: cast to its dtype where its primitives read them.

``to_float(float16)`` runs a cell with "all its inputs, including input, Parameter and Tensor" in float16
(MindSpore's docstring). MindSpore's graph mode casts exactly those: the cell's arguments (tuples, lists and
dicts of them too), each Parameter its construct reads and each constant Tensor it reads (a Tensor attribute
such as Tacotron2's ``self.go_frame``), each at the point it is read, float ones only (ints and bools stay).
Values computed inside the cell keep their dtype, so an explicit ``Cast(x, float32)`` there holds. opforge
follows that rule in both modes: the cell casts its arguments (``Cell._run_call``), and while its construct
runs ``ParameterCast`` (an interpreter) casts each float Parameter and each of the cell's float Tensor
attributes a primitive reads (also inside a tuple or list argument, Concat's) to the cell's dtype first, with
a Cast the enclosing tape or trace records (so the gradient comes back to the float32 Parameter, cast back).
(MindSpore 2.x's PyNative casts more, every float input of every primitive but Cast, intermediates included;
its 1.x PyNative cast less, the arguments and Parameters only.)

The innermost such cell decides (a BatchNorm kept in float32 inside a float16 network reads its Parameters
uncast); a cell without a precision of its own inside one runs in the enclosing cell's. Parameters a
primitive writes in place are never cast, nor those MindSpore's signature marks written where opforge's does
not (BatchNorm's scale, bias, mean and variance in training). So amp's O3 runs BatchNorm on a float16 x with
float32 parameters, as MindSpore does; opforge computes that call in float32 (the dtype group's promotion) and,
as MindSpore's kernel does, gives y back in x's dtype (float16), the statistics in float32.
"""

from __future__ import annotations

import contextlib

from opforge import dtype as mstype
from opforge.dispatch import binding
from opforge.dispatch.interpreter import Interpreter, current_interpreter
from opforge.primitives.array_ops import Cast
from opforge.tensor import Parameter, Tensor

__all__ = ["ParameterCast", "parameters_cast_to", "mixed_precision_cast", "kept_positions", "cell_constants"]

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


def _rebuilt(seq, items: list):
    """``items`` in a sequence of ``seq``'s type (a namedtuple takes them as its fields)."""
    return type(seq)(*items) if hasattr(seq, "_fields") else type(seq)(items)


def mixed_precision_cast(dst_type, x):
    """MindSpore's ``F.mixed_precision_cast``: ``x`` with its float Tensors (in tuples, lists and dicts too)
    cast to ``dst_type``; anything else unchanged."""
    if isinstance(x, Tensor):
        return _cast(x, dst_type) if x.dtype in mstype.float_type and x.dtype is not dst_type else x
    if isinstance(x, (tuple, list)):
        return _rebuilt(x, [mixed_precision_cast(dst_type, v) for v in x])
    if isinstance(x, dict):
        return {k: mixed_precision_cast(dst_type, v) for k, v in x.items()}
    return x


def cell_constants(cell) -> dict:
    """``cell``'s constant float Tensors, by id: its Tensor attributes that are not Parameters (what
    MindSpore's graph mode casts where a to_float cell reads them). The dict holds them, so no other
    Tensor takes one of their ids while the cell's construct runs."""
    return {
        id(v): v
        for v in vars(cell).values()
        if isinstance(v, Tensor) and not isinstance(v, Parameter) and v.dtype in mstype.float_type
    }


def _read_cast(a, dtype, constants: dict) -> bool:
    """Whether the argument ``a`` (or a Tensor in it, a tuple or list) is one to_float casts to ``dtype``:
    a float Parameter or one of the cell's constant Tensors, of another dtype."""
    if isinstance(a, Tensor):
        return (isinstance(a, Parameter) or constants.get(id(a)) is a) and (
            a.dtype is not dtype and a.dtype in mstype.float_type
        )
    if isinstance(a, (tuple, list)):
        return any(_read_cast(v, dtype, constants) for v in a)
    return False


class ParameterCast(Interpreter):
    """Casts the float Parameters and the cell's constant float Tensors each primitive call reads to the
    innermost to_float cell's dtype."""

    def __init__(self):
        self.scopes: list = []  # (dtype, cell_constants) of each to_float cell whose construct runs, innermost last

    def _cast_read(self, a, dtype, constants: dict):
        if isinstance(a, Tensor):
            return self.parent.process_primitive(_cast, (a, dtype)) if _read_cast(a, dtype, constants) else a
        return _rebuilt(a, [self._cast_read(v, dtype, constants) for v in a])

    def process_primitive(self, prim, args: tuple):
        dtype, constants = self.scopes[-1]
        other = [i for i, a in enumerate(args) if _read_cast(a, dtype, constants)]
        if other:  # (most calls read no Parameter nor constant: the signature is looked at only for those that do)
            written = kept_positions(prim)
            cast = [i for i in other if i not in written]
            args = tuple(self._cast_read(a, dtype, constants) if i in cast else a for i, a in enumerate(args))
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
def parameters_cast_to(dtype, constants: dict | None = None):
    """Within: primitives read float Parameters, and the Tensors of ``constants`` (``cell_constants`` of the
    cell), cast to ``dtype`` (a to_float cell's construct)."""
    scope = (dtype, {} if constants is None else constants)
    innermost = current_interpreter()
    if isinstance(innermost, ParameterCast):  # a to_float cell inside another: its dtype, then back
        innermost.scopes.append(scope)
        try:
            yield
        finally:
            innermost.scopes.pop()
        return
    interpreter = ParameterCast()
    interpreter.scopes.append(scope)
    with interpreter:
        yield
