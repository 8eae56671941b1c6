"""What the trace compiler's elementwise fusion needs from the kernels: which functor an operator's
elementwise kernel applies, and, per backend, a *fuser* that turns a group of such calls into one
kernel generated from the same functor headers.

A ``FusedGroup`` describes the group independently of the backend: every value has one dtype and one
shape; ``expressions`` apply functors to operands that are the group's inputs (``("in", k)``), weak
scalars (``("scalar", k)``) or earlier expressions (``("value", k)``); ``outputs`` are the expressions
the rest of the program reads. A backend registers ``fuser(group) -> run(inputs) -> outputs`` with
``register_fuser`` (the CPU: C++ through the build cache of ``opforge.utils.cpp_extension``,
``opforge/kernels/cpu/fused.py``).

The functor of an operator comes from its built-in GPU kernel (``CudaKernel.functor_type``): the GPU
and the CPU kernels apply the same functor (``csrc/include/opforge/functors/``), so this is the one
place it is written down.
"""

from __future__ import annotations

import math
import pathlib
from typing import Callable, NamedTuple

from opforge import dtype as mstype
from opforge import sysconfig
from opforge.kernels import registry

__all__ = [
    "FUSED_CTYPES",
    "Expression",
    "FusedGroup",
    "Reduction",
    "fuses_reductions",
    "elementwise_functor",
    "fuser_for",
    "functor_headers",
    "loop_body",
    "register_functor",
    "register_fuser",
]


class Expression(NamedTuple):
    """``functor(*operands)``: ``functor`` a C++ expression constructing the functor (fields filled in)."""

    functor: str
    operands: tuple  # ("in", k) | ("scalar", k) | ("value", k)


class Reduction(NamedTuple):
    """A reduction ending a group: ``reducer`` (a reducer of ``opforge/functors/reduce.h``, e.g.
    "SumReducer") folds expression ``value`` over rows of ``row`` consecutive elements (the trailing
    dims reduced), one output per row, of ``shape``."""

    reducer: str
    value: int
    row: int
    shape: tuple


class FusedGroup(NamedTuple):
    dtype: mstype.Type
    shape: tuple
    device: object
    n_inputs: int
    scalars: tuple  # the weak scalars' values, as floats
    expressions: tuple
    outputs: tuple  # indices into expressions
    ops: tuple  # the operators fused, in order (for names and errors)
    periods: tuple = ()  # per input: its elements repeated along the values (n: none; 1: one value)
    preludes: tuple = ()  # the C++ of users' functors the expressions apply (inlined in the source)
    reduction: Reduction | None = None  # a reduction of one value, written after the outputs

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def row(self) -> int:
        """The length of the rows the broadcast inputs repeat (0: none)."""
        return next((p for p in self.periods if p not in (1, self.numel)), 0)


# The dtypes a fused kernel computes in, and their C++ type (both backends): those whose compute type is
# themselves, so each fused value is what the unfused kernel would have stored.
FUSED_CTYPES = {mstype.float32: "float", mstype.float64: "double"}

_FUSERS: dict = {}
_REDUCING: set = set()


def register_fuser(backend: str, fuser: Callable, reductions: bool = False) -> None:
    """``fuser(group)`` returns ``run(input_tensors) -> tuple of output tensors`` for ``backend``;
    ``reductions``: it also takes groups ending in a ``Reduction`` (its output comes last)."""
    _FUSERS[backend] = fuser
    if reductions:
        _REDUCING.add(backend)


def fuser_for(backend: str):
    return _FUSERS.get(backend)


def fuses_reductions(backend: str) -> bool:
    return backend in _REDUCING


class UserFunctor(NamedTuple):
    """A user's operator whose kernels apply ``functor`` element by element (``register_functor``)."""

    functor: str  # the C++ type, e.g. "my::SoftClipOp"
    arity: int
    source: str  # the C++ defining it (a header's text)
    fields: tuple  # (attr name, NumPy dtype, default) per field, in the struct's order


_USER_FUNCTORS: dict = {}


