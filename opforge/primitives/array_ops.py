"""Array operators: Cast, Reshape, ExpandDims, Squeeze, Transpose, BroadcastTo, Fill, ZerosLike,
OnesLike, OneHot, ArgMax, Assign."""

from __future__ import annotations

import math
import numbers

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _InplaceAssign, _Operator
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Rel
from opforge.primitives.validator import Validator as validator

__all__ = [
    "Cast",
    "Reshape",
    "ExpandDims",
    "Squeeze",
    "Transpose",
    "BroadcastTo",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "OneHot",
    "ArgMax",
    "Argmin",
    "Assign",
]

_REAL_TYPES = (mstype.bool_,) + mstype.int_type + mstype.uint_type + mstype.float_type
_REAL_NUMBER_TYPES = mstype.int_type + mstype.uint_type + mstype.float_type


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_int_tuple(prim_name, arg_name, value) -> tuple:
    """``value`` is a tuple or list of ints (not bools); returns it as a tuple."""
    if not isinstance(value, (tuple, list)) or not all(_is_int(v) for v in value):
        got = type(value).__name__
        if isinstance(value, (tuple, list)):
            got = f"{got} {list(value)!r}"
        raise TypeError(f"For '{prim_name}', the '{arg_name}' must be a tuple of int, but got {got}.")
    return tuple(int(v) for v in value)


class Cast(_Operator):
    r"""Converts to a dtype: ``Cast()(x, dtype)``, :math:`y = \mathrm{dtype}(x)`.

    Floats to ints truncate toward zero; NaN becomes 0 and out-of-range values saturate.
    dtypes: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, in any pair.
    """

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("dtype"))
    constant_inputs = ((1, "dtype"),)

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


class Reshape(_Operator):
    """Gives the data a new shape with the same number of elements: ``Reshape()(x, shape)``.
    One entry of ``shape`` may be -1 (inferred). dtypes: all.
    """

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("shape"))
    constant_inputs = ((1, "shape"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["tensor", "shape"], outputs=["output"])

    def infer_shape(self, x_shape, shape):
        shape = list(_check_int_tuple(self.name, "shape", shape))
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


class ExpandDims(_Operator):
    """Inserts a dim of size 1 at ``axis``: ``ExpandDims()(x, axis)``; ``axis`` is an int in
    :math:`[-ndim - 1, ndim]` (a negative axis counts from the end of the output's dims).
    The data is copied unchanged. dtypes: all.
    """

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("axis"))
    constant_inputs = ((1, "axis"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "axis"], outputs=["output"])

    def infer_shape(self, x_shape, axis):
        ndim = len(x_shape)
        validator.check_int_range(axis, -ndim - 1, ndim, Rel.INC_BOTH, "axis", self.name)
        axis = axis + ndim + 1 if axis < 0 else axis
        return list(x_shape[:axis]) + [1] + list(x_shape[axis:])

    def infer_dtype(self, x_dtype, axis):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)


class Squeeze(_Operator):
    """Removes dims of size 1: ``Squeeze(axis=())(x)``. With ``axis=()`` every size-1 dim goes; otherwise
    ``axis`` (an int or a tuple of ints in :math:`[-ndim, ndim)`) names the dims to remove, and each must
    have size 1 (else ValueError). The data is copied unchanged. dtypes: all.
    """

    @prim_attr_register
    def __init__(self, axis=()):
        validator.check_value_type("axis", axis, [int, tuple, list], self.name)
        axis = (axis,) if isinstance(axis, int) else _check_int_tuple(self.name, "axis", axis)
        self.add_prim_attr("axis", axis)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    def infer_shape(self, x_shape):
        ndim = len(x_shape)
        if not self.axis:
            return [d for d in x_shape if d != 1]
        axes = []
        for a in self.axis:
            if not -ndim <= a < ndim:
                raise ValueError(
                    f"For '{self.name}', each 'axis' must be in [{-ndim}, {ndim}) for 'x' of shape {list(x_shape)}, "
                    f"but got {a}."
                )
            a %= ndim
            if a in axes:
                raise ValueError(f"For '{self.name}', the 'axis' {list(self.axis)} has the axis {a} twice.")
            if x_shape[a] != 1:
                raise ValueError(
                    f"For '{self.name}', the dim {a} of 'x' {list(x_shape)} to squeeze must be 1, but got {x_shape[a]}."
                )
            axes.append(a)
        return [d for i, d in enumerate(x_shape) if i not in axes]

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)


