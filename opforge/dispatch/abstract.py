"""Abstract evaluation: run a function for the shapes and dtypes of its results, without a kernel.

``eval_shape(fn, *specs)`` calls ``fn`` with ``specs`` (placeholders such as
``Tensor(shape=[None, 3], dtype=mstype.float32)``, concrete Tensors, or any other argument) under an
``AbstractInterpreter``: each primitive call is bound and promoted as a plan would (``call_metas``),
then only its inference runs (``__infer__``), and its outputs are placeholders, Tensors with a meta
and no data. No kernel runs and nothing is allocated, so a whole network's output shapes (with ``-1``
where a dim depends on an unknown input dim) come out for the cost of its inference.

It works through Cells (``Cell.__call__`` is Python calling primitives) and through ``grad`` /
``GradOperation``: the tape records the abstract calls and the backward pass calls the bprops, which
are primitives too. Python code that reads a placeholder's data (``asnumpy()``, ``float(x)``, ``if x``)
raises ``PlaceholderError``, as it would have to in a graph.
"""

from __future__ import annotations

from opforge.device import get_device
from opforge.dispatch import binding
from opforge.dispatch.interpreter import Interpreter
from opforge.dispatch.plan import _normalise_outputs, _slot_meta, call_metas
from opforge.kernels.selection import select_kernel
from opforge.tensor import Tensor, is_placeholder

__all__ = ["AbstractInterpreter", "AbstractCall", "eval_shape", "abstract_call"]


class AbstractCall:
    """One primitive call seen by an ``AbstractInterpreter``: the primitive, its input metas (per
    tensor input: ``(dtype, shape, device)``, in order) and its output metas."""

    __slots__ = ("prim", "in_metas", "out_metas")

    def __init__(self, prim, in_metas: tuple, out_metas: tuple):
        self.prim, self.in_metas, self.out_metas = prim, in_metas, out_metas

    def __repr__(self) -> str:
        shown = lambda metas: ", ".join(f"{d}{list(s)}" for d, s, _ in metas)  # noqa: E731
        return f"{self.prim.name}({shown(self.in_metas)}) -> {shown(self.out_metas)}"


def abstract_call(prim, args: tuple, select_kernels: bool = False):
    """``prim(*args)`` evaluated abstractly: its outputs as placeholders (an in-place output is the
    Parameter it would write, unwritten), and the ``AbstractCall`` record. With ``select_kernels`` the
    kernel a plan would run is selected too (a dtype without one raises as the eager call would)."""
    if prim._has_infer_value() and not any(is_placeholder(a) for a in args):
        value = prim.infer_value(*binding.bind_arguments(prim.name, prim._signature(), args, {}))
        if value is not None:
            value = value if isinstance(value, Tensor) else Tensor(value)
            return value, AbstractCall(prim, (), (value._meta,))
    call = call_metas(prim, args)
    inferred = prim.__infer__(*call.metas)
    out_shapes, out_dtypes = _normalise_outputs(prim, inferred, unknown=True)
    one_tuple = isinstance(inferred["dtype"], (tuple, list)) and len(out_dtypes) == 1
    if select_kernels:
        in_dtypes = tuple(_slot_meta(call.metas, slot, "dtype") for slot in call.tensor_pos)
        select_kernel(prim.name, call.backend, in_dtypes, out_dtypes)
    device = get_device(call.backend)
    writes = binding.written_positions(prim._signature())
    outs = []
    for o, (shape, dtype) in enumerate(zip(out_shapes, out_dtypes)):
        if o < len(writes):
            outs.append(call.args[writes[o]])  # MindSpore's in-place convention: the written Parameter
        else:
            outs.append(Tensor._placeholder(dtype, shape, device))
    in_metas = tuple(
        (_slot_meta(call.metas, s, "dtype"), tuple(_slot_meta(call.metas, s, "shape")), device) for s in call.tensor_pos
    )
    record = AbstractCall(prim, in_metas, tuple(t._meta for t in outs))
    if len(outs) == 1 and not one_tuple:
        return outs[0], record
    return tuple(outs), record


class AbstractInterpreter(Interpreter):
    """An interpreter that runs only inference: every primitive call gives placeholders.

    ``calls`` lists an ``AbstractCall`` per primitive call, in order (the shapes of a whole function,
    as a graph compiler would see them). It never passes a call down: nothing under it runs.
    """

    def __init__(self, select_kernels: bool = False):
        self.select_kernels = select_kernels
        self.calls: list = []

    def process_primitive(self, prim, args: tuple):
        out, record = abstract_call(prim, args, self.select_kernels)
        self.calls.append(record)
        return out


def _as_placeholders(value):
    """The results of ``fn`` with every Tensor as a placeholder of its meta (tuples, lists and dicts
    kept, other values as they are)."""
    if isinstance(value, Tensor):
        return value if is_placeholder(value) else Tensor._placeholder(*value._meta)
    if isinstance(value, (tuple, list)):
        return type(value)(_as_placeholders(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_placeholders(v) for k, v in value.items()}
    return value


def eval_shape(fn, *specs, **kwargs):
    """The results of ``fn(*specs, **kwargs)`` as placeholder Tensors (their ``shape`` and ``dtype``),
    found by inference alone: no kernel runs and no output memory is allocated.

    ``specs`` are placeholders (``Tensor(shape=[None, 3], dtype=mstype.float32)``: ``-1`` stays
    ``-1`` in every dim that depends on it), concrete Tensors (their metas count, never their data)
    or any other argument ``fn`` takes. ``fn`` is a function or a Cell; a Cell given no ``specs``
    takes the ones of its ``set_inputs``. Returns what ``fn`` returns, each Tensor a placeholder.
    """
    if not specs and not kwargs and hasattr(fn, "get_inputs"):
        stored = fn.get_inputs()
        if stored:
            specs = tuple(stored)
    with AbstractInterpreter():
        out = fn(*specs, **kwargs)
    return _as_placeholders(out)