def register_functor(op_name: str, functor: str, header, arity: int, fields: tuple = ()) -> None:
    """Declare that ``op_name``'s kernels compute ``out[i] = functor{fields}(in0[i], ...)``: the
    functor (a struct with a ``__host__ __device__`` call operator, ``OPF_HD`` from
    ``opforge/portable.h``) defined in ``header`` (a path, or its text), its fields read from the
    primitive's attrs as ``fields`` lists them ((attr name, NumPy dtype, default), in the struct's
    order). Under ``jit`` the operator then fuses with its elementwise neighbours like a built-in."""
    if not isinstance(arity, int) or arity not in (1, 2, 3):
        raise ValueError(f"For '{op_name}', the functor's 'arity' must be 1, 2 or 3, but got {arity!r}.")
    text = pathlib.Path(header).read_text() if isinstance(header, pathlib.Path) or "\n" not in str(header) else header
    if functor.split("::")[-1] not in text:
        raise ValueError(f"For '{op_name}', the functor '{functor}' is not defined in the header given.")
    _USER_FUNCTORS[op_name] = UserFunctor(functor, arity, text, tuple(fields))


def functor_headers() -> list:
    """Every functor header (a group may draw on any of them; each is small and guarded)."""
    folder = pathlib.Path(sysconfig.get_include()) / "opforge" / "functors"
    return sorted(f"opforge/functors/{p.name}" for p in folder.glob("*.h"))


def loop_body(group: FusedGroup, indent: str, row_index: str, apply: str = "static_cast<T>({functor}({args}))") -> list:
    """The C++ statements for element ``i`` (both backends): ``in<k>`` and ``out<k>`` are the
    arrays, ``s<k>`` the scalars, ``T`` the element type; an input repeated along rows is read at
    ``row_index`` (the element's place in its row), a single value at 0. ``apply`` is the C++ of a
    functor's application (``{functor}``: its construction, ``{args}``: the operands)."""

    def ref(kind: str, j: int) -> str:
        if kind == "scalar":
            return f"s{j}"
        if kind == "value":
            return f"v{j}"
        repeat = group.periods[j] if group.periods else group.numel
        return f"in{j}[{'i' if repeat == group.numel else '0' if repeat == 1 else row_index}]"

    lines = []
    for k, e in enumerate(group.expressions):
        args = ", ".join(ref(kind, j) for kind, j in e.operands)
        lines.append(f"{indent}const T v{k} = {apply.format(functor=e.functor, args=args)};")
    lines += [f"{indent}out{k}[i] = v{e};" for k, e in enumerate(group.outputs)]
    return lines


def _literal(value, np_type: str) -> str:
    """A C++ literal of a functor field: exact for floats (hexadecimal), plain for ints and bools."""
    if np_type.startswith("float"):
        return float(value).hex()
    if np_type == "bool":
        return "true" if value else "false"
    return str(int(value))


def elementwise_functor(op_name: str, dtype: mstype.Type, attrs: dict):
    """``(functor expression, arity, prelude)`` of ``op_name``'s elementwise kernel for inputs and
    output of ``dtype``: a user's declared functor (``register_functor``; prelude: its C++), or the
    functor of the built-in kernels on every backend (prelude ""); None when neither (not a plain
    elementwise kernel, or a kernel a user registered in place of the built-in one)."""
    user = _USER_FUNCTORS.get(op_name)
    if user is not None:
        return _expression(user.functor, user.fields, attrs), user.arity, user.source
    gpu = [e for e in registry.kernels_for(op_name, "GPU") if _is_same_dtype(e.attr, dtype)]
    cpu = [e for e in registry.kernels_for(op_name, "CPU") if _is_same_dtype(e.attr, dtype)]
    # (built-in CUDA kernels' source is "cuda:<file>")
    if len(gpu) != 1 or len(cpu) != 1 or not gpu[0].source.startswith("cuda:") or cpu[0].source != "builtin":
        return None
    kernel = gpu[0].impl
    arity = getattr(kernel, "arity", 0)
    if not arity or len(gpu[0].attr.inputs) != arity:
        return None
    return _expression(kernel.functor_type, kernel.functor, attrs), arity, ""


def _expression(functor: str, fields: tuple, attrs: dict) -> str:
    """The C++ constructing ``functor`` with its fields from ``attrs``."""
    return f"{functor}{{{', '.join(_literal(attrs.get(name, default), t) for name, t, default in fields)}}}"


def _is_same_dtype(attr, dtype) -> bool:
    return all(d == dtype for d in attr.inputs) and list(attr.outputs) == [dtype]
