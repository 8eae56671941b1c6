"""Helpers shared by operator definitions: the operators' base class (inputs checked before
inference), broadcasting, and the base of in-place assignments."""

from __future__ import annotations

import math

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives.primitive import PrimitiveWithInfer, prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = [
    "_Operator",
    "broadcast_shape",
    "_InplaceAssign",
    "UNKNOWN_DIM",
    "UNKNOWN_RANK",
    "is_unknown_rank",
    "has_unknown",
    "same_dim",
    "merge_dim",
    "require_known",
    "same_shape",
    "merge_shapes",
    "matmul_shape",
]

# Unknown sizes (placeholders, abstract evaluation: docs/dynamic_shape.md), as MindSpore writes them:
# a dim of -1 is unknown, and the shape [-2] has an unknown rank.
UNKNOWN_DIM = -1
UNKNOWN_RANK = -2


def is_unknown_rank(shape) -> bool:
    return len(shape) == 1 and shape[0] == UNKNOWN_RANK


def has_unknown(shape) -> bool:
    """Whether a dim (or the rank) of ``shape`` is unknown."""
    return any(d < 0 for d in shape)


def same_dim(a: int, b: int) -> bool:
    """Whether two dims may be equal: equal, or either unknown."""
    return a == b or a < 0 or b < 0


def merge_dim(a: int, b: int) -> int:
    """The dim two dims that must be equal (``same_dim``) have: the known one, if any."""
    return b if a < 0 else a


def same_shape(a, b) -> bool:
    """Whether two shapes may be equal: the same rank and every pair of dims ``same_dim``."""
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b))


def matmul_shape(prim_name: str, transpose_a: bool, transpose_b: bool, x1, x2) -> list:
    """[m, n] of the 2-D product op(x1) @ op(x2) (MatMul's rule), or a ValueError naming ``prim_name``."""
    if len(x1) != 2 or len(x2) != 2:
        raise ValueError(f"For '{prim_name}', the inputs must be 2-D, but got shapes {list(x1)} and {list(x2)}.")
    m, k1 = (x1[1], x1[0]) if transpose_a else (x1[0], x1[1])
    k2, n = (x2[1], x2[0]) if transpose_b else (x2[0], x2[1])
    if not same_dim(k1, k2):
        raise ValueError(
            f"For '{prim_name}', the inner dimensions must match (transpose_a={transpose_a}, "
            f"transpose_b={transpose_b}), but got shapes {list(x1)} and {list(x2)}."
        )
    return [m, n]


def merge_shapes(*shapes) -> list:
    """The shape that shapes which must be equal (``same_shape``) have: each dim known where one is."""
    out = list(shapes[0])
    for s in shapes[1:]:
        out = [merge_dim(a, b) for a, b in zip(out, s)]
    return out


def require_known(prim_name: str, arg_name: str, shape, axes=None, why: str = "") -> None:
    """A clear ValueError when ``shape`` (or its ``axes``) has an unknown dim or rank, for operators
    whose result needs the size."""
    rank_unknown = is_unknown_rank(shape)
    axes = range(len(shape)) if axes is None or rank_unknown else axes
    if rank_unknown or any(shape[a] < 0 for a in axes if -len(shape) <= a < len(shape)):
        what = "an unknown rank" if rank_unknown else "unknown dims (-1)"
        which = "" if rank_unknown or len(axes) == len(shape) else f" at axes {list(axes)}"
        raise ValueError(
            f"For '{prim_name}', the '{arg_name}' must have known dims{which}{': ' + why if why else ''}; "
            f"{prim_name} does not support {what} there, but got shape {list(shape)}."
        )


_MAX_BYTES = 2**63  # an array's size in bytes must be below this (NumPy's and the kernels' int64 sizes)


class _Operator(PrimitiveWithInfer):
    """The base of opforge's operators: before ``infer_shape`` and ``infer_dtype`` run, each input
    is checked to be what it must be, so they see a shape where they expect one; after them, each
    output's size is checked to be addressable, so a huge shape is refused before any allocation.

    Inputs named in ``constant_inputs`` (``(position, name)`` pairs) must be Python values (the call
    folds a Tensor with data to its value): a Tensor there would reach ``infer_shape`` as its shape, a
    list of ints that looks like a valid ``perm`` or ``shape``. Every other input must be a Tensor (a
    number in a dtype group is one by then: the call path promotes it): a constant there would reach
    ``infer_shape`` as its value.
    """

    # Whether infer_shape takes inputs of unknown rank (the shape [-2]); else a clear error says so.
    unknown_rank_ok: bool = False

    def __infer__(self, *args) -> dict:
        self._check_inputs(args)
        if not self.unknown_rank_ok:
            self._check_known_ranks(args)
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

    def _check_known_ranks(self, args) -> None:
        for i, meta in enumerate(args):
            if meta["value"] is not None:
                continue
            shapes = meta["shape"] if isinstance(meta["dtype"], tuple) else (meta["shape"],)
            for k, shape in enumerate(shapes):
                if isinstance(shape, list) and is_unknown_rank(shape):
                    name = self._input_name(i) + (f"[{k}]" if isinstance(meta["dtype"], tuple) else "")
                    raise ValueError(
                        f"For '{self.name}', the '{name}' has an unknown rank (shape [-2]): {self.name} needs the "
                        f"rank of its inputs."
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
            nbytes = math.prod(d for d in shape if d > 0) * out_dtype.itemsize  # unknown dims (< 0) left out
            if nbytes >= _MAX_BYTES:
                raise ValueError(
                    f"For '{self.name}', the output of shape {list(shape)} and dtype {out_dtype} is too large: its "
                    f"non-zero dims times the item size make {nbytes} bytes, but at most 2**63 - 1 can be addressed."
                )

    def _input_name(self, i: int) -> str:
        names = [s.name for s in type(self).__mindspore_signature__] or list(self.input_names or ())
        return names[i] if i < len(names) else f"input {i}"


def broadcast_shape(prim_name: str, x_shape, y_shape, x_name: str = "x", y_name: str = "y") -> list:
    """NumPy broadcasting of two shapes; a clear error when they do not broadcast.

    With unknown dims (-1): -1 against 1 or -1 is -1, against n > 1 it is n (the unknown one must be 1
    or n); an unknown rank ([-2]) gives an unknown rank."""
    if is_unknown_rank(x_shape) or is_unknown_rank(y_shape):
        return [UNKNOWN_RANK]
    ndim = max(len(x_shape), len(y_shape))
    x = [1] * (ndim - len(x_shape)) + list(x_shape)
    y = [1] * (ndim - len(y_shape)) + list(y_shape)
    out = []
    for a, b in zip(x, y):
        if a != b and a != 1 and b != 1 and a >= 0 and b >= 0:
            raise ValueError(
                f"For '{prim_name}', the shapes of '{x_name}' {list(x_shape)} and '{y_name}' {list(y_shape)} "
                f"cannot broadcast."
            )
        if a < 0 or b < 0:
            known = a if b < 0 else b
            out.append(UNKNOWN_DIM if known == 1 else known)  # the unknown one is 1 or `known`
        else:
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
        if len(variable) != len(value) or not all(same_dim(a, b) for a, b in zip(variable, value)):
            raise ValueError(
                f"For '{self.name}', the 'value' must have the shape of 'variable' {list(variable)}, "
                f"but got {list(value)}."
            )
        return variable

    def infer_dtype(self, variable, value):
        return validator.check_tensors_dtypes_same_and_valid(
            {"variable": variable, "value": value}, self.valid_dtypes, self.name
        )