class Transpose(_Operator):
    """Permutes the dims: ``Transpose()(x, perm)``, :math:`y.shape[k] = x.shape[perm[k]]` (``np.transpose``).
    ``perm`` is a tuple of ints, a permutation of :math:`0 .. ndim-1` (negative entries count from the end).
    dtypes: all.
    """

    __mindspore_signature__ = (sig.make_sig("x"), sig.make_sig("perm"))
    constant_inputs = ((1, "perm"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "perm"], outputs=["output"])

    def infer_shape(self, x_shape, perm):
        perm = _check_int_tuple(self.name, "perm", perm)
        ndim = len(x_shape)
        if len(perm) != ndim:
            raise ValueError(
                f"For '{self.name}', the 'perm' must have one entry per dim of 'x' {list(x_shape)} ({ndim}), "
                f"but got {list(perm)} ({len(perm)})."
            )
        normalised = [p + ndim if p < 0 else p for p in perm]
        if sorted(normalised) != list(range(ndim)):
            raise ValueError(
                f"For '{self.name}', the 'perm' must be a permutation of the {ndim} dims of 'x', but got {list(perm)}."
            )
        return [x_shape[p] for p in normalised]

    def infer_dtype(self, x_dtype, perm):
        return validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)


class BroadcastTo(_Operator):
    """Broadcasts ``x`` to ``shape`` with NumPy's rules: ``BroadcastTo(shape)(x)`` (``np.broadcast_to``).

    ``shape`` is a tuple of ints; the shapes are aligned at the right, each dim of ``x`` must equal the
    target dim or be 1, and a target of -1 keeps the dim of ``x`` (only where ``x`` has one).
    dtypes: all.
    """

    @prim_attr_register
    def __init__(self, shape):
        shape = _check_int_tuple(self.name, "shape", shape)
        for d in shape:
            if d < -1:
                raise ValueError(f"For '{self.name}', each dim of 'shape' must be >= -1, but got {list(shape)}.")
        self.add_prim_attr("shape", shape)
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        target = list(self.shape)
        lead = len(target) - len(x_shape)
        if lead < 0:
            raise ValueError(
                f"For '{self.name}', the 'shape' {target} must have at least as many dims as 'x' {list(x_shape)}."
            )
        out = []
        for i, d in enumerate(target):
            if i < lead:
                if d == -1:
                    raise ValueError(
                        f"For '{self.name}', a -1 in 'shape' {target} must match a dim of 'x' {list(x_shape)}, "
                        f"but the dim {i} is a new leading dim."
                    )
                out.append(d)
                continue
            have = x_shape[i - lead]
            if d == -1:
                d = have
            if have not in (d, 1):
                raise ValueError(
                    f"For '{self.name}', 'x' of shape {list(x_shape)} cannot broadcast to 'shape' {target}: "
                    f"the dim {i - lead} of 'x' is {have}, which is neither 1 nor {d}."
                )
            out.append(d)
        return out

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)


class Fill(_Operator):
    """A tensor of one value: ``Fill()(type, shape, value)`` (MindSpore's order), with no tensor input.

    ``type`` is an opforge dtype (bool, int8-64, uint8-64, float16, bfloat16, float32, float64);
    ``shape`` a tuple of non-negative ints; ``value`` a Python (or NumPy) bool, int or float, converted as
    ``np.full`` does (a float into an integer dtype truncates toward zero). An integer value must fit
    ``type`` (and int64); a NaN or infinite value cannot fill an integer dtype.
    """

    __mindspore_signature__ = (sig.make_sig("type"), sig.make_sig("shape"), sig.make_sig("value"))
    constant_inputs = ((0, "type"), (1, "shape"), (2, "value"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["type", "shape", "value"], outputs=["y"])

    def infer_shape(self, dtype, shape, value):
        shape = _check_int_tuple(self.name, "shape", shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"For '{self.name}', each dim of 'shape' must be >= 0, but got {list(shape)}.")
        return list(shape)

    def infer_dtype(self, dtype, shape, value):
        if not isinstance(dtype, mstype.Type):
            raise TypeError(f"For '{self.name}', the 'type' must be an opforge dtype, but got {dtype!r}.")
        validator.check_subclass("type", dtype, _REAL_TYPES, self.name)
        category = mstype.weak_category(value)
        if category is None or category > 2:
            raise TypeError(
                f"For '{self.name}', the 'value' must be one of [bool, int, float], but got {type(value).__name__}."
            )
        number = value.item() if isinstance(value, np.generic) else value  # a NumPy scalar as its Python number
        if dtype.kind in "iu" and category > 0:
            if isinstance(number, float):
                if not math.isfinite(number):
                    raise ValueError(f"For '{self.name}', the 'value' must be finite to fill {dtype}, but got {value}.")
                number = math.trunc(number)
            info = np.iinfo(dtype.np_dtype)
            lo, hi = int(info.min), min(int(info.max), 2**63 - 1)
            if not lo <= number <= hi:
                raise ValueError(f"For '{self.name}', the 'value' must fit {dtype} [{lo}, {hi}], but got {value}.")
        elif category == 1 and not -(2**63) <= number < 2**63:  # the kernel receives the int as an int64
            raise ValueError(f"For '{self.name}', an int 'value' must fit int64, but got {value}.")
        return dtype


class _ConstantLike(_Operator):
    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)


