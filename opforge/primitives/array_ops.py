"""Array operators: Cast, Reshape, ExpandDims, Squeeze, Transpose, BroadcastTo, Fill, ZerosLike,
OnesLike, OneHot, Argmax, Assign."""

from __future__ import annotations

import math
import numbers

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.geometry import strided_slice_walk
from opforge.primitives._utils import (
    UNKNOWN_DIM,
    UNKNOWN_RANK,
    _InplaceAssign,
    _Operator,
    has_unknown,
    is_unknown_rank,
    merge_dim,
    require_known,
    same_dim,
)
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
    "Argmax",
    "ArgMax",
    "Argmin",
    "Assign",
    "Concat",
    "Stack",
    "Split",
    "Unstack",
    "Slice",
    "StridedSlice",
    "Pad",
    "ReverseV2",
    "Tile",
    "Select",
    "Gather",
    "GatherNd",
    "ScatterNdUpdate",
    "ScatterNdAdd",
    "ScatterUpdate",
    "ScatterAdd",
    "TensorScatterUpdate",
    "TensorScatterAdd",
    "ScatterSub",
    "ScatterNdSub",
    "TensorScatterSub",
    "ScatterMul",
    "ScatterNdMul",
    "TensorScatterMul",
    "ScatterDiv",
    "ScatterNdDiv",
    "TensorScatterDiv",
    "ScatterMax",
    "ScatterNdMax",
    "TensorScatterMax",
    "ScatterMin",
    "ScatterNdMin",
    "TensorScatterMin",
    "UnsortedSegmentSum",
    "Range",
    "TopK",
    "Sort",
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

    Floats to ints truncate toward zero; NaN becomes 0 and out-of-range values saturate. A real
    becomes a complex with a zero imaginary part; a complex becomes a real by its real part (as
    NumPy, without a warning) and a bool by being nonzero.
    dtypes: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, complex64, complex128, in any pair.
    """

    # input_x in a dtype group: a Python number (MindSpore's input_x is a Tensor or a Number: a loss's
    # ``Cast()(weights=1.0, float32)``) becomes a 0-d Tensor first.
    __mindspore_signature__ = (sig.make_sig("input_x", dtype=sig.sig_dtype.T), sig.make_sig("dtype"))
    constant_inputs = ((1, "dtype"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x", "dtype"], outputs=["output"])

    unknown_rank_ok = True

    def infer_shape(self, x_shape, dtype):
        return x_shape

    def infer_dtype(self, x_dtype, dtype):
        validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)
        if not isinstance(dtype, mstype.Type):
            raise TypeError(f"For '{self.name}', the 'dtype' must be an opforge dtype, but got {dtype!r}.")
        return dtype


class Reshape(_Operator):
    """Gives the data a new shape with the same number of elements: ``Reshape()(x, shape)``.
    One entry of ``shape`` may be -1 (inferred). The output shares the input's data (a Parameter's is
    copied). dtypes: all.
    """

    output_is_view = True

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("shape"))
    constant_inputs = ((1, "shape"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["tensor", "shape"], outputs=["output"])

    unknown_rank_ok = True

    def infer_shape(self, x_shape, shape):
        shape = list(_check_int_tuple(self.name, "shape", shape))
        size = math.prod(x_shape)
        unknown = [i for i, d in enumerate(shape) if d == -1]
        if len(unknown) > 1 or any(d < -1 for d in shape):
            raise ValueError(f"For '{self.name}', the 'shape' may hold one -1 and no other negative, but got {shape}.")
        known = math.prod(d for d in shape if d != -1)
        if has_unknown(x_shape):  # the size is unknown: a -1 in 'shape' stays unknown (unless nothing is left)
            if unknown and known == 0:
                raise ValueError(f"For '{self.name}', cannot reshape {list(x_shape)} into {shape}.")
            if not is_unknown_rank(x_shape) and 0 in x_shape:  # the size is 0 all the same
                if known != 0 and not unknown:
                    raise ValueError(f"For '{self.name}', cannot reshape {list(x_shape)} (size 0) into {shape}.")
                if unknown:
                    shape[unknown[0]] = 0
            return shape
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
    The output shares the input's data (a Parameter's is copied). dtypes: all.
    """

    output_is_view = True

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
    have size 1 (else ValueError). The output shares the input's data (a Parameter's is copied). dtypes: all.
    """

    output_is_view = True

    @prim_attr_register
    def __init__(self, axis=()):
        validator.check_value_type("axis", axis, [int, tuple, list], self.name)
        axis = (axis,) if isinstance(axis, int) else _check_int_tuple(self.name, "axis", axis)
        self.add_prim_attr("axis", axis)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    def infer_shape(self, x_shape):
        ndim = len(x_shape)
        if not self.axis:
            if has_unknown(x_shape):  # an unknown dim may be 1: the rank of the result is unknown
                return [UNKNOWN_RANK]
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
            if x_shape[a] not in (1, UNKNOWN_DIM):
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
            if have not in (d, 1) and have >= 0 and d >= 0:
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

    unknown_rank_ok = True

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


class Argmax(_Operator):
    """The index of the largest value along ``axis``: ``Argmax(axis=-1, output_type=opforge.int32)(x)``
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


class Argmin(Argmax):
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


ArgMax = Argmax  # opforge's earlier spelling, kept as an alias; MindSpore spells it Argmax
# -- data movement: Concat, Stack, Split, Unstack, Slice, StridedSlice, ReverseV2, Tile, Select ---------


