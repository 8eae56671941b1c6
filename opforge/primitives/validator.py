"""Argument checks for primitives, with messages that name the operator, the argument, what was
expected and what was received: "For 'Elu', the 'alpha' must be float, but got int."
"""

from __future__ import annotations

import enum
import numbers

from opforge import dtype as mstype

__all__ = ["Rel", "Validator", "validator"]


class Rel(enum.Enum):
    """Relations used by the range and comparison checks."""

    EQ = "equal to"
    NE = "not equal to"
    LT = "less than"
    LE = "less than or equal to"
    GT = "greater than"
    GE = "greater than or equal to"
    INC_NEITHER = "in ({}, {})"
    INC_LEFT = "in [{}, {})"
    INC_RIGHT = "in ({}, {}]"
    INC_BOTH = "in [{}, {}]"
    IN = "in {}"
    NOT_IN = "not in {}"

    def holds(self, value, ref, ref2=None) -> bool:
        return _REL_CHECKS[self](value, ref, ref2)

    def describe(self, ref, ref2=None) -> str:
        if self in (Rel.INC_NEITHER, Rel.INC_LEFT, Rel.INC_RIGHT, Rel.INC_BOTH):
            return self.value.format(ref, ref2)
        if self in (Rel.IN, Rel.NOT_IN):
            return self.value.format(ref)
        return f"{self.value} {ref}"


_REL_CHECKS = {
    Rel.EQ: lambda v, a, b: v == a,
    Rel.NE: lambda v, a, b: v != a,
    Rel.LT: lambda v, a, b: v < a,
    Rel.LE: lambda v, a, b: v <= a,
    Rel.GT: lambda v, a, b: v > a,
    Rel.GE: lambda v, a, b: v >= a,
    Rel.INC_NEITHER: lambda v, a, b: a < v < b,
    Rel.INC_LEFT: lambda v, a, b: a <= v < b,
    Rel.INC_RIGHT: lambda v, a, b: a < v <= b,
    Rel.INC_BOTH: lambda v, a, b: a <= v <= b,
    Rel.IN: lambda v, a, b: v in a,
    Rel.NOT_IN: lambda v, a, b: v not in a,
}


def _prefix(prim_name) -> str:
    return f"For '{prim_name}', the" if prim_name else "The"


def _shown(arg_name) -> str:
    return "input value" if arg_name is None else arg_name


def _type_name(value) -> str:
    return type(value).__name__


def _names(types) -> str:
    names = [t.__name__ if isinstance(t, type) else str(t) for t in types]
    return names[0] if len(names) == 1 else "one of [" + ", ".join(names) + "]"


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_related(arg_name, arg_value, is_kind, kind_name, rel, refs, prim_name):
    """``arg_value`` is of the kind ``is_kind`` accepts and stands in relation ``rel`` to ``refs``."""
    if not is_kind(arg_value):
        raise TypeError(
            f"{_prefix(prim_name)} '{_shown(arg_name)}' must be {kind_name}, but got {_type_name(arg_value)}."
        )
    if not rel.holds(arg_value, *refs):
        raise ValueError(
            f"{_prefix(prim_name)} '{_shown(arg_name)}' must be {rel.describe(*refs)}, but got {arg_value}."
        )
    return arg_value


