"""Signatures: binding, defaults, dtype-group promotion with weak scalars, RW_WRITE Parameters.

Most checks go through real primitive calls (Add, ReduceSum, Assign, AssignSub with their C++
kernels); the promotion rules are also checked on a user-defined primitive whose Python kernel
records what it received, so they do not depend on which C++ kernels exist.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.dispatch import binding
from opforge.dispatch import signature as sig
from opforge.kernels import KernelAttr, register_kernel
from opforge.primitives import PrimitiveWithInfer, prim_attr_register

pytestmark = pytest.mark.usefixtures("isolated_registries")


def t(values, dtype):
    return Tensor(np.asarray(values, dtype=mstype.to_dtype(dtype).np_dtype))


# ---------------------------------------------------------------------------------------------
# make_sig and bind_arguments


def test_make_sig_defaults():
    s = sig.make_sig()
    assert s.name == "var"
    assert s.rw is sig.sig_rw.RW_READ
    assert s.kind is sig.sig_kind.KIND_POSITIONAL_KEYWORD
    assert s.default is sig.EMPTY
    assert s.dtype is sig.sig_dtype.T_EMPTY_DEFAULT_VALUE
    s = sig.make_sig("v", sig.sig_rw.RW_WRITE, default=3, dtype=sig.sig_dtype.T1)
    assert (s.name, s.rw, s.default, s.dtype) == ("v", sig.sig_rw.RW_WRITE, 3, sig.sig_dtype.T1)
    assert repr(sig.EMPTY) == "<empty>"


SIGNATURE = (sig.make_sig("x"), sig.make_sig("axis", default=()), sig.make_sig("scale", default=1.0))


def test_bind_arguments_positional_keyword_and_defaults():
    assert binding.bind_arguments("P", SIGNATURE, (1,), {}) == (1, (), 1.0)
    assert binding.bind_arguments("P", SIGNATURE, (1, 2), {}) == (1, 2, 1.0)
    assert binding.bind_arguments("P", SIGNATURE, (1,), {"scale": 3.0}) == (1, (), 3.0)
    assert binding.bind_arguments("P", SIGNATURE, (), {"x": 5, "axis": 0}) == (5, 0, 1.0)


def test_bind_arguments_errors_name_the_operator():
    with pytest.raises(TypeError, match=r"^For 'P', it takes 3 arguments \(x, axis, scale\), but got 4\.$"):
        binding.bind_arguments("P", SIGNATURE, (1, 2, 3, 4), {})
    with pytest.raises(TypeError, match=r"^For 'P', the argument 'x' is missing\.$"):
        binding.bind_arguments("P", SIGNATURE, (), {"axis": 1})
    with pytest.raises(TypeError, match=r"^For 'P', got unexpected arguments \['bogus', 'zz'\]\.$"):
        binding.bind_arguments("P", SIGNATURE, (1,), {"zz": 1, "bogus": 2})


def test_check_scalar_fits():
    binding.check_scalar_fits("Add", "y", 127, mstype.int8)
    binding.check_scalar_fits("Add", "y", True, mstype.int8)
    binding.check_scalar_fits("Add", "y", 1e300, mstype.float16)  # floats overflow to inf, as in NumPy
    with pytest.raises(OverflowError, match=r"^For 'Add', the 'y' \(128\) does not fit Int8 \[-128, 127\]\.$"):
        binding.check_scalar_fits("Add", "y", 128, mstype.int8)
    with pytest.raises(OverflowError, match=r"For 'Sub', the 'x' \(-1\) does not fit UInt8 \[0, 255\]"):
        binding.check_scalar_fits("Sub", "x", -1, mstype.uint8)


# ---------------------------------------------------------------------------------------------
# plan_promotion (no kernels involved)

ADD_SIG = ops.Add.__mindspore_signature__
ASSIGN_SIG = ops.Assign.__mindspore_signature__


def test_plan_promotion_targets():
    assert binding.plan_promotion("Add", ADD_SIG, (t([1], "int8"), 2)) == {1: mstype.int8}
    assert binding.plan_promotion("Add", ADD_SIG, (t([1], "int8"), 2.5)) == {0: mstype.float32, 1: mstype.float32}
    assert binding.plan_promotion("Add", ADD_SIG, (t([1], "float16"), 2.5)) == {1: mstype.float16}
    assert binding.plan_promotion("Add", ADD_SIG, (t([1], "int32"), t([1], "float16"))) == {0: mstype.float16}
    assert binding.plan_promotion("Add", ADD_SIG, (t([1], "float32"), t([1], "float32"))) == {}
    assert binding.plan_promotion("Add", ADD_SIG, (1, 2.0)) == {0: mstype.float32, 1: mstype.float32}


def test_plan_promotion_rejects_non_numbers_in_a_group():
    with pytest.raises(TypeError, match=r"^For 'Add', the 'y' must be a Tensor or a number, but got str\.$"):
        binding.plan_promotion("Add", ADD_SIG, (t([1], "int8"), "2"))


def test_plan_promotion_separate_groups_promote_separately():
    signature = (
        sig.make_sig("a", dtype=sig.sig_dtype.T),
        sig.make_sig("b", dtype=sig.sig_dtype.T),
        sig.make_sig("c", dtype=sig.sig_dtype.T1),
        sig.make_sig("d", dtype=sig.sig_dtype.T1),
        sig.make_sig("e"),
    )
    args = (t([1], "int8"), t([1], "int32"), t([1], "float16"), 1, "const")
    assert binding.plan_promotion("P", signature, args) == {0: mstype.int32, 3: mstype.float16}


def test_plan_promotion_rw_write_rules():
    p32 = Parameter(np.zeros(2, np.float32))
    with pytest.raises(
        TypeError,
        match=r"^For 'Assign', the 'variable' is written in place, so it must be a Parameter, but got Tensor\.$",
    ):
        binding.plan_promotion("Assign", ASSIGN_SIG, (t([0, 0], "float32"), t([1, 1], "float32")))
    # The Parameter's dtype wins, even where ordinary promotion would widen it.
    assert binding.plan_promotion("Assign", ASSIGN_SIG, (p32, t([1, 1], "float16"))) == {1: mstype.float32}
    assert binding.plan_promotion("Assign", ASSIGN_SIG, (p32, 3)) == {1: mstype.float32}
    with pytest.raises(
        TypeError,
        match=r"^For 'Assign', the 'value' \(Float64\) cannot be cast losslessly to Float32, "
        r"the dtype of the Parameter 'variable' it updates\.$",
    ):
        binding.plan_promotion("Assign", ASSIGN_SIG, (p32, t([1, 1], "float64")))
    p_int = Parameter(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match=r"the 'value' \(float\) cannot be cast losslessly to Int32"):
        binding.plan_promotion("Assign", ASSIGN_SIG, (p_int, 1.5))


# ---------------------------------------------------------------------------------------------
# Promotion through a user primitive with a recording Python kernel


class SigProbeAdd(PrimitiveWithInfer):
    """x + y with Add's signature; its Python kernel accepts every number dtype."""

    __mindspore_signature__ = ops.Add.__mindspore_signature__

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x", "y"], outputs=["output"])

    def infer_shape(self, x, y):
        return list(np.broadcast_shapes(tuple(x), tuple(y)))

    def infer_dtype(self, x, y):
        assert x is y, "the signature must have promoted x and y to one dtype"
        return x