def _check_tensor_tuple(prim_name, arg_name, shapes, dtypes, valid=mstype.all_types):
    """A non-empty tuple of Tensors of one dtype (inference sees a tuple of shapes and one of dtypes)."""
    if not isinstance(dtypes, tuple) or not dtypes:
        raise TypeError(
            f"For '{prim_name}', the '{arg_name}' must be a non-empty tuple of Tensors, but got {dtypes!r}."
        )
    first = dtypes[0]
    for i, d in enumerate(dtypes):
        validator.check_tensor_dtype_valid(f"{arg_name}[{i}]", d, valid, prim_name)
        if d is not first:
            raise TypeError(
                f"For '{prim_name}', every element of '{arg_name}' must have the dtype of '{arg_name}[0]' ({first}), "
                f"but '{arg_name}[{i}]' is {d}."
            )
    return first


def _check_int64_tuple(prim_name, arg_name, value) -> tuple:
    """A tuple of ints that each fit int64 (what a kernel receives them as)."""
    value = _check_int_tuple(prim_name, arg_name, value)
    for v in value:
        if not -(2**63) <= v < 2**63:
            raise ValueError(f"For '{prim_name}', each of '{arg_name}' must fit int64, but got {list(value)}.")
    return value


def _norm_axis(prim_name, axis, ndim, arg_name="axis") -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"For '{prim_name}', the '{arg_name}' must be in [{-ndim}, {ndim}), but got {axis}.")
    return axis % ndim


class Concat(_Operator):
    r"""Joins tensors along an existing dim: ``Concat(axis=0)(input_x)``, ``input_x`` a tuple (or list) of
    Tensors of one dtype and rank whose shapes agree except along ``axis`` (``np.concatenate``).
    :math:`axis \in [-ndim, ndim)`. dtypes: all, on CPU and GPU.
    """

    @prim_attr_register
    def __init__(self, axis=0):
        validator.check_value_type("axis", axis, [int], self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shapes):
        if not isinstance(x_shapes, tuple):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a tuple of Tensors.")
        first = list(x_shapes[0])
        ndim = len(first)
        if ndim == 0:
            raise ValueError(f"For '{self.name}', the elements of 'input_x' must have at least 1 dim, but got 0-d.")
        axis = _norm_axis(self.name, self.axis, ndim)
        out = list(first)
        for i, s in enumerate(x_shapes[1:], 1):
            if len(s) != ndim or any(not same_dim(a, b) for d, (a, b) in enumerate(zip(s, out)) if d != axis):
                raise ValueError(
                    f"For '{self.name}', every element of 'input_x' must have the shape of 'input_x[0]' {first} except "
                    f"along 'axis' {axis}, but 'input_x[{i}]' has shape {list(s)}."
                )
            along = UNKNOWN_DIM if out[axis] < 0 or s[axis] < 0 else out[axis] + s[axis]
            out = [along if d == axis else merge_dim(a, b) for d, (a, b) in enumerate(zip(out, s))]
        return out

    def infer_dtype(self, x_dtypes):
        return _check_tensor_tuple(self.name, "input_x", None, x_dtypes)


class Stack(_Operator):
    r"""Stacks tensors of one shape along a new dim: ``Stack(axis=0)(input_x)`` (``np.stack``);
    :math:`axis \in [-(ndim+1), ndim+1)`. dtypes: all, on CPU and GPU."""

    @prim_attr_register
    def __init__(self, axis=0):
        validator.check_value_type("axis", axis, [int], self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shapes):
        if not isinstance(x_shapes, tuple):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a tuple of Tensors.")
        first = list(x_shapes[0])
        for i, s in enumerate(x_shapes[1:], 1):
            if len(s) != len(first) or not all(same_dim(a, b) for a, b in zip(first, s)):
                raise ValueError(
                    f"For '{self.name}', every element of 'input_x' must have the shape of 'input_x[0]' "
                    f"{list(x_shapes[0])}, but 'input_x[{i}]' has shape {list(s)}."
                )
            first = [merge_dim(a, b) for a, b in zip(first, s)]
        axis = _norm_axis(self.name, self.axis, len(first) + 1)
        return first[:axis] + [len(x_shapes)] + first[axis:]

    def infer_dtype(self, x_dtypes):
        return _check_tensor_tuple(self.name, "input_x", None, x_dtypes)


_MAX_OUTPUTS = 65536  # Split's output_num: a tuple of that many Tensors at most


class Split(_Operator):
    r"""Splits a tensor into ``output_num`` equal parts along ``axis``: ``Split(axis=0, output_num=1)(x)``
    returns a tuple of ``output_num`` Tensors (``np.split``). ``x.shape[axis]`` must be divisible by
    ``output_num`` (at most 65536). dtypes: all, on CPU and GPU."""

    @prim_attr_register
    def __init__(self, axis=0, output_num=1):
        validator.check_value_type("axis", axis, [int], self.name)
        validator.check_value_type("output_num", output_num, [int], self.name)
        validator.check_int_range(output_num, 1, _MAX_OUTPUTS, Rel.INC_BOTH, "output_num", self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    def infer_shape(self, x_shape):
        ndim = len(x_shape)
        if ndim == 0:
            raise ValueError(f"For '{self.name}', the 'x' must have at least 1 dim, but got a 0-d Tensor.")
        axis = _norm_axis(self.name, self.axis, ndim)
        if x_shape[axis] >= 0 and x_shape[axis] % self.output_num:
            raise ValueError(
                f"For '{self.name}', the dim {axis} of 'x' {list(x_shape)} must be divisible by 'output_num' "
                f"{self.output_num}, but got {x_shape[axis]}."
            )
        part = list(x_shape)
        if part[axis] >= 0:
            part[axis] //= self.output_num
        return tuple(list(part) for _ in range(self.output_num))

    def infer_dtype(self, x_dtype):
        validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)
        return tuple(x_dtype for _ in range(self.output_num))


