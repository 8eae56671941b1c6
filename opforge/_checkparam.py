"""MindSpore's ``mindspore._checkparam`` path: the argument checks of opforge/primitives/validator.py.

Networks of MindSpore 1.x import ``Rel`` and ``Validator`` from here (``from mindspore._checkparam import
Validator as validator``; the zoo's TB-Net, 32 files of the 2022 zoo); MindSpore 2.x made the module itself
the validator (``from mindspore import _checkparam as validator; validator.check_positive_int(...)``,
``validator.INC_BOTH``), so the checks and the relations are module names as well.
"""

from __future__ import annotations

from opforge.primitives.validator import Rel, Validator

__all__ = [
    "Rel",
    "Validator",
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
    "INC_NEITHER",
    "INC_LEFT",
    "INC_RIGHT",
    "INC_BOTH",
    "IN",
    "NOT_IN",
    "check_value_type",
    "check_number",
    "check_int",
    "check_equal_int",
    "check_positive_int",
    "check_non_negative_int",
    "check_float",
    "check_positive_float",
    "check_int_range",
    "check_float_range",
    "check_bool",
    "check_string",
    "check_subclass",
    "check_tensor_dtype_valid",
    "check_tensors_dtypes_same_and_valid",
    "check_axis",
]

EQ, NE, LT, LE, GT, GE = Rel.EQ, Rel.NE, Rel.LT, Rel.LE, Rel.GT, Rel.GE
INC_NEITHER, INC_LEFT, INC_RIGHT, INC_BOTH = Rel.INC_NEITHER, Rel.INC_LEFT, Rel.INC_RIGHT, Rel.INC_BOTH
IN, NOT_IN = Rel.IN, Rel.NOT_IN

check_value_type = Validator.check_value_type
check_number = Validator.check_number
check_int = Validator.check_int
check_equal_int = Validator.check_equal_int
check_positive_int = Validator.check_positive_int
check_non_negative_int = Validator.check_non_negative_int
check_float = Validator.check_float
check_positive_float = Validator.check_positive_float
check_int_range = Validator.check_int_range
check_float_range = Validator.check_float_range
check_bool = Validator.check_bool
check_string = Validator.check_string
check_subclass = Validator.check_subclass
check_tensor_dtype_valid = Validator.check_tensor_dtype_valid
check_tensors_dtypes_same_and_valid = Validator.check_tensors_dtypes_same_and_valid
check_axis = Validator.check_axis