def _register_probe_add(received: list):
    attrs = [KernelAttr().add_input_attr(d).add_input_attr(d).add_output_attr(d) for d in mstype.number_type]

    @register_kernel("SigProbeAdd", "CPU", attrs)
    def probe_add(x, y):
        received.append((x.dtype, y.dtype))
        return np.add(x, y, dtype=x.dtype)


@pytest.mark.parametrize(
    "x,y,expected",
    [
        (t([1, 2], "int8"), 2, mstype.int8),
        (t([1, 2], "int8"), 2.5, mstype.float32),
        (t([1, 2], "uint16"), 2.5, mstype.float32),
        (t([1, 2], "float16"), 2.5, mstype.float16),
        (t([1, 2], "bfloat16"), 2, mstype.bfloat16),
        (t([1, 2], "float64"), 1j, mstype.complex128),
        (t([1, 2], "int32"), t([1, 2], "float16"), mstype.float16),
        (t([1, 2], "int8"), t([1, 2], "uint8"), mstype.int16),
        (t([True, False], "bool"), 3, mstype.int64),
        (2, t([1, 2], "int8"), mstype.int8),
    ],
    ids=lambda v: str(getattr(v, "dtype", v)),
)
def test_promotion_reaches_the_kernel(x, y, expected):
    received = []
    _register_probe_add(received)
    out = SigProbeAdd()(x, y)
    assert out.dtype is expected
    assert received == [(expected.np_dtype, expected.np_dtype)]
    want = np.asarray(x.asnumpy() if isinstance(x, Tensor) else x).astype(expected.np_dtype) + np.asarray(
        y.asnumpy() if isinstance(y, Tensor) else y
    ).astype(expected.np_dtype)
    np.testing.assert_array_equal(out.asnumpy(), want)