class Unstack(_Operator):
    r"""Unstacks a tensor along ``axis`` into ``x.shape[axis]`` tensors of one dim fewer:
    ``Unstack(axis=0)(x)`` returns a tuple. ``num`` (MindSpore's, optional) must equal ``x.shape[axis]``
    when given. dtypes: all, on CPU and GPU."""

    @prim_attr_register
    def __init__(self, axis=0, num=None):
        validator.check_value_type("axis", axis, [int], self.name)
        if num is not None:
            validator.check_value_type("num", num, [int], self.name)
            validator.check_positive_int(num, "num", self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def _count(self, x_shape):
        ndim = len(x_shape)
        if ndim == 0:
            raise ValueError(f"For '{self.name}', the 'x' must have at least 1 dim, but got a 0-d Tensor.")
        axis = _norm_axis(self.name, self.axis, ndim)
        count = x_shape[axis]
        if count < 0:  # the number of outputs is the dim's size: known only when 'num' gives it
            if self.num is None:
                require_known(self.name, "x", x_shape, [axis], "the number of outputs is the size of 'axis'")
            count = self.num
        if count == 0:
            raise ValueError(f"For '{self.name}', cannot unstack the zero-size dim {axis} of 'x' {list(x_shape)}.")
        if self.num is not None and self.num != count:
            raise ValueError(f"For '{self.name}', the 'num' must be x.shape[{axis}] = {count}, but got {self.num}.")
        return axis, count

    def infer_shape(self, x_shape):
        axis, count = self._count(x_shape)
        part = [d for i, d in enumerate(x_shape) if i != axis]
        return tuple(list(part) for _ in range(count))

    def infer_dtype(self, x_dtype):
        validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)
        return x_dtype

    def __infer__(self, x):
        out = super().__infer__(x)
        if not isinstance(out["dtype"], tuple):
            out["dtype"] = tuple(out["dtype"] for _ in out["shape"])  # one per output, a tuple even of one
        return out


def slice_shape(prim_name, x_shape, begin, size) -> list:
    """The shape of ``x[begin : begin + size]`` (``size`` -1: to the end), or the error naming ``prim_name``."""
    begin = _check_int64_tuple(prim_name, "begin", begin)
    size = _check_int64_tuple(prim_name, "size", size)
    ndim = len(x_shape)
    if len(begin) != ndim or len(size) != ndim:
        raise ValueError(
            f"For '{prim_name}', the 'begin' and 'size' must have one entry per dim of 'x' {list(x_shape)}, "
            f"but got {list(begin)} and {list(size)}."
        )
    out = []
    for d, (b, s, n) in enumerate(zip(begin, size, x_shape)):
        if n < 0:  # an unknown dim: the slice is checked against it when its size is known
            if b < 0 or s < -1:
                raise ValueError(
                    f"For '{prim_name}', the slice begin {list(begin)} size {list(size)} must lie within 'x' "
                    f"{list(x_shape)}, but dim {d} does not (begin {b}, size {s})."
                )
            out.append(UNKNOWN_DIM if s == -1 else s)
            continue
        length = n - b if s == -1 else s
        if b < 0 or length < 0 or b + length > n:
            raise ValueError(
                f"For '{prim_name}', the slice begin {list(begin)} size {list(size)} must lie within 'x' "
                f"{list(x_shape)}, but dim {d} does not (begin {b}, size {s})."
            )
        out.append(length)
    return out


class Slice(_Operator):
    r"""A contiguous block: ``Slice()(input_x, begin, size)``, ``y = x[begin[0]:begin[0]+size[0], ...]``.
    ``begin`` and ``size`` are tuples of ints, one per dim; ``size[d] = -1`` takes the rest of the dim.
    dtypes: all, on CPU and GPU."""

    __mindspore_signature__ = (sig.make_sig("x"), sig.make_sig("begin"), sig.make_sig("size"))
    constant_inputs = ((1, "begin"), (2, "size"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "begin", "size"], outputs=["output"])

    def infer_shape(self, x_shape, begin, size):
        return slice_shape(self.name, x_shape, begin, size)

    def infer_dtype(self, x_dtype, begin, size):
        return validator.check_tensor_dtype_valid("x", x_dtype, mstype.all_types, self.name)