class ZerosLike(_ConstantLike):
    """Zeros with the shape and dtype of ``x``: ``ZerosLike()(x)`` (``np.zeros_like``); ``x``'s values are
    not read. dtypes: all."""


class OnesLike(_ConstantLike):
    """Ones with the shape and dtype of ``x``: ``OnesLike()(x)`` (``np.ones_like``; True for bool); ``x``'s
    values are not read. dtypes: all."""


class OneHot(_Operator):
    r"""One-hot encoding: ``OneHot(axis=-1)(indices, depth, on_value, off_value)``.

    The output has a new dim of size ``depth`` at ``axis`` (-1: last):
    :math:`out[..., d, ...] = on\_value` where :math:`indices[...] = d`, else :math:`off\_value`; an index
    outside :math:`[0, depth)` gives a row of ``off_value`` (as MindSpore).
    ``indices``: int32 or int64 tensor; ``depth``: int >= 0; ``on_value``, ``off_value``: 0-d tensors or
    Python numbers, promoted to one number dtype, which is the output's.
    """

    __mindspore_signature__ = (
        sig.make_sig("indices"),
        sig.make_sig("depth"),
        sig.make_sig("on_value", dtype=sig.sig_dtype.T),
        sig.make_sig("off_value", dtype=sig.sig_dtype.T),
    )
    constant_inputs = ((1, "depth"),)

    @prim_attr_register
    def __init__(self, axis=-1):
        validator.check_value_type("axis", axis, [int], self.name)
        validator.check_int(axis, -1, Rel.GE, "axis", self.name)
        self.init_prim_io_names(inputs=["indices", "depth", "on_value", "off_value"], outputs=["output"])

    def infer_shape(self, indices_shape, depth, on_shape, off_shape):
        validator.check_non_negative_int(depth, "depth", self.name)
        ndim = len(indices_shape)
        validator.check_int_range(self.axis, -1, ndim, Rel.INC_BOTH, "axis", self.name)
        for name, shape in (("on_value", on_shape), ("off_value", off_shape)):
            if len(shape) != 0:
                raise ValueError(f"For '{self.name}', the '{name}' must be a 0-d tensor, but got shape {list(shape)}.")
        axis = ndim if self.axis == -1 else self.axis
        return list(indices_shape[:axis]) + [depth] + list(indices_shape[axis:])

    def infer_dtype(self, indices_dtype, depth, on_dtype, off_dtype):
        validator.check_tensor_dtype_valid("indices", indices_dtype, (mstype.int32, mstype.int64), self.name)
        args = {"on_value": on_dtype, "off_value": off_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, _REAL_NUMBER_TYPES, self.name)


class ArgMax(_Operator):
    """The index of the largest value along ``axis``: ``ArgMax(axis=-1, output_type=opforge.int32)(x)``
    (``np.argmax``). Ties give the first index; NaN counts as the largest value (the first NaN wins).
    Taking the argmax of an axis of size 0 is a ValueError.

    dtypes: integers and floats in; int32 or int64 (``output_type``) out.
    """

    @prim_attr_register
    def __init__(self, axis=-1, output_type=mstype.int32):
        validator.check_value_type("axis", axis, [int], self.name)
        validator.check_subclass("output_type", output_type, (mstype.int32, mstype.int64), self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    _what = "argmax"

    def infer_shape(self, x_shape):
        axis = validator.check_axis("axis", self.axis, len(x_shape), self.name)[0]
        if not x_shape:
            return []
        if x_shape[axis] == 0:
            raise ValueError(
                f"For '{self.name}', cannot take the {self._what} of the zero-size axis {axis} of 'x' {list(x_shape)}."
            )
        return [d for i, d in enumerate(x_shape) if i != axis]

    def infer_dtype(self, x_dtype):
        validator.check_tensor_dtype_valid("x", x_dtype, _REAL_NUMBER_TYPES, self.name)
        return self.output_type


class Argmin(ArgMax):
    """The index of the smallest value along ``axis``: ``Argmin(axis=-1, output_type=opforge.int32)(x)``
    (``np.argmin``). Ties give the first index; NaN counts as the smallest value (the first NaN wins).
    Taking the argmin of an axis of size 0 is a ValueError.

    dtypes: integers and floats in (kernels: float16, bfloat16, float32, float64, int8, int16, int32,
    int64, uint8); int32 or int64 (``output_type``) out.
    """

    _what = "argmin"


class Assign(_InplaceAssign):
    r"""In place: :math:`variable \leftarrow value`; returns ``variable``.

    ``variable`` must be a Parameter (RW_WRITE); ``value`` is cast to its dtype when lossless.
    dtypes: all.
    """

    valid_dtypes = mstype.all_types