def test_weak_scalar_value_is_read_on_every_call_and_checked_for_overflow():
    _register_probe_add([])
    p = SigProbeAdd()
    x = t([1, 2], "int8")
    np.testing.assert_array_equal(p(x, 1).asnumpy(), [2, 3])
    np.testing.assert_array_equal(p(x, 5).asnumpy(), [6, 7])  # same plan, new scalar
    with pytest.raises(OverflowError, match=r"For 'SigProbeAdd', the 'y' \(1000\) does not fit Int8"):
        p(x, 1000)


# ---------------------------------------------------------------------------------------------
# Promotion through the built-in Add (C++ kernels)


def test_add_int8_tensor_and_int_scalar_stays_int8():
    out = ops.Add()(t([1, -2, 100], "int8"), 2)
    assert out.dtype is mstype.int8
    np.testing.assert_array_equal(out.asnumpy(), np.array([3, 0, 102], np.int8))


def test_add_int8_tensor_and_float_scalar_is_float32():
    out = ops.Add()(t([1, -2], "int8"), 2.5)
    assert out.dtype is mstype.float32
    np.testing.assert_array_equal(out.asnumpy(), np.array([3.5, 0.5], np.float32))


def test_add_float16_tensor_and_float_scalar_stays_float16():
    out = ops.Add()(t([1, -2], "float16"), 2.5)
    assert out.dtype is mstype.float16
    np.testing.assert_array_equal(out.asnumpy(), np.array([3.5, 0.5], np.float16))


def test_add_int32_and_float16_tensors_is_float16():
    out = ops.Add()(t([1, 2], "int32"), t([0.5, 0.25], "float16"))
    assert out.dtype is mstype.float16
    np.testing.assert_array_equal(out.asnumpy(), np.array([1.5, 2.25], np.float16))


def test_add_two_scalars_gives_a_0d_tensor():
    out = ops.Add()(1, 2.5)
    assert out.dtype is mstype.float32 and out.shape == ()
    assert out.item() == 3.5


def test_int_scalar_overflowing_int8_raises_overflow_error_naming_the_op():
    add = ops.Add()
    x = t([1, 2], "int8")
    with pytest.raises(OverflowError, match=r"^For 'Add', the 'y' \(300\) does not fit Int8 \[-128, 127\]\.$"):
        add(x, 300)
    add(x, 3)  # now the plan is cached: the overflow check still runs on every call
    with pytest.raises(OverflowError, match=r"For 'Add', the 'y' \(-129\) does not fit Int8"):
        add(x, -129)


@settings(max_examples=40, deadline=None)
@given(value=st.integers(-1000, 1000))
def test_int_scalar_into_int8_fits_or_overflows(value):
    x = t([0], "int8")
    if -128 <= value <= 127:
        out = ops.Add()(x, value)
        assert out.dtype is mstype.int8 and out.asnumpy()[0] == value
    else:
        with pytest.raises(OverflowError, match="For 'Add'"):
            ops.Add()(x, value)


# ---------------------------------------------------------------------------------------------
# Defaults, too many arguments, keywords


def test_defaults_fill_missing_args_reduce_sum_reduces_all_axes():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = ops.ReduceSum()(Tensor(x))
    assert out.shape == () and out.dtype is mstype.float32
    assert out.item() == 15.0
    np.testing.assert_array_equal(ops.ReduceSum()(Tensor(x), 1).asnumpy(), [3.0, 12.0])
    kept = ops.ReduceSum(keep_dims=True)(Tensor(x), axis=0)
    assert kept.shape == (1, 3)
    np.testing.assert_array_equal(kept.asnumpy(), [[3.0, 5.0, 7.0]])
    assert ops.ReduceSum(keep_dims=True)(Tensor(x)).shape == (1, 1)


def test_keyword_arguments_bind_by_name():
    x, y = t([1.0, 2.0], "float32"), t([10.0, 20.0], "float32")
    np.testing.assert_array_equal(ops.Sub()(y=x, x=y).asnumpy(), [9.0, 18.0])


def test_too_many_arguments_raise_type_error_naming_the_op():
    x = t([1.0], "float32")
    with pytest.raises(TypeError, match=r"^For 'Add', it takes 2 arguments \(x, y\), but got 3\.$"):
        ops.Add()(x, x, x)
    with pytest.raises(TypeError, match=r"^For 'ReduceSum', it takes 2 arguments \(input_x, axis\), but got 3\.$"):
        ops.ReduceSum()(x, 0, 1)