class StridedSlice(_Operator):
    r"""NumPy-style strided slicing: ``StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0,
    new_axis_mask=0, shrink_axis_mask=0)(input_x, begin, end, strides)``, ``x[b0:e0:s0, b1:e1:s1, ...]``
    with TensorFlow's (and MindSpore's) masks: bit i of ``begin_mask``/``end_mask`` ignores ``begin[i]``/
    ``end[i]`` (the full range), of ``ellipsis_mask`` makes entry i an ellipsis, of ``new_axis_mask`` inserts
    a dim of size 1, of ``shrink_axis_mask`` takes the single index ``begin[i]`` and removes the dim (an
    index out of range is an IndexError). Out-of-range begins and ends are clamped. dtypes: all, on CPU and GPU.
    """

    __mindspore_signature__ = (
        sig.make_sig("input_x"),
        sig.make_sig("begin"),
        sig.make_sig("end"),
        sig.make_sig("strides"),
    )
    constant_inputs = ((1, "begin"), (2, "end"), (3, "strides"))

    @prim_attr_register
    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
        for name in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
            value = getattr(self, name)
            validator.check_value_type(name, value, [int], self.name)
            validator.check_int_range(value, 0, 2**63 - 1, Rel.INC_BOTH, name, self.name)  # an int64 bit mask
        self.init_prim_io_names(inputs=["x", "begin", "end", "strides"], outputs=["output"])

    def masks(self) -> tuple:
        return (self.begin_mask, self.end_mask, self.ellipsis_mask, self.new_axis_mask, self.shrink_axis_mask)

    def infer_shape(self, x_shape, begin, end, strides):
        begin = _check_int64_tuple(self.name, "begin", begin)
        end = _check_int64_tuple(self.name, "end", end)
        strides = _check_int64_tuple(self.name, "strides", strides)
        return strided_slice_walk(self.name, list(x_shape), begin, end, strides, self.masks())[1]

    def infer_dtype(self, x_dtype, begin, end, strides):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)


class Pad(_Operator):
    r"""Zero padding: ``Pad(paddings)(input_x)``, ``paddings`` a tuple of one ``(before, after)`` pair of
    non-negative ints per dim of ``input_x``; output dim d is ``x.shape[d] + before + after`` with ``x`` at
    ``[before, before + x.shape[d])`` and zeros elsewhere (``np.pad`` with zeros). dtypes: all, on CPU and GPU."""

    @prim_attr_register
    def __init__(self, paddings):
        validator.check_value_type("paddings", paddings, [tuple, list], self.name)
        pairs = []
        for pair in paddings:
            if (
                not isinstance(pair, (tuple, list))
                or len(pair) != 2
                or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in pair)
            ):
                raise ValueError(
                    f"For '{self.name}', the 'paddings' must be a tuple of (before, after) pairs of non-negative "
                    f"ints, but got {paddings!r}."
                )
            pairs.append((int(pair[0]), int(pair[1])))
        self.add_prim_attr("paddings", tuple(pairs))
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        if len(self.paddings) != len(x_shape):
            raise ValueError(
                f"For '{self.name}', the 'paddings' must have one pair per dim of 'input_x' ({len(x_shape)}), but "
                f"got {len(self.paddings)}."
            )
        return [d if d < 0 else d + b + a for d, (b, a) in zip(x_shape, self.paddings)]

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)


class ReverseV2(_Operator):
    """Reverses the order of elements along the dims in ``axis``: ``ReverseV2(axis)(input_x)``
    (``np.flip``); ``axis`` a tuple (or list) of distinct ints in :math:`[-ndim, ndim)`. dtypes: all, on CPU and GPU."""

    @prim_attr_register
    def __init__(self, axis):
        validator.check_value_type("axis", axis, [list, tuple], self.name)
        axis = _check_int_tuple(self.name, "axis", axis)
        self.add_prim_attr("axis", axis)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    def infer_shape(self, x_shape):
        ndim = len(x_shape)
        seen = set()
        for a in self.axis:
            a = _norm_axis(self.name, a, ndim)
            if a in seen:
                raise ValueError(f"For '{self.name}', the 'axis' {list(self.axis)} names the dim {a} twice.")
            seen.add(a)
        return list(x_shape)

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)


class Tile(_Operator):
    r"""Repeats ``input_x`` ``multiples[d]`` times along each dim: ``Tile()(input_x, multiples)`` (``np.tile``).
    ``multiples`` is a tuple of non-negative ints with at least as many entries as ``input_x`` has dims
    (``input_x`` gets leading dims of size 1). dtypes: all, on CPU and GPU."""

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("multiples"))
    constant_inputs = ((1, "multiples"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "multiples"], outputs=["output"])

    def infer_shape(self, x_shape, multiples):
        multiples = _check_int64_tuple(self.name, "multiples", multiples)
        if len(multiples) < len(x_shape):
            raise ValueError(
                f"For '{self.name}', the 'multiples' {list(multiples)} must have at least as many entries as "
                f"'input_x' {list(x_shape)} has dims."
            )
        if any(m < 0 for m in multiples):
            raise ValueError(f"For '{self.name}', each of 'multiples' must be >= 0, but got {list(multiples)}.")
        padded = [1] * (len(multiples) - len(x_shape)) + list(x_shape)
        return [d * m if d >= 0 or m == 0 else UNKNOWN_DIM for d, m in zip(padded, multiples)]

    def infer_dtype(self, x_dtype, multiples):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, mstype.all_types, self.name)


class Select(_Operator):
    r"""Chooses elements: ``Select()(cond, x, y)``, :math:`out_i = x_i` where :math:`cond_i` else :math:`y_i`
    (``np.where``). ``cond`` is bool; ``x`` and ``y`` are one dtype group, promoted to one dtype as MindSpore's
    signature for it declares (``dtype_group: (input, other)``: float16 with float32 gives float32, a Python
    number joins the tensor's dtype); all three have one shape. dtypes: all, on CPU and GPU."""

    __mindspore_signature__ = (
        sig.make_sig("cond"),
        sig.make_sig("x", dtype=sig.sig_dtype.T),
        sig.make_sig("y", dtype=sig.sig_dtype.T),
    )

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["condition", "x", "y"], outputs=["output"])

    def infer_shape(self, cond_shape, x_shape, y_shape):
        if not len(cond_shape) == len(x_shape) == len(y_shape) or not all(
            same_dim(a, b) and same_dim(b, c) and same_dim(a, c) for a, b, c in zip(cond_shape, x_shape, y_shape)
        ):
            raise ValueError(
                f"For '{self.name}', the 'cond', 'x' and 'y' must have one shape, but got {list(cond_shape)}, "
                f"{list(x_shape)} and {list(y_shape)}."
            )
        return [merge_dim(merge_dim(a, b), c) for a, b, c in zip(cond_shape, x_shape, y_shape)]

    def infer_dtype(self, cond_dtype, x_dtype, y_dtype):
        validator.check_tensor_dtype_valid("cond", cond_dtype, (mstype.bool_,), self.name)
        return validator.check_tensors_dtypes_same_and_valid({"x": x_dtype, "y": y_dtype}, mstype.all_types, self.name)