class Validator:
    """Static checks; each returns the checked value so it can be used inline."""

    @staticmethod
    def check_value_type(arg_name, arg_value, valid_types, prim_name=None):
        """``arg_value`` is an instance of one of ``valid_types`` (bool never counts as int)."""
        if isinstance(valid_types, (list, tuple)) and arg_value.__class__ in valid_types:
            return arg_value  # the common case, checked first: primitive constructors call this
        valid_types = tuple(valid_types) if isinstance(valid_types, (list, tuple)) else (valid_types,)
        is_bool = isinstance(arg_value, bool)
        ok = any(isinstance(arg_value, t) and (not is_bool or t is bool) for t in valid_types)
        if not ok:
            raise TypeError(
                f"{_prefix(prim_name)} '{arg_name}' must be {_names(valid_types)}, but got {_type_name(arg_value)}."
            )
        return arg_value

    @staticmethod
    def check_number(arg_name, arg_value, value, rel, prim_name=None):
        """``arg_value`` (int or float) stands in relation ``rel`` to ``value``."""
        return _check_related(arg_name, arg_value, _is_number, "a number", rel, (value,), prim_name)

    # The numeric, bool and string checks take the value first, as MindSpore's Validator does
    # (check_value_type, check_number and the dtype checks take the name first, as there).
    @staticmethod
    def check_int(arg_value, value, rel, arg_name=None, prim_name=None):
        """``arg_value`` is an int (not bool) in relation ``rel`` to ``value``."""
        return _check_related(arg_name, arg_value, _is_int, "int", rel, (value,), prim_name)

    @staticmethod
    def check_equal_int(arg_value, value, arg_name=None, prim_name=None):
        return Validator.check_int(arg_value, value, Rel.EQ, arg_name, prim_name)

    @staticmethod
    def check_positive_int(arg_value, arg_name=None, prim_name=None):
        return Validator.check_int(arg_value, 0, Rel.GT, arg_name, prim_name)

    @staticmethod
    def check_non_negative_int(arg_value, arg_name=None, prim_name=None):
        return Validator.check_int(arg_value, 0, Rel.GE, arg_name, prim_name)

    @staticmethod
    def check_float(arg_value, value, rel, arg_name=None, prim_name=None):
        """``arg_value`` is a number in relation ``rel`` to ``value``."""
        return _check_related(arg_name, arg_value, _is_number, "float", rel, (value,), prim_name)

    @staticmethod
    def check_positive_float(arg_value, arg_name=None, prim_name=None):
        return Validator.check_float(arg_value, 0, Rel.GT, arg_name, prim_name)

    @staticmethod
    def check_int_range(arg_value, lower_limit, upper_limit, rel, arg_name=None, prim_name=None):
        """``arg_value`` is an int in the range ``rel`` (INC_BOTH, ...) of the two limits."""
        return _check_related(arg_name, arg_value, _is_int, "int", rel, (lower_limit, upper_limit), prim_name)

    @staticmethod
    def check_float_range(arg_value, lower_limit, upper_limit, rel, arg_name=None, prim_name=None):
        """``arg_value`` is a number in the range ``rel`` of the two limits."""
        return _check_related(arg_name, arg_value, _is_number, "float", rel, (lower_limit, upper_limit), prim_name)

    @staticmethod
    def check_bool(arg_value, arg_name=None, prim_name=None):
        if not isinstance(arg_value, bool):
            raise TypeError(f"{_prefix(prim_name)} '{_shown(arg_name)}' must be bool, but got {_type_name(arg_value)}.")
        return arg_value

    @staticmethod
    def check_string(arg_value, valid_values, arg_name=None, prim_name=None):
        """``arg_value`` is a str and one of ``valid_values``."""
        name = _shown(arg_name)
        if not isinstance(arg_value, str):
            raise TypeError(f"{_prefix(prim_name)} '{name}' must be str, but got {_type_name(arg_value)}.")
        if arg_value not in valid_values:
            raise ValueError(
                f"{_prefix(prim_name)} '{name}' must be one of {list(valid_values)}, but got '{arg_value}'."
            )
        return arg_value

    @staticmethod
    def check_subclass(arg_name, type_, template_types, prim_name=None):
        """``type_`` (an opforge dtype) is one of ``template_types``."""
        templates = tuple(template_types) if isinstance(template_types, (list, tuple)) else (template_types,)
        if not isinstance(type_, mstype.Type) or type_ not in templates:
            got = type_ if isinstance(type_, mstype.Type) else _type_name(type_)
            raise TypeError(f"{_prefix(prim_name)} '{arg_name}' must be {_names(templates)}, but got {got}.")
        return type_

    @staticmethod
    def check_tensor_dtype_valid(arg_name, arg_type, valid_dtypes, prim_name=None):
        """A tensor argument's dtype ``arg_type`` is one of ``valid_dtypes``."""
        valid = tuple(valid_dtypes)
        if not isinstance(arg_type, mstype.Type):
            raise TypeError(f"{_prefix(prim_name)} '{arg_name}' must be a Tensor, but got {_type_name(arg_type)}.")
        if arg_type not in valid:
            raise TypeError(
                f"{_prefix(prim_name)} '{arg_name}' must be a Tensor of dtype {_names(valid)}, but got {arg_type}."
            )
        return arg_type

    @staticmethod
    def check_tensors_dtypes_same_and_valid(args, valid_dtypes, prim_name=None):
        """Every dtype in the dict ``args`` is valid, and they are all the same."""
        items = list(args.items())
        for name, dtype in items:
            Validator.check_tensor_dtype_valid(name, dtype, valid_dtypes, prim_name)
        first_name, first = items[0]
        for name, dtype in items[1:]:
            if dtype is not first:
                raise TypeError(
                    f"{_prefix(prim_name)} '{name}' must have the same dtype as '{first_name}' ({first}), "
                    f"but got {dtype}."
                )
        return first

    @staticmethod
    def check_axis(arg_name, axis, ndim, prim_name=None) -> tuple:
        """Normalise an int or tuple of ints to non-negative, unique axes of an ``ndim``-d tensor."""
        axes = (axis,) if _is_int(axis) else axis
        if not isinstance(axes, (tuple, list)) or not all(_is_int(a) for a in axes):
            raise TypeError(
                f"{_prefix(prim_name)} '{arg_name}' must be int or a tuple of int, but got {_type_name(axis)}."
            )
        normalised = []
        for a in axes:
            if not -max(ndim, 1) <= a < max(ndim, 1):
                raise ValueError(
                    f"{_prefix(prim_name)} '{arg_name}' must be in [{-max(ndim, 1)}, {max(ndim, 1)}), but got {a}."
                )
            a = a % max(ndim, 1)
            if a in normalised:
                raise ValueError(f"{_prefix(prim_name)} '{arg_name}' has the axis {a} twice.")
            normalised.append(a)
        return tuple(normalised)


validator = Validator
