"""Helpers shared by operator definitions: the operators' base class (inputs checked before
inference), broadcasting, and the base of in-place assignments."""

from __future__ import annotations

import math

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives.primitive import PrimitiveWithInfer, prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["_Operator", "broadcast_shape", "_InplaceAssign"]

_MAX_BYTES = 2**63  # an array's size in bytes must be below this (NumPy's and the kernels' int64 sizes)


class _Operator(PrimitiveWithInfer):
    """The base of opforge's operators: before ``infer_shape`` and ``infer_dtype`` run, each input
    is checked to be what it must be, so they see a shape where they expect one; after them, each
    output's size is checked to be addressable, so a huge shape is refused before any allocation.

    Inputs named in ``constant_inputs`` (``(position, name)`` pairs) must be Python values: a Tensor
    there would reach ``infer_shape`` as its shape, a list of ints that looks like a valid ``perm``
    or ``shape``. Every other input must be a Tensor (a number in a dtype group is one by then: the
    call path promotes it): a constant there would reach ``infer_shape`` as its value.
    """

    constant_inputs: tuple = ()

    def __infer__(self, *args) -> dict:
        self._check_inputs(args)
        inferred = super().__infer__(*args)
        self._check_output_sizes(inferred)
        return inferred

    def _check_inputs(self, args) -> None:
        constants = dict(self.constant_inputs)
        for i, meta in enumerate(args):
            dtype = meta["dtype"]
            is_tensor = meta["value"] is None and (
                isinstance(dtype, mstype.Type)
                or (isinstance(dtype, tuple) and all(isinstance(d, mstype.Type) for d in dtype))  # a tuple of Tensors
            )
            if i in constants and is_tensor:
                raise TypeError(
                    f"For '{self.name}', the '{constants[i]}' must be a constant (a Python value), but got a Tensor."
                )
            if i not in constants and not is_tensor:
                raise TypeError(
                    f"For '{self.name}', the '{self._input_name(i)}' must be a Tensor, "
                    f"but got {type(meta['value']).__name__}."
                )

    def _check_output_sizes(self, inferred: dict) -> None:
        """An output whose size in bytes does not fit int64 cannot be allocated or addressed: say so
        here, before any allocation (huge ``shape`` or ``depth`` constants and attrs end up here)."""
        dtype = inferred["dtype"]
        multi = isinstance(dtype, (tuple, list))
        for shape, out_dtype in zip(inferred["shape"] if multi else [inferred["shape"]], dtype if multi else [dtype]):
            if not isinstance(out_dtype, mstype.Type) or not all(isinstance(d, int) for d in shape):
                continue  # the call path rejects malformed inference results
            if any(d >= _MAX_BYTES for d in shape):
                raise ValueError(
                    f"For '{self.name}', each dim of the output must be less than 2**63, but got shape {list(shape)}."
                )
            # NumPy's rule, which an empty array must meet too: the non-zero dims times the item size.
            nbytes = math.prod(d for d in shape if d) * out_dtype.itemsize
            if nbytes >= _MAX_BYTES:
                raise ValueError(
                    f"For '{self.name}', the output of shape {list(shape)} and dtype {out_dtype} is too large: its "
                    f"non-zero dims times the item size make {nbytes} bytes, but at most 2**63 - 1 can be addressed."
                )

    def _input_name(self, i: int) -> str:
        names = [s.name for s in type(self).__mindspore_signature__] or list(self.input_names or ())
        return names[i] if i < len(names) else f"input {i}"


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


class _InplaceAssign(_Operator):
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