# -- indexing: Gather, GatherNd, ScatterNdUpdate, UnsortedSegmentSum -------------------------------------

_INDEX_TYPES = (mstype.int32, mstype.int64)


class Gather(_Operator):
    r"""Takes slices along ``axis``: ``Gather()(input_params, input_indices, axis)``,
    :math:`out[i_{<axis}, j, i_{>axis}] = params[i_{<axis}, indices[j], i_{>axis}]` (``np.take``); the output's
    shape is ``params.shape[:axis] + indices.shape + params.shape[axis+1:]``. Every index must be in
    :math:`[0, params.shape[axis])`: another is an error naming it (checked on the CPU; on the GPU the
    indices are read back and checked before the launch). dtypes: params all; indices int32, int64.
    """

    __mindspore_signature__ = (sig.make_sig("input_params"), sig.make_sig("input_indices"), sig.make_sig("axis"))
    constant_inputs = ((2, "axis"),)

    @prim_attr_register
    def __init__(self, batch_dims=0):
        validator.check_value_type("batch_dims", batch_dims, [int], self.name)
        if batch_dims != 0:
            raise ValueError(f"For '{self.name}', only 'batch_dims' 0 is supported, but got {batch_dims}.")
        self.init_prim_io_names(inputs=["params", "indices", "axis"], outputs=["output"])

    def infer_shape(self, params, indices, axis):
        validator.check_value_type("axis", axis, [int], self.name)
        if not params:
            raise ValueError(f"For '{self.name}', the 'input_params' must have at least 1 dim, but got 0-d.")
        a = _norm_axis(self.name, axis, len(params))
        return list(params[:a]) + list(indices) + list(params[a + 1 :])

    def infer_dtype(self, params, indices, axis):
        validator.check_tensor_dtype_valid("input_indices", indices, _INDEX_TYPES, self.name)
        return validator.check_tensor_dtype_valid("input_params", params, mstype.all_types, self.name)


def _nd_shape(prim_name, x, indices, x_name="input_x") -> list:
    if not indices:
        raise ValueError(f"For '{prim_name}', the 'indices' must have at least 1 dim, but got 0-d.")
    require_known(prim_name, "indices", indices, [len(indices) - 1], "its last dim is the depth of each index")
    k = indices[-1]
    if k > len(x) or k > 8:
        raise ValueError(
            f"For '{prim_name}', the last dim of 'indices' {list(indices)} must be at most the rank of '{x_name}' "
            f"{list(x)} (and 8), but got {k}."
        )
    return list(indices[:-1]) + list(x[k:])


class GatherNd(_Operator):
    r"""Gathers slices by N-d indices: ``GatherNd()(input_x, indices)``; each row ``indices[..., :]`` of
    length K addresses ``input_x[i_0, ..., i_{K-1}]``; the output's shape is ``indices.shape[:-1] +
    x.shape[K:]``. Every coordinate must be in range (an error naming the row otherwise).
    dtypes: input_x all; indices int32, int64."""

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("indices"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x", "indices"], outputs=["y"])

    def infer_shape(self, x, indices):
        return _nd_shape(self.name, x, indices)

    def infer_dtype(self, x, indices):
        validator.check_tensor_dtype_valid("indices", indices, _INDEX_TYPES, self.name)
        return validator.check_tensor_dtype_valid("input_x", x, mstype.all_types, self.name)


class _Scatter(_Operator):
    """A scatter ``Prim(...)(input_x, indices, updates)``: each row of ``indices`` addresses a slice of
    ``input_x`` that the matching slice of ``updates`` is written into (``op``: replaced or added to). In
    place (``inplace``), ``input_x`` is a Parameter the call writes and returns; otherwise the result is a new
    Tensor. ``row_indices``: each index addresses ``input_x``'s first dim (``updates``: ``indices.shape +
    input_x.shape[1:]``); else the last dim of ``indices`` holds K coordinates (``indices.shape[:-1] +
    input_x.shape[K:]``). Out-of-range indices are an error naming the row."""

    inplace = True
    row_indices = False
    valid_dtypes = mstype.all_types

    def __init_subclass__(cls, **kwargs):
        x_role = sig.sig_rw.RW_WRITE if cls.inplace else sig.sig_rw.RW_READ
        cls.__mindspore_signature__ = (  # before Primitive's hook, which reads it
            sig.make_sig("input_x", x_role, dtype=sig.sig_dtype.T),
            sig.make_sig("indices", dtype=sig.sig_dtype.T1),
            sig.make_sig("updates", dtype=sig.sig_dtype.T),
        )
        super().__init_subclass__(**kwargs)

    def _init_scatter(self, use_locking=None):
        if use_locking is not None:
            validator.check_value_type("use_locking", use_locking, [bool], self.name)
        self.init_prim_io_names(inputs=["input_x", "indices", "updates"], outputs=["y"])

    def infer_shape(self, x, indices, updates):
        if self.row_indices:
            if not x:
                raise ValueError(f"For '{self.name}', the 'input_x' must have at least 1 dim, but got 0-d.")
            want = list(indices) + list(x[1:])
        else:
            want = _nd_shape(self.name, x, indices)
        if len(updates) != len(want) or not all(same_dim(a, b) for a, b in zip(updates, want)):
            raise ValueError(f"For '{self.name}', the 'updates' must have shape {want}, but got {list(updates)}.")
        return list(x)

    def infer_dtype(self, x, indices, updates):
        validator.check_tensor_dtype_valid("indices", indices, _INDEX_TYPES, self.name)
        args = {"input_x": x, "updates": updates}
        return validator.check_tensors_dtypes_same_and_valid(args, self.valid_dtypes, self.name)


_SCATTER_REDUCE_TYPES = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64) + (
    mstype.int8,
    mstype.int16,
    mstype.int32,
    mstype.int64,
    mstype.uint8,
)


