"""opforge.primitives.validator: every check's success value and its exact error text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opforge import dtype as mstype
from opforge.primitives import Rel, Validator, validator


def raises_exactly(exc_type, message):
    """pytest.raises matching the whole message, literally."""
    return pytest.raises(exc_type, match="^" + re.escape(message) + "$")


def test_validator_alias():
    assert validator is Validator


# ---------------------------------------------------------------------------------------------
# check_value_type


def test_check_value_type_success_returns_value():
    assert Validator.check_value_type("alpha", 1.5, [float], "Elu") == 1.5
    assert Validator.check_value_type("shape", (1, 2), [tuple, list], "Reshape") == (1, 2)
    assert Validator.check_value_type("flag", True, [bool], "P") is True
    assert Validator.check_value_type("n", 3, int, "P") == 3  # a single type, not a list


def test_check_value_type_failure_message():
    with raises_exactly(TypeError, "For 'Elu', the 'alpha' must be float, but got int."):
        Validator.check_value_type("alpha", 1, [float], "Elu")
    with raises_exactly(TypeError, "For 'Reshape', the 'shape' must be one of [tuple, list], but got str."):
        Validator.check_value_type("shape", "12", [tuple, list], "Reshape")


def test_check_value_type_without_prim_name():
    with raises_exactly(TypeError, "The 'alpha' must be float, but got str."):
        Validator.check_value_type("alpha", "1.0", [float])


def test_check_value_type_rejects_bool_for_int():
    with raises_exactly(TypeError, "For 'P', the 'n' must be int, but got bool."):
        Validator.check_value_type("n", True, [int], "P")
    with raises_exactly(TypeError, "For 'P', the 'x' must be one of [int, float], but got bool."):
        Validator.check_value_type("x", False, [int, float], "P")
    assert Validator.check_value_type("x", False, [int, bool], "P") is False


# ---------------------------------------------------------------------------------------------
# numbers and ints


def test_check_number():
    assert Validator.check_number("lr", 0.5, 0, Rel.GT, "Opt") == 0.5
    assert Validator.check_number("lr", 2, 0, Rel.GT, "Opt") == 2
    with raises_exactly(ValueError, "For 'Opt', the 'lr' must be greater than 0, but got -0.5."):
        Validator.check_number("lr", -0.5, 0, Rel.GT, "Opt")
    with raises_exactly(TypeError, "For 'Opt', the 'lr' must be a number, but got str."):
        Validator.check_number("lr", "0.5", 0, Rel.GT, "Opt")
    with raises_exactly(TypeError, "For 'Opt', the 'lr' must be a number, but got bool."):
        Validator.check_number("lr", True, 0, Rel.GT, "Opt")


def test_check_int():
    assert Validator.check_int(3, 2, Rel.GE, "rank", "BiasAdd") == 3
    with raises_exactly(ValueError, "For 'BiasAdd', the 'rank' must be greater than or equal to 2, but got 1."):
        Validator.check_int(1, 2, Rel.GE, "rank", "BiasAdd")
    with raises_exactly(TypeError, "For 'BiasAdd', the 'rank' must be int, but got float."):
        Validator.check_int(3.0, 2, Rel.GE, "rank", "BiasAdd")
    with raises_exactly(TypeError, "For 'BiasAdd', the 'rank' must be int, but got bool."):
        Validator.check_int(True, 0, Rel.GE, "rank", "BiasAdd")


def test_check_equal_positive_non_negative_int():
    assert Validator.check_equal_int(1, 1, "rank", "P") == 1
    with raises_exactly(ValueError, "For 'P', the 'rank' must be equal to 1, but got 2."):
        Validator.check_equal_int(2, 1, "rank", "P")
    assert Validator.check_positive_int(1, "n", "P") == 1
    with raises_exactly(ValueError, "For 'P', the 'n' must be greater than 0, but got 0."):
        Validator.check_positive_int(0, "n", "P")
    with raises_exactly(TypeError, "For 'P', the 'n' must be int, but got bool."):
        Validator.check_positive_int(True, "n", "P")
    assert Validator.check_non_negative_int(0, "n", "P") == 0
    with raises_exactly(ValueError, "For 'P', the 'n' must be greater than or equal to 0, but got -1."):
        Validator.check_non_negative_int(-1, "n", "P")


def test_check_int_range():
    assert Validator.check_int_range(0, 0, 3, Rel.INC_LEFT, "axis", "P") == 0
    with raises_exactly(ValueError, "For 'P', the 'axis' must be in [0, 3), but got 3."):
        Validator.check_int_range(3, 0, 3, Rel.INC_LEFT, "axis", "P")
    with raises_exactly(ValueError, "For 'P', the 'axis' must be in (0, 3], but got 0."):
        Validator.check_int_range(0, 0, 3, Rel.INC_RIGHT, "axis", "P")
    with raises_exactly(TypeError, "For 'P', the 'axis' must be int, but got float."):
        Validator.check_int_range(1.0, 0, 3, Rel.INC_BOTH, "axis", "P")
    with raises_exactly(TypeError, "For 'P', the 'axis' must be int, but got bool."):
        Validator.check_int_range(True, 0, 3, Rel.INC_BOTH, "axis", "P")


@settings(max_examples=80, deadline=None)
@given(
    value=st.integers(-20, 20),
    lower=st.integers(-10, 10),
    width=st.integers(0, 10),
    rel=st.sampled_from([Rel.INC_NEITHER, Rel.INC_LEFT, Rel.INC_RIGHT, Rel.INC_BOTH]),
)
def test_check_int_range_agrees_with_python_comparisons(value, lower, width, rel):
    upper = lower + width
    expected = {
        Rel.INC_NEITHER: lower < value < upper,
        Rel.INC_LEFT: lower <= value < upper,
        Rel.INC_RIGHT: lower < value <= upper,
        Rel.INC_BOTH: lower <= value <= upper,
    }[rel]
    if expected:
        assert Validator.check_int_range(value, lower, upper, rel, "v", "P") == value
    else:
        with pytest.raises(ValueError, match=re.escape(f"but got {value}.")):
            Validator.check_int_range(value, lower, upper, rel, "v", "P")


def test_check_float_range():
    assert Validator.check_float_range(0.5, 0.0, 1.0, Rel.INC_RIGHT, "keep_prob", "Dropout") == 0.5
    assert Validator.check_float_range(1, 0.0, 1.0, Rel.INC_RIGHT, "keep_prob", "Dropout") == 1
    with raises_exactly(ValueError, "For 'Dropout', the 'keep_prob' must be in (0.0, 1.0], but got 0.0."):
        Validator.check_float_range(0.0, 0.0, 1.0, Rel.INC_RIGHT, "keep_prob", "Dropout")
    with raises_exactly(TypeError, "For 'Dropout', the 'keep_prob' must be float, but got str."):
        Validator.check_float_range("0.5", 0.0, 1.0, Rel.INC_RIGHT, "keep_prob", "Dropout")
    with raises_exactly(TypeError, "For 'Dropout', the 'keep_prob' must be float, but got bool."):
        Validator.check_float_range(True, 0.0, 1.0, Rel.INC_BOTH, "keep_prob", "Dropout")


# ---------------------------------------------------------------------------------------------
# bool, str, dtypes


def test_check_bool():
    assert Validator.check_bool(False, "keep_dims", "ReduceSum") is False
    with raises_exactly(TypeError, "For 'ReduceSum', the 'keep_dims' must be bool, but got int."):
        Validator.check_bool(1, "keep_dims", "ReduceSum")
    with raises_exactly(TypeError, "The 'keep_dims' must be bool, but got NoneType."):
        Validator.check_bool(None, "keep_dims")


def test_check_string():
    assert Validator.check_string("NHWC", ["NCHW", "NHWC"], "data_format", "BiasAdd") == "NHWC"
    with raises_exactly(
        ValueError, "For 'BiasAdd', the 'data_format' must be one of ['NCHW', 'NHWC'], but got 'NDHW'."
    ):
        Validator.check_string("NDHW", ["NCHW", "NHWC"], "data_format", "BiasAdd")
    with raises_exactly(TypeError, "For 'BiasAdd', the 'data_format' must be str, but got int."):
        Validator.check_string(1, ["NCHW", "NHWC"], "data_format", "BiasAdd")


def test_check_subclass():
    assert Validator.check_subclass("x", mstype.float32, mstype.float_type, "P") is mstype.float32
    assert Validator.check_subclass("x", mstype.int8, mstype.int8, "P") is mstype.int8
    with raises_exactly(
        TypeError, "For 'P', the 'x' must be one of [Float16, BFloat16, Float32, Float64], but got Int8."
    ):
        Validator.check_subclass("x", mstype.int8, mstype.float_type, "P")
    with raises_exactly(TypeError, "For 'P', the 'x' must be Float32, but got str."):
        Validator.check_subclass("x", "float32", [mstype.float32], "P")


def test_check_tensor_dtype_valid():
    assert Validator.check_tensor_dtype_valid("x", mstype.float16, mstype.float_type, "Exp") is mstype.float16
    with raises_exactly(
        TypeError,
        "For 'Exp', the 'x' must be a Tensor of dtype one of [Float16, BFloat16, Float32, Float64], but got Int32.",
    ):
        Validator.check_tensor_dtype_valid("x", mstype.int32, mstype.float_type, "Exp")
    with raises_exactly(TypeError, "For 'Softplus', the 'x' must be a Tensor of dtype Float32, but got Float64."):
        Validator.check_tensor_dtype_valid("x", mstype.float64, [mstype.float32], "Softplus")
    with raises_exactly(TypeError, "For 'Exp', the 'x' must be a Tensor, but got list."):
        Validator.check_tensor_dtype_valid("x", [2, 3], mstype.float_type, "Exp")


def test_check_tensors_dtypes_same_and_valid():
    args = {"x": mstype.float32, "y": mstype.float32}
    assert Validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, "Add") is mstype.float32
    with raises_exactly(TypeError, "For 'Add', the 'y' must have the same dtype as 'x' (Float32), but got Float16."):
        Validator.check_tensors_dtypes_same_and_valid(
            {"x": mstype.float32, "y": mstype.float16}, mstype.float_type, "Add"
        )
    with raises_exactly(
        TypeError,
        "For 'RealDiv', the 'y' must be a Tensor of dtype one of [Float16, BFloat16, Float32, Float64], but got Int8.",
    ):
        Validator.check_tensors_dtypes_same_and_valid(
            {"x": mstype.float32, "y": mstype.int8}, mstype.float_type, "RealDiv"
        )


# ---------------------------------------------------------------------------------------------
# check_axis


def test_check_axis_normalises():
    assert Validator.check_axis("axis", 1, 3, "ReduceSum") == (1,)
    assert Validator.check_axis("axis", -1, 3, "ReduceSum") == (2,)
    assert Validator.check_axis("axis", (0, -1), 3, "ReduceSum") == (0, 2)
    assert Validator.check_axis("axis", [2, 0], 3, "ReduceSum") == (2, 0)
    assert Validator.check_axis("axis", (), 3, "ReduceSum") == ()
    assert Validator.check_axis("axis", 0, 0, "ReduceSum") == (0,)  # a 0-d tensor accepts axis 0 / -1
    assert Validator.check_axis("axis", -1, 0, "ReduceSum") == (0,)


def test_check_axis_errors():
    with raises_exactly(ValueError, "For 'ReduceSum', the 'axis' must be in [-2, 2), but got 2."):
        Validator.check_axis("axis", 2, 2, "ReduceSum")
    with raises_exactly(ValueError, "For 'ReduceSum', the 'axis' must be in [-2, 2), but got -3."):
        Validator.check_axis("axis", (0, -3), 2, "ReduceSum")
    with raises_exactly(ValueError, "For 'ReduceSum', the 'axis' has the axis 1 twice."):
        Validator.check_axis("axis", (1, -1), 2, "ReduceSum")
    with raises_exactly(TypeError, "For 'ReduceSum', the 'axis' must be int or a tuple of int, but got float."):
        Validator.check_axis("axis", 1.0, 2, "ReduceSum")
    with raises_exactly(TypeError, "For 'ReduceSum', the 'axis' must be int or a tuple of int, but got tuple."):
        Validator.check_axis("axis", (0, True), 2, "ReduceSum")


# ---------------------------------------------------------------------------------------------
# Rel

# (member, ref, ref2, a value that holds, a value that does not, describe())
REL_CASES = [
    (Rel.EQ, 2, None, 2, 3, "equal to 2"),
    (Rel.NE, 2, None, 3, 2, "not equal to 2"),
    (Rel.LT, 2, None, 1, 2, "less than 2"),
    (Rel.LE, 2, None, 2, 3, "less than or equal to 2"),
    (Rel.GT, 2, None, 3, 2, "greater than 2"),
    (Rel.GE, 2, None, 2, 1, "greater than or equal to 2"),
    (Rel.INC_NEITHER, 0, 2, 1, 0, "in (0, 2)"),
    (Rel.INC_LEFT, 0, 2, 0, 2, "in [0, 2)"),
    (Rel.INC_RIGHT, 0, 2, 2, 0, "in (0, 2]"),
    (Rel.INC_BOTH, 0, 2, 2, 3, "in [0, 2]"),
    (Rel.IN, (1, 2), None, 1, 3, "in (1, 2)"),
    (Rel.NOT_IN, (1, 2), None, 3, 1, "not in (1, 2)"),
]


def test_rel_cases_cover_every_member():
    assert {case[0] for case in REL_CASES} == set(Rel)


@pytest.mark.parametrize("rel,ref,ref2,good,bad,text", REL_CASES, ids=lambda v: getattr(v, "name", None))
def test_rel_holds_and_describe(rel, ref, ref2, good, bad, text):
    assert rel.holds(good, ref, ref2) is True
    assert rel.holds(bad, ref, ref2) is False
    assert rel.describe(ref, ref2) == text


def test_rel_in_message_through_check_number():
    with raises_exactly(ValueError, "For 'P', the 'x' must be in [1, 2], but got 3."):
        Validator.check_number("x", 3, [1, 2], Rel.IN, "P")
    with raises_exactly(ValueError, "For 'P', the 'x' must be not equal to 0, but got 0."):
        Validator.check_int(0, 0, Rel.NE, "x", "P")


def test_mindspore_argument_order_and_defaults():
    """MindSpore's Validator: value first for the numeric, bool and string checks; the names optional."""
    assert Validator.check_int_range(2, 0, 3, Rel.INC_LEFT) == 2
    with pytest.raises(ValueError, match=r"^The 'input value' must be in \[0, 3\), but got 3\.$"):
        Validator.check_int_range(3, 0, 3, Rel.INC_LEFT)
    assert Validator.check_positive_float(0.5, "lr", "SGD") == 0.5
    with pytest.raises(ValueError, match="For 'SGD', the 'lr' must be"):
        Validator.check_positive_float(0.0, "lr", "SGD")
    assert Validator.check_string("same", ["same", "valid"], "pad_mode", "Conv2D") == "same"
