"""Array operators: Cast, Reshape, Assign."""

from __future__ import annotations

import math

from opforge import dtype as mstype
from opforge.primitives import signature as sig
from opforge.primitives.primitive import PrimitiveWithInfer, prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["Cast", "Reshape", "Assign"]


class Cast(PrimitiveWithInfer):
    r"""Converts to a dtype: ``Cast()(x, dtype)``, :math:`y = \mathrm{dtype}(x)`.

    Floats to ints truncate toward zero; NaN becomes 0 and out-of-range values saturate.
    dtypes: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, in any pair.
    """

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("dtype"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x", "dtype"], outputs=["output"])

    def infer_shape(self, x_shape, dtype):
        return x_shape

    def infer_dtype(self, x_dtype, dtype):
        validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)
        if not isinstance(dtype, mstype.Type):
            raise TypeError(f"For '{self.name}', the 'dtype' must be an opforge dtype, but got {dtype!r}.")
        return dtype


class Reshape(PrimitiveWithInfer):
    """Gives the data a new shape with the same number of elements: ``Reshape()(x, shape)``.
    One entry of ``shape`` may be -1 (inferred). dtypes: all.
    """

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("shape"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["tensor", "shape"], outputs=["output"])

    def infer_shape(self, x_shape, shape):
        validator.check_value_type("shape", shape, [tuple, list], self.name)
        for d in shape:
            validator.check_value_type("shape", d, [int], self.name)
        shape = list(shape)
        size = math.prod(x_shape)
        unknown = [i for i, d in enumerate(shape) if d == -1]
        if len(unknown) > 1 or any(d < -1 for d in shape):
            raise ValueError(f"For '{self.name}', the 'shape' may hold one -1 and no other negative, but got {shape}.")
        known = math.prod(d for d in shape if d != -1)
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"For '{self.name}', cannot reshape {list(x_shape)} (size {size}) into {shape}.")
            shape[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"For '{self.name}', cannot reshape {list(x_shape)} (size {size}) into {shape}.")
        return shape

    def infer_dtype(self, x_dtype, shape):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)


class Assign(PrimitiveWithInfer):
    r"""In place: :math:`variable \leftarrow value`; returns ``variable``.

    ``variable`` must be a Parameter (RW_WRITE); ``value`` is cast to its dtype when lossless.
    dtypes: all.
    """

    __mindspore_signature__ = (
        sig.make_sig("variable", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
        sig.make_sig("value", dtype=sig.sig_dtype.T),
    )
    inplace_map = {0: 0}

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
            {"variable": variable, "value": value}, mstype.all_types, self.name
        )