class ScatterNdUpdate(_Scatter):
    r"""In place: ``ScatterNdUpdate(use_locking=True)(input_x, indices, updates)`` writes each ``updates`` slice
    into the Parameter ``input_x`` at the N-d index of its row of ``indices`` and returns ``input_x``.
    ``updates`` has shape ``indices.shape[:-1] + input_x.shape[K:]``; out-of-range coordinates are an error.
    Of two rows with one index, the CPU writes the last; the GPU any one. dtypes: all; indices int32, int64.
    """

    @prim_attr_register
    def __init__(self, use_locking=True):
        self._init_scatter(use_locking)


class ScatterNdAdd(_Scatter):
    r"""In place: ``ScatterNdAdd(use_locking=False)(input_x, indices, updates)`` adds each ``updates`` slice to
    the Parameter ``input_x`` at the N-d index of its row of ``indices`` and returns ``input_x``; rows with one
    index all add, in row order (CPU and GPU alike). ``updates``: ``indices.shape[:-1] + input_x.shape[K:]``.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8; indices int32, int64."""

    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class ScatterUpdate(_Scatter):
    r"""In place: ``ScatterUpdate(use_locking=True)(input_x, indices, updates)``,
    :math:`input\_x[indices[i], ...] = updates[i, ...]`, returns the Parameter ``input_x``. ``updates`` has
    shape ``indices.shape + input_x.shape[1:]``. Of two rows with one index, the CPU writes the last; the GPU
    any one. dtypes: all; indices int32, int64."""

    row_indices = True

    @prim_attr_register
    def __init__(self, use_locking=True):
        self._init_scatter(use_locking)


class ScatterAdd(_Scatter):
    r"""In place: ``ScatterAdd(use_locking=False)(input_x, indices, updates)``,
    :math:`input\_x[indices[i], ...] \mathrel{+}= updates[i, ...]`, returns the Parameter ``input_x``; rows with
    one index all add, in order. ``updates`` has shape ``indices.shape + input_x.shape[1:]``.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8; indices int32, int64."""

    row_indices = True
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class TensorScatterUpdate(_Scatter):
    r"""``TensorScatterUpdate()(input_x, indices, updates)``: a copy of ``input_x`` with each ``updates`` slice
    written at the N-d index of its row of ``indices`` (``updates``: ``indices.shape[:-1] + input_x.shape[K:]``).
    Of two rows with one index, the CPU writes the last; the GPU any one. dtypes: all; indices int32, int64."""

    inplace = False

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


class TensorScatterAdd(_Scatter):
    r"""``TensorScatterAdd()(input_x, indices, updates)``: a copy of ``input_x`` with each ``updates`` slice
    added at the N-d index of its row of ``indices``; rows with one index all add, in row order.
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8; indices int32, int64."""

    inplace = False
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


# The reducing scatters of Sub, Mul, Div, Max and Min, in MindSpore's three spellings: ScatterR (rows of
# input_x's first dim, in place), ScatterNdR (N-d indices, in place) and TensorScatterR (N-d, into a copy).
# Rows with one index fold in row order on both backends; Max and Min keep a NaN (NumPy's maximum, minimum);
# integers wrap as NumPy's. dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8
# (ScatterDiv, ScatterNdDiv, TensorScatterDiv: the floats); indices int32, int64.
_SCATTER_DIV_TYPES = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


class ScatterSub(_Scatter):
    r"""In place: ``ScatterSub(use_locking=False)(input_x, indices, updates)`` subtracts ``updates[i, ...]`` at
    ``input_x[indices[i], ...]`` and returns the Parameter ``input_x`` (``updates``: ``indices.shape +
    input_x.shape[1:]``). See the note above the reducing scatters for dtypes and repeated rows."""

    row_indices = True
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class ScatterNdSub(_Scatter):
    r"""In place: ``ScatterNdSub(use_locking=False)(input_x, indices, updates)`` subtracts each ``updates`` slice
    at the N-d index of its row of ``indices`` and returns the Parameter ``input_x`` (``updates``:
    ``indices.shape[:-1] + input_x.shape[K:]``)."""

    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class TensorScatterSub(_Scatter):
    r"""``TensorScatterSub()(input_x, indices, updates)``: a copy of ``input_x`` that subtracts each ``updates``
    slice at the N-d index of its row of ``indices``."""

    inplace = False
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