def test_unknown_or_missing_keywords_raise_type_error_naming_the_op():
    x = t([1.0], "float32")
    with pytest.raises(TypeError, match=r"^For 'Add', got unexpected arguments \['z'\]\.$"):
        ops.Add()(x, y=x, z=1)
    with pytest.raises(TypeError, match=r"^For 'ReduceSum', got unexpected arguments \['keep_dims'\]\.$"):
        ops.ReduceSum()(x, keep_dims=True)
    with pytest.raises(TypeError, match=r"^For 'Add', the argument 'y' is missing\.$"):
        ops.Add()(x, bogus=x)


# ---------------------------------------------------------------------------------------------
# RW_WRITE: Assign and AssignSub


@pytest.mark.parametrize("op", [ops.Assign, ops.AssignSub], ids=lambda c: c.__name__)
def test_rw_write_requires_a_parameter(op):
    with pytest.raises(
        TypeError,
        match=rf"^For '{op.__name__}', the 'variable' is written in place, "
        r"so it must be a Parameter, but got Tensor\.$",
    ):
        op()(t([1.0, 2.0], "float32"), t([1.0, 1.0], "float32"))


@pytest.mark.parametrize("op", [ops.Assign, ops.AssignSub], ids=lambda c: c.__name__)
def test_rw_write_checked_on_every_call_even_with_a_cached_plan(op):
    prim = op()
    value = t([1.0, 1.0], "float32")
    prim(Parameter(np.zeros(2, np.float32)), value)  # builds and caches the plan for these metas
    with pytest.raises(TypeError, match="must be a Parameter, but got Tensor"):
        prim(t([0.0, 0.0], "float32"), value)


@pytest.mark.parametrize("op", [ops.Assign, ops.AssignSub], ids=lambda c: c.__name__)
def test_lossy_float64_value_into_float32_parameter_raises(op):
    w = Parameter(np.zeros(2, np.float32))
    with pytest.raises(
        TypeError,
        match=rf"^For '{op.__name__}', the 'value' \(Float64\) cannot be cast losslessly to Float32, "
        r"the dtype of the Parameter 'variable' it updates\.$",
    ):
        op()(w, t([1.0, 2.0], "float64"))
    np.testing.assert_array_equal(w.asnumpy(), [0.0, 0.0])


@pytest.mark.parametrize("op", [ops.Assign, ops.AssignSub], ids=lambda c: c.__name__)
def test_float_scalar_into_int_parameter_raises(op):
    w = Parameter(np.array(5, np.int32))
    with pytest.raises(TypeError, match=r"the 'value' \(float\) cannot be cast losslessly to Int32"):
        op()(w, 1.5)
    assert w.item() == 5


def test_lossy_int_tensor_into_smaller_int_parameter_raises():
    w = Parameter(np.zeros(2, np.int8))
    with pytest.raises(TypeError, match=r"the 'value' \(Int16\) cannot be cast losslessly to Int8"):
        ops.Assign()(w, t([1, 2], "int16"))


def test_assign_lossless_float16_value_writes_float32_parameter_in_place():
    w = Parameter(np.array([10.0, 20.0], np.float32), name="w")
    data_before = w._data
    out = ops.Assign()(w, t([1.5, -2.0], "float16"))
    assert out is w
    assert w.dtype is mstype.float32
    assert w._data is data_before
    np.testing.assert_array_equal(w.asnumpy(), np.array([1.5, -2.0], np.float32))


def test_assign_sub_lossless_value_writes_in_place():
    w = Parameter(np.array([10.0, 20.0], np.float32))
    out = ops.AssignSub()(w, t([1.5, 2.0], "float16"))
    assert out is w
    np.testing.assert_array_equal(w.asnumpy(), np.array([8.5, 18.0], np.float32))
    ops.AssignSub()(w, t([0.5, 0.5], "float32"))
    np.testing.assert_array_equal(w.asnumpy(), np.array([8.0, 17.5], np.float32))


def test_int_scalar_into_0d_parameter():
    w = Parameter(np.array(5.0, np.float32))
    assert ops.Assign()(w, 3) is w
    assert w.item() == 3.0
    w8 = Parameter(np.array(5, np.int8))
    with pytest.raises(OverflowError, match=r"For 'AssignSub', the 'value' \(200\) does not fit Int8"):
        ops.AssignSub()(w8, 200)


def test_assign_sub_on_int8_parameter_updates_it():
    w = Parameter(np.array([10, 20], np.int8))
    out = ops.AssignSub()(w, t([1, 2], "int8"))
    assert out is w
    np.testing.assert_array_equal(w.asnumpy(), np.array([9, 18], np.int8))
