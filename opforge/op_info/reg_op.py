"""Op info builders: which inputs, outputs, attrs and dtype combinations a backend supports.

Written in MindSpore's style::

    elu_op_info = CpuRegOp("Elu") \\
        .input(0, "x", "required") \\
        .output(0, "y", "required") \\
        .attr("alpha", "optional", "float", "all", "1.0") \\
        .dtype_format(DataType.F32_Default, DataType.F32_Default) \\
        .get_op_info()
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from opforge import dtype as mstype

__all__ = ["OpInfo", "RegOp", "CpuRegOp", "GpuRegOp", "CustomRegOp", "kernel_signature", "format_signature"]

_PARAM_TYPES = ("required", "optional", "dynamic")


def kernel_signature(kernel_attr) -> tuple:
    """The dtype_format row that declares a kernel, as (input dtypes, output dtypes): the one mapping between
    KernelAttrs and op info rows. A variadic (all_same) kernel lists its one dtype once, as its op info does
    for the dynamic input."""
    return tuple(kernel_attr.inputs), tuple(kernel_attr.outputs)


def format_signature(signature) -> str:
    """``(Float32, Float32) -> (Float32)`` for ``kernel_signature``'s or ``dtype_signatures``' tuples."""
    ins, outs = signature
    return f"({', '.join(map(str, ins))}) -> ({', '.join(map(str, outs))})"


@dataclass(frozen=True)
class OpInfo:
    """The finished registration of one operator on one backend."""

    op_name: str
    backend: str
    inputs: tuple
    outputs: tuple
    attrs: tuple
    dtype_formats: tuple = field(default=())

    def dtype_signatures(self) -> list:
        """Each dtype_format row as (input dtypes, output dtypes)."""
        n_in = len(self.inputs)
        return [(tuple(t for t, _ in row[:n_in]), tuple(t for t, _ in row[n_in:])) for row in self.dtype_formats]

    @functools.cached_property
    def _declared(self) -> frozenset:
        return frozenset(self.dtype_signatures())

    def covers(self, kernel_attr) -> bool:
        """Whether a dtype_format row declares a kernel of this KernelAttr."""
        return kernel_signature(kernel_attr) in self._declared

    def rows_text(self) -> str:
        """The declared rows, for messages: ``(Float32) -> (Float32), (Float64) -> (Float64)``."""
        return ", ".join(map(format_signature, self.dtype_signatures())) or "no dtype_format rows"


class RegOp:
    """Base builder; ``CpuRegOp``/``GpuRegOp`` fix the backend."""

    backend = ""

    def __init__(self, op_name: str):
        if not isinstance(op_name, str) or not op_name:
            raise TypeError(f"For '{type(self).__name__}', the 'op_name' must be a non-empty str, but got {op_name!r}.")
        self.op_name = op_name
        self._inputs: list = []
        self._outputs: list = []
        self._attrs: list = []
        self._dtype_formats: list = []

    def _where(self) -> str:
        return f"For the op info of '{self.op_name}' ({self.backend})"

    def _io(self, kind: str, items: list, index: int, name: str, param_type: str) -> RegOp:
        if isinstance(index, bool) or not isinstance(index, int) or index != len(items):
            raise ValueError(f"{self._where()}, {kind} {name!r} must have index {len(items)}, but got {index!r}.")
        if param_type not in _PARAM_TYPES:
            raise ValueError(
                f"{self._where()}, the param_type of {kind} {name!r} must be one of "
                f"{_PARAM_TYPES}, but got {param_type!r}."
            )
        items.append({"index": index, "name": name, "param_type": param_type})
        return self

    def input(self, index: int, name: str, param_type: str = "required") -> RegOp:
        return self._io("input", self._inputs, index, name, param_type)

    def output(self, index: int, name: str, param_type: str = "required") -> RegOp:
        return self._io("output", self._outputs, index, name, param_type)

    def attr(
        self,
        name: str,
        param_type: str = "required",
        value_type: str = "",
        value="all",
        default=None,
    ) -> RegOp:
        self._attrs.append(
            {
                "name": name,
                "param_type": param_type,
                "type": value_type,
                "value": value,
                "default": default,
            }
        )
        return self

    def dtype_format(self, *args) -> RegOp:
        """One supported combination: one (dtype, format) per input, then per output."""
        expected = len(self._inputs) + len(self._outputs)
        if len(args) != expected:
            raise ValueError(
                f"{self._where()}, dtype_format must give {expected} entries (inputs + outputs), but got {len(args)}."
            )
        for a in args:
            if not (isinstance(a, tuple) and len(a) == 2 and (a[0] is None or isinstance(a[0], mstype.Type))):
                raise TypeError(f"{self._where()}, each dtype_format entry must be a DataType, but got {a!r}.")
        self._dtype_formats.append(tuple(args))
        return self

    def dtype_formats(self, *data_types) -> RegOp:
        """One ``dtype_format`` row per DataType, that type for every input and output."""
        n = len(self._inputs) + len(self._outputs)
        for data_type in data_types:
            self.dtype_format(*([data_type] * n))
        return self

    def get_op_info(self) -> OpInfo:
        return OpInfo(
            self.op_name,
            self.backend,
            tuple(self._inputs),
            tuple(self._outputs),
            tuple(self._attrs),
            tuple(self._dtype_formats),
        )


class CpuRegOp(RegOp):
    backend = "CPU"


class GpuRegOp(RegOp):
    backend = "GPU"


class CustomRegOp(RegOp):
    """For custom operators (``ops.Custom``'s ``reg_info``); the backend is given with ``target``, as an
    argument or, as in MindSpore, by ``.target("CPU")``."""

    def __init__(self, op_name: str = "Custom", target: str = "CPU"):
        super().__init__(op_name)
        self.backend = target

    def target(self, target: str) -> CustomRegOp:
        self.backend = target
        return self