class ScatterMul(_Scatter):
    r"""In place: ``ScatterMul(use_locking=False)(input_x, indices, updates)`` multiplies by ``updates[i, ...]`` at
    ``input_x[indices[i], ...]`` and returns the Parameter ``input_x`` (``updates``: ``indices.shape +
    input_x.shape[1:]``). See the note above the reducing scatters for dtypes and repeated rows."""

    row_indices = True
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class ScatterNdMul(_Scatter):
    r"""In place: ``ScatterNdMul(use_locking=False)(input_x, indices, updates)`` multiplies by each ``updates`` slice
    at the N-d index of its row of ``indices`` and returns the Parameter ``input_x`` (``updates``:
    ``indices.shape[:-1] + input_x.shape[K:]``)."""

    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class TensorScatterMul(_Scatter):
    r"""``TensorScatterMul()(input_x, indices, updates)``: a copy of ``input_x`` that multiplies by each ``updates``
    slice at the N-d index of its row of ``indices``."""

    inplace = False
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


class ScatterDiv(_Scatter):
    r"""In place: ``ScatterDiv(use_locking=False)(input_x, indices, updates)`` divides by ``updates[i, ...]`` at
    ``input_x[indices[i], ...]`` and returns the Parameter ``input_x`` (``updates``: ``indices.shape +
    input_x.shape[1:]``). See the note above the reducing scatters for dtypes and repeated rows."""

    row_indices = True
    valid_dtypes = _SCATTER_DIV_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class ScatterNdDiv(_Scatter):
    r"""In place: ``ScatterNdDiv(use_locking=False)(input_x, indices, updates)`` divides by each ``updates`` slice
    at the N-d index of its row of ``indices`` and returns the Parameter ``input_x`` (``updates``:
    ``indices.shape[:-1] + input_x.shape[K:]``)."""

    valid_dtypes = _SCATTER_DIV_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class TensorScatterDiv(_Scatter):
    r"""``TensorScatterDiv()(input_x, indices, updates)``: a copy of ``input_x`` that divides by each ``updates``
    slice at the N-d index of its row of ``indices``."""

    inplace = False
    valid_dtypes = _SCATTER_DIV_TYPES

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


class ScatterMax(_Scatter):
    r"""In place: ``ScatterMax(use_locking=False)(input_x, indices, updates)`` maxes with ``updates[i, ...]`` at
    ``input_x[indices[i], ...]`` and returns the Parameter ``input_x`` (``updates``: ``indices.shape +
    input_x.shape[1:]``). See the note above the reducing scatters for dtypes and repeated rows."""

    row_indices = True
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class ScatterNdMax(_Scatter):
    r"""In place: ``ScatterNdMax(use_locking=False)(input_x, indices, updates)`` maxes with each ``updates`` slice
    at the N-d index of its row of ``indices`` and returns the Parameter ``input_x`` (``updates``:
    ``indices.shape[:-1] + input_x.shape[K:]``)."""

    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class TensorScatterMax(_Scatter):
    r"""``TensorScatterMax()(input_x, indices, updates)``: a copy of ``input_x`` that maxes with each ``updates``
    slice at the N-d index of its row of ``indices``."""

    inplace = False
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


class ScatterMin(_Scatter):
    r"""In place: ``ScatterMin(use_locking=False)(input_x, indices, updates)`` mins with ``updates[i, ...]`` at
    ``input_x[indices[i], ...]`` and returns the Parameter ``input_x`` (``updates``: ``indices.shape +
    input_x.shape[1:]``). See the note above the reducing scatters for dtypes and repeated rows."""

    row_indices = True
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class ScatterNdMin(_Scatter):
    r"""In place: ``ScatterNdMin(use_locking=False)(input_x, indices, updates)`` mins with each ``updates`` slice
    at the N-d index of its row of ``indices`` and returns the Parameter ``input_x`` (``updates``:
    ``indices.shape[:-1] + input_x.shape[K:]``)."""

    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self, use_locking=False):
        self._init_scatter(use_locking)


class TensorScatterMin(_Scatter):
    r"""``TensorScatterMin()(input_x, indices, updates)``: a copy of ``input_x`` that mins with each ``updates``
    slice at the N-d index of its row of ``indices``."""

    inplace = False
    valid_dtypes = _SCATTER_REDUCE_TYPES

    @prim_attr_register
    def __init__(self):
        self._init_scatter()


class UnsortedSegmentSum(_Operator):
    r"""Sums rows by segment: ``UnsortedSegmentSum()(input_x, segment_ids, num_segments)``,
    :math:`out[s] = \sum_{i: ids[i] = s} x[i]`; ``segment_ids``' shape is a prefix of ``input_x``'s and the
    output's shape is ``[num_segments] + x.shape[ids.ndim:]``. Ids outside :math:`[0, num\_segments)` are
    dropped (MindSpore's rule). dtypes: float16, bfloat16, float32, float64, int32, int64; ids int32, int64.
    """

    __mindspore_signature__ = (sig.make_sig("x"), sig.make_sig("segment_ids"), sig.make_sig("num_segments"))
    constant_inputs = ((2, "num_segments"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "segment_ids", "num_segments"], outputs=["y"])

    def infer_shape(self, x, ids, num_segments):
        validator.check_value_type("num_segments", num_segments, [int], self.name)
        validator.check_non_negative_int(num_segments, "num_segments", self.name)
        if len(ids) > len(x) or not all(same_dim(a, b) for a, b in zip(x, ids)):
            raise ValueError(
                f"For '{self.name}', the 'segment_ids' shape {list(ids)} must be a prefix of the 'x' shape {list(x)}."
            )
        return [num_segments] + list(x[len(ids) :])

    def infer_dtype(self, x, ids, num_segments):
        validator.check_tensor_dtype_valid("segment_ids", ids, _INDEX_TYPES, self.name)
        valid = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64, mstype.int32, mstype.int64)
        return validator.check_tensor_dtype_valid("x", x, valid, self.name)


