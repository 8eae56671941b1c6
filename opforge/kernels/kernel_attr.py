"""KernelAttr: the input and output dtypes of one kernel (mirror of the C++ class)."""

from __future__ import annotations

from opforge import dtype as mstype

__all__ = ["KernelAttr"]


class KernelAttr:
    """Built like MindSpore's: ``KernelAttr().add_input_attr(float32).add_output_attr(float32)``."""

    __slots__ = ("inputs", "outputs", "all_same")

    def __init__(self, inputs=(), outputs=(), all_same: bool = False):
        self.inputs = tuple(mstype.to_dtype(t) for t in inputs)
        self.outputs = tuple(mstype.to_dtype(t) for t in outputs)
        self.all_same = bool(all_same)

    def add_input_attr(self, dtype) -> KernelAttr:
        self.inputs += (mstype.to_dtype(dtype),)
        return self

    def add_output_attr(self, dtype) -> KernelAttr:
        self.outputs += (mstype.to_dtype(dtype),)
        return self

    def add_all_same_attr(self, all_same: bool = True) -> KernelAttr:
        self.all_same = bool(all_same)
        return self

    AddInputAttr = add_input_attr
    AddOutputAttr = add_output_attr
    AddAllSameAttr = add_all_same_attr

    def input_dtypes_for(self, n_inputs: int) -> tuple | None:
        """The dtypes this kernel takes for ``n_inputs`` inputs, or None if the count differs."""
        if self.all_same:
            return (self.inputs[0],) * n_inputs if self.inputs else None
        return self.inputs if len(self.inputs) == n_inputs else None

    def output_dtypes_for(self, n_outputs: int) -> tuple | None:
        """The dtypes this kernel gives for ``n_outputs`` outputs, or None if the count differs. An
        ``all_same`` kernel with one output dtype gives any number of outputs of it (MindSpore's Split,
        Unstack: the count is the primitive's)."""
        if self.all_same and len(self.outputs) == 1:
            return self.outputs * n_outputs
        return self.outputs if len(self.outputs) == n_outputs else None

    def _key(self):
        return (self.inputs, self.outputs, self.all_same)

    def __eq__(self, other) -> bool:
        return isinstance(other, KernelAttr) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.outputs))
        same = ", all_same=True" if self.all_same else ""
        return f"KernelAttr(inputs=[{ins}], outputs=[{outs}]{same})"

    def short(self) -> str:
        """A compact signature such as ``Float32, Float32 -> Float32``."""
        ins = ", ".join(map(str, self.inputs)) + (", ..." if self.all_same else "")
        return f"{ins} -> {', '.join(map(str, self.outputs))}"
