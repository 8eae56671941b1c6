"""Helpers shared by operator definitions: broadcasting, and the base of in-place assignments."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives.primitive import PrimitiveWithInfer, prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["broadcast_shape", "_InplaceAssign"]


def broadcast_shape(prim_name: str, x_shape, y_shape, x_name: str = "x", y_name: str = "y") -> list:
    """NumPy broadcasting of two shapes; a clear error when they do not broadcast."""
    ndim = max(len(x_shape), len(y_shape))
    x = [1] * (ndim - len(x_shape)) + list(x_shape)
    y = [1] * (ndim - len(y_shape)) + list(y_shape)
    out = []
    for a, b in zip(x, y):
        if a != b and a != 1 and b != 1:
            raise ValueError(
                f"For '{prim_name}', the shapes of '{x_name}' {list(x_shape)} and '{y_name}' {list(y_shape)} "
                f"cannot broadcast."
            )
        out.append(b if a == 1 else a)
    return out


class _InplaceAssign(PrimitiveWithInfer):
    """Base of ``Assign``-style operators: ``op(variable, value)`` writes into the Parameter
    ``variable`` (RW_WRITE, never cast) a value of its shape, cast to its dtype when lossless, and
    returns ``variable``. Subclasses set ``valid_dtypes``."""

    __mindspore_signature__ = (
        sig.make_sig("variable", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("value", dtype=sig.sig_dtype.T),
    )
    valid_dtypes = mstype.all_types

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["variable", "value"], outputs=["output"])

    def infer_shape(self, variable, value):
        if list(variable) != list(value):
            raise ValueError(
                f"For '{self.name}', the 'value' must have the shape of 'variable' {list(variable)}, "
                f"but got {list(value)}."
            )
        return variable

    def infer_dtype(self, variable, value):
        return validator.check_tensors_dtypes_same_and_valid(
            {"variable": variable, "value": value}, self.valid_dtypes, self.name
        )