class Range(_Operator):
    r"""A 1-D sequence: ``Range(maxlen=1000000)(start, limit, delta)``, :math:`out_i = start + i \cdot delta` for
    :math:`i < \lceil (limit - start) / delta \rceil` (``np.arange``). ``start``, ``limit`` and ``delta`` are
    Python numbers (the length must be known when the call is planned): all ints give int64, else float32.
    ``delta`` must be nonzero and point from ``start`` toward ``limit`` (or the range is empty when they are
    equal); the length must not exceed ``maxlen``. dtypes: int64, float32, on CPU and GPU.
    """

    __mindspore_signature__ = (sig.make_sig("start"), sig.make_sig("limit"), sig.make_sig("delta"))
    constant_inputs = ((0, "start"), (1, "limit"), (2, "delta"))

    @prim_attr_register
    def __init__(self, maxlen=1000000):
        validator.check_value_type("maxlen", maxlen, [int], self.name)
        validator.check_int_range(maxlen, 1, 2**62, Rel.INC_BOTH, "maxlen", self.name)
        self.init_prim_io_names(inputs=["start", "limit", "delta"], outputs=["output"])

    def _values(self, start, limit, delta):
        for name, v in (("start", start), ("limit", limit), ("delta", delta)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(
                    f"For '{self.name}', the '{name}' must be a Python int or float, but got {type(v).__name__}."
                )
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"For '{self.name}', the '{name}' must be finite, but got {v}.")
            if isinstance(v, int) and not -(2**63) <= v < 2**63:
                raise ValueError(f"For '{self.name}', the '{name}' must fit int64, but got {v}.")
        if delta == 0:
            raise ValueError(f"For '{self.name}', the 'delta' must not be 0.")
        if (limit - start) * delta < 0:
            raise ValueError(
                f"For '{self.name}', the 'delta' {delta} must point from 'start' {start} toward 'limit' {limit}."
            )
        if all(isinstance(v, int) for v in (start, limit, delta)):
            length = -((start - limit) // delta)
        else:
            quotient = (limit - start) / delta
            if not quotient <= self.maxlen:  # also an infinite quotient
                raise ValueError(f"For '{self.name}', the length {quotient} exceeds 'maxlen' {self.maxlen}.")
            length = math.ceil(quotient)
        if length > self.maxlen:
            raise ValueError(f"For '{self.name}', the length {length} exceeds 'maxlen' {self.maxlen}.")
        return length

    def infer_shape(self, start, limit, delta):
        return [self._values(start, limit, delta)]

    def infer_dtype(self, start, limit, delta):
        self._values(start, limit, delta)
        return mstype.int64 if all(isinstance(v, int) for v in (start, limit, delta)) else mstype.float32


_SORT_TYPES = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64, mstype.int8, mstype.int16,
               mstype.int32, mstype.int64, mstype.uint8)  # fmt: skip


class TopK(_Operator):
    r"""The ``k`` largest entries along the last dim: ``TopK(sorted=True)(input_x, k)`` returns ``(values,
    indices)``, both of shape ``x.shape[:-1] + [k]``, indices int32. Values descend; NaN counts as the largest;
    ties keep the smaller index first (the order is the same for ``sorted=False``).
    dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, on CPU and GPU."""

    __mindspore_signature__ = (sig.make_sig("input_x"), sig.make_sig("k"))
    constant_inputs = ((1, "k"),)

    @prim_attr_register
    def __init__(self, sorted=True):  # noqa: A002 (MindSpore's attribute name)
        validator.check_value_type("sorted", sorted, [bool], self.name)
        self.init_prim_io_names(inputs=["input", "k"], outputs=["values", "indices"])

    def infer_shape(self, x, k):
        validator.check_value_type("k", k, [int], self.name)
        if not x:
            raise ValueError(f"For '{self.name}', the 'input_x' must have at least 1 dim, but got 0-d.")
        if not 0 <= k <= (x[-1] if x[-1] >= 0 else k):
            raise ValueError(
                f"For '{self.name}', the 'k' must be in [0, {x[-1]}] (the last dim of 'input_x'), but got {k}."
            )
        shape = list(x[:-1]) + [k]
        return shape, list(shape)

    def infer_dtype(self, x, k):
        validator.check_tensor_dtype_valid("input_x", x, _SORT_TYPES, self.name)
        return x, mstype.int32


class Sort(_Operator):
    r"""Sorts along ``axis``: ``Sort(axis=-1, descending=False)(x)`` returns ``(values, indices)`` (indices int32:
    each value's position in ``x``). NaN sorts last ascending and first descending; ties keep the smaller
    index first (stable). dtypes: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, on CPU
    and GPU."""

    @prim_attr_register
    def __init__(self, axis=-1, descending=False):
        validator.check_value_type("axis", axis, [int], self.name)
        validator.check_value_type("descending", descending, [bool], self.name)
        self.init_prim_io_names(inputs=["x"], outputs=["y1", "y2"])

    def infer_shape(self, x):
        if not x:
            raise ValueError(f"For '{self.name}', the 'x' must have at least 1 dim, but got 0-d.")
        _norm_axis(self.name, self.axis, len(x))
        return list(x), list(x)

    def infer_dtype(self, x):
        validator.check_tensor_dtype_valid("x", x, _SORT_TYPES, self.name)
        return x, mstype.int32
