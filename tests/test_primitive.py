"""Primitive: attrs, copies, devices, user-defined operators, inference hooks and cached call plans."""

from __future__ import annotations

import copy
import inspect
import sys

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.dispatch.plan import plan_key
from opforge.errors import KernelError, KernelNotFoundError
from opforge.kernels import KernelAttr, kernels_for, register_kernel
from opforge.kernels.selection import select_kernel
from opforge.op_info import CpuRegOp, DataType, get_op_info, op_info_register
from opforge.primitives import (
    Primitive,
    PrimitiveWithCheck,
    PrimitiveWithInfer,
    prim_attr_register,
    primitive_classes,
    validator,
)

pytestmark = pytest.mark.usefixtures("isolated_registries")


F32 = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)


def f32(values):
    return Tensor(np.asarray(values, np.float32))


# ---------------------------------------------------------------------------------------------
# prim_attr_register and attrs


def test_prim_attr_register_stores_defaults_before_the_body_runs():
    seen = {}

    class AttrProbe(Primitive):
        @prim_attr_register
        def __init__(self, alpha=0.5, mode="fast"):
            seen["alpha"] = self.alpha  # readable as a field while __init__ runs
            seen["mode"] = self.attrs["mode"]
            seen["init_attrs"] = dict(self.init_attrs)

    p = AttrProbe(mode="slow")
    assert seen == {"alpha": 0.5, "mode": "slow", "init_attrs": {"alpha": 0.5, "mode": "slow"}}
    assert p.name == "AttrProbe"
    assert p.attrs == {"alpha": 0.5, "mode": "slow"}
    assert p.get_attr_dict() is p.attrs


def test_builtin_attr_defaults():
    assert ops.Elu().alpha == 1.0
    assert ops.Elu(alpha=0.3).attrs["alpha"] == 0.3
    assert ops.MatMul().attrs["transpose_a"] is False
    assert ops.MatMul(transpose_b=True).transpose_b is True
    assert ops.BiasAdd().data_format == "NCHW"
    assert ops.ReduceSum().keep_dims is False


def test_add_and_del_prim_attr():
    e = ops.Elu()
    assert e.add_prim_attr("extra", 3) is e
    assert e.extra == 3
    assert e.del_prim_attr("extra") is e
    assert "extra" not in e.attrs
    with pytest.raises(AttributeError, match="'Elu' object has no attribute 'extra'"):
        _ = e.extra
    with pytest.raises(KeyError, match="For 'Elu', there is no attr 'nope' to delete."):
        e.del_prim_attr("nope")


def test_changed_attr_changes_the_next_result():
    x = f32([-1.0, 2.0])
    e = ops.Elu(alpha=1.0)
    np.testing.assert_allclose(e(x).asnumpy(), [np.expm1(-1.0), 2.0], rtol=1e-6)
    e.add_prim_attr("alpha", 2.0)
    np.testing.assert_allclose(e(x).asnumpy(), [2.0 * np.expm1(-1.0), 2.0], rtol=1e-6)
    e.add_prim_attr("alpha", 1.0)
    np.testing.assert_allclose(e(x).asnumpy(), [np.expm1(-1.0), 2.0], rtol=1e-6)


def test_matmul_attrs_reach_the_kernel():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = ops.MatMul(transpose_b=True)(Tensor(a), Tensor(b))
    np.testing.assert_allclose(out.asnumpy(), a @ b.T)
    out = ops.MatMul(transpose_a=True)(Tensor(a), Tensor(b))
    np.testing.assert_allclose(out.asnumpy(), a.T @ b)


def test_init_prim_io_names():
    relu = ops.ReLU()
    assert relu.input_names == ["input_x"]
    assert relu.output_names == ["output"]
    assert relu.attrs["input_names"] == ["input_x"]
    assert relu.attrs["output_names"] == ["output"]
    p = Primitive("Custom")
    p.init_prim_io_names(inputs=["a", "b"], outputs=["c"])
    assert (p.input_names, p.output_names) == (["a", "b"], ["c"])


def test_repr_shows_name_and_attrs():
    assert repr(ops.Elu()) == "Prim[Elu]<alpha=1.0>"
    assert repr(ops.Elu(alpha=0.5)) == "Prim[Elu]<alpha=0.5>"
    assert repr(ops.ReLU()) == "Prim[ReLU]"
    assert repr(ops.MatMul(transpose_b=True)) == "Prim[MatMul]<transpose_a=False, transpose_b=True>"
    assert repr(ops.BiasAdd()) == "Prim[BiasAdd]<data_format='NCHW'>"
    assert repr(Primitive("Bare")) == "Prim[Bare]"


# ---------------------------------------------------------------------------------------------
# Devices


def test_set_device_cpu_runs():
    relu = ops.ReLU()
    assert relu.set_device("CPU") is relu
    assert relu.attrs["primitive_target"] == "CPU"
    np.testing.assert_array_equal(relu(f32([-1.0, 3.0])).asnumpy(), [0.0, 3.0])


def test_set_device_gpu_with_cpu_inputs_raises():
    relu = ops.ReLU().set_device("GPU")
    with pytest.raises(
        ValueError, match=r"^For 'ReLU', the primitive is set to run on GPU, but its inputs are on CPU\.$"
    ):
        relu(f32([1.0]))


def test_set_device_rejects_unknown_target():
    with pytest.raises(
        ValueError, match=r"For 'ReLU', the 'device_target' must be one of \('CPU', 'GPU'\), but got 'TPU'\."
    ):
        ops.ReLU().set_device("TPU")


def test_context_device_target():
    assert opforge.get_context("device_target") == "CPU"
    with pytest.raises(ValueError, match="the 'device_target' must be one of"):
        opforge.set_context(device_target="TPU")
    with pytest.raises(ValueError, match=r"For 'set_context', unknown option 'bogus'"):
        opforge.set_context(bogus=1)
    with pytest.raises(ValueError, match=r"the 'num_threads' must be an int >= 1, but got 0"):
        opforge.set_context(num_threads=0)
    assert opforge.get_context("device_target") == "CPU"
    assert opforge.get_context("num_threads") >= 1


# ---------------------------------------------------------------------------------------------
# Copies


@pytest.mark.parametrize(
    "make_copy", [copy.copy, copy.deepcopy, lambda p: p.clone()], ids=["copy", "deepcopy", "clone"]
)
def test_copies_keep_attrs_and_are_independent(make_copy):
    x = f32([-1.0, 1.0])
    e = ops.Elu(alpha=0.5)
    first = e(x).asnumpy()  # the original has a cached plan
    c = make_copy(e)
    assert type(c) is ops.Elu and c is not e
    assert c.name == "Elu"
    assert c.attrs == e.attrs and c.attrs is not e.attrs
    assert repr(c) == "Prim[Elu]<alpha=0.5>"
    np.testing.assert_array_equal(c(x).asnumpy(), first)

    c.add_prim_attr("alpha", 3.0)
    c.add_prim_attr("only_on_copy", 1)
    assert e.alpha == 0.5 and "only_on_copy" not in e.attrs
    assert repr(e) == "Prim[Elu]<alpha=0.5>"
    np.testing.assert_allclose(c(x).asnumpy(), [3.0 * np.expm1(-1.0), 1.0], rtol=1e-6)
    np.testing.assert_array_equal(e(x).asnumpy(), first)

    e.add_prim_attr("alpha", 0.25)
    assert c.alpha == 3.0


# ---------------------------------------------------------------------------------------------
# Every operator is reachable

# Every operator class defined in opforge.primitives: a new one is covered without being listed.
BUILTIN_OPS = {
    name
    for name, cls in primitive_classes().items()
    if cls.__module__.startswith("opforge.primitives.") and cls not in (PrimitiveWithInfer, PrimitiveWithCheck)
}


def test_the_first_slice_of_operators_is_built_in():
    first = {"Add", "Sub", "Mul", "RealDiv", "Neg", "Exp", "Log", "MatMul", "ReduceSum", "ReduceMean", "AssignSub",
             "ReLU", "Elu", "Sigmoid", "Tanh", "BiasAdd", "Cast", "Reshape", "Assign", "ReluGrad", "EluGrad",
             "SigmoidGrad", "TanhGrad"}  # fmt: skip
    assert first <= BUILTIN_OPS


@pytest.mark.parametrize("name", sorted(BUILTIN_OPS))
def test_every_operator_is_reachable_from_ops(name):
    cls = getattr(ops, name)
    assert issubclass(cls, Primitive)
    assert cls.__name__ == name
    assert primitive_classes()[name] is cls
    assert get_op_info(name, "CPU") is not None
    assert kernels_for(name, "CPU"), f"no CPU kernel for {name}"
    required = [
        p for p in inspect.signature(cls.__init__).parameters.values() if p.default is p.empty and p.name != "self"
    ]
    if not required:  # BroadcastTo(shape) needs its attr
        assert cls().name == name


# ---------------------------------------------------------------------------------------------
# A user-defined operator


class UserSoftplus(PrimitiveWithInfer):
    """y = log(1 + exp(x)). dtypes: float32."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, [mstype.float32], self.name)


def test_user_defined_primitive_with_op_info_and_python_kernel():
    op_info_register(
        CpuRegOp("UserSoftplus")
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .get_op_info()
    )
    calls = []

    @register_kernel("UserSoftplus", "CPU", F32)
    def softplus(x):
        calls.append(x.dtype)
        return np.logaddexp(np.float32(0), x)

    assert primitive_classes()["UserSoftplus"] is UserSoftplus
    assert get_op_info("UserSoftplus", "CPU").dtype_signatures() == [((mstype.float32,), (mstype.float32,))]
    (entry,) = kernels_for("UserSoftplus", "CPU")
    assert entry.kind == "python" and entry.impl is softplus
    assert select_kernel("UserSoftplus", "CPU", (mstype.float32,)).entry is entry

    x = np.array([-2.0, 0.0, 3.0], np.float32)
    out = UserSoftplus()(Tensor(x))
    assert out.dtype is mstype.float32 and out.shape == (3,)
    np.testing.assert_allclose(out.asnumpy(), np.log1p(np.exp(x)), rtol=1e-6)
    assert calls == [np.dtype(np.float32)]
    with pytest.raises(
        TypeError, match=r"For 'UserSoftplus', the 'x' must be a Tensor of dtype Float32, but got Float64"
    ):
        UserSoftplus()(Tensor(np.array([1.0])))


def test_python_kernel_receives_constants_and_attrs():
    received = {}

    class UserScaleSum(PrimitiveWithInfer):
        __mindspore_signature__ = ()

        @prim_attr_register
        def __init__(self, scale=2.0):
            pass

        def infer_shape(self, x_shape, axis):
            return [d for i, d in enumerate(x_shape) if i != axis]

        def infer_dtype(self, x_dtype, axis):
            return x_dtype

    @register_kernel("UserScaleSum", "CPU", F32)
    def scale_sum(x, axis, scale):
        received.update(axis=axis, scale=scale)
        return (x.sum(axis=axis) * scale).astype(np.float32)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = UserScaleSum(scale=3.0)(Tensor(x), 1)
    np.testing.assert_array_equal(out.asnumpy(), x.sum(axis=1) * 3.0)
    assert received == {"axis": 1, "scale": 3.0}


def test_plain_primitive_output_follows_first_tensor_input():
    class UserTwice(Primitive):
        @prim_attr_register
        def __init__(self):
            pass

    @register_kernel("UserTwice", "CPU", F32)
    def twice(x):
        return x * np.float32(2)

    out = UserTwice()(f32([1.0, 2.5]))
    assert out.dtype is mstype.float32 and out.shape == (2,)
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 5.0])
    with pytest.raises(TypeError, match=r"^For 'UserTwice', at least one input must be a Tensor\.$"):
        UserTwice()(3)


def test_multi_output_primitive():
    class UserSplitSign(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x):
            return (x, x)

        def infer_dtype(self, x):
            return (x, mstype.bool_)

    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32).add_output_attr(mstype.bool_)

    @register_kernel("UserSplitSign", "CPU", attr)
    def split_sign(x):
        return np.abs(x), x < 0

    magnitude, negative = UserSplitSign()(f32([-1.5, 2.0]))
    assert magnitude.dtype is mstype.float32 and negative.dtype is mstype.bool_
    np.testing.assert_array_equal(magnitude.asnumpy(), [1.5, 2.0])
    np.testing.assert_array_equal(negative.asnumpy(), [True, False])


def test_python_kernel_sees_attr_changed_by_add_prim_attr():
    class UserScaleA(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, scale=2.0):
            pass

    @register_kernel("UserScaleA", "CPU", F32)
    def scale(x, scale):
        return x * np.float32(scale)

    p = UserScaleA()
    x = f32([1.0, 2.0])
    np.testing.assert_array_equal(p(x).asnumpy(), [2.0, 4.0])
    p.add_prim_attr("scale", 5.0)
    np.testing.assert_array_equal(p(x).asnumpy(), [5.0, 10.0])


def test_fresh_instance_is_not_given_a_plan_with_another_instances_attrs():
    class UserScaleB(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, scale=2.0):
            pass

    @register_kernel("UserScaleB", "CPU", F32)
    def scale(x, scale):
        return x * np.float32(scale)

    x = f32([1.0, 2.0])
    first = UserScaleB()
    first(x)
    first.add_prim_attr("scale", 5.0)
    first(x)  # builds and shares a plan for attrs {scale: 5.0}
    np.testing.assert_array_equal(UserScaleB(scale=5.0)(x).asnumpy(), [5.0, 10.0])


# ---------------------------------------------------------------------------------------------
# PrimitiveWithCheck


class UserChecked(PrimitiveWithCheck):
    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def check_shape(self, x_shape):
        if len(x_shape) != 1:
            raise ValueError(f"For '{self.name}', the 'x' must be 1-D, but got {x_shape}.")

    def check_dtype(self, x_dtype):
        validator.check_tensor_dtype_valid("x", x_dtype, [mstype.float32], self.name)


def test_primitive_with_check_runs_checks_and_keeps_input_meta():
    @register_kernel("UserChecked", "CPU", F32)
    def negate(x):
        return -x

    out = UserChecked()(f32([1.0, -2.0]))
    assert out.dtype is mstype.float32 and out.shape == (2,)
    np.testing.assert_array_equal(out.asnumpy(), [-1.0, 2.0])
    with pytest.raises(ValueError, match=r"^For 'UserChecked', the 'x' must be 1-D, but got \[1, 2\]\.$"):
        UserChecked()(Tensor(np.zeros((1, 2), np.float32)))
    with pytest.raises(
        TypeError, match=r"^For 'UserChecked', the 'x' must be a Tensor of dtype Float32, but got Int32\.$"
    ):
        UserChecked()(Tensor(np.zeros(2, np.int32)))


def test_primitive_with_check_may_also_infer():
    class UserCheckedSum(PrimitiveWithCheck):
        @prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x_shape):
            return []

    @register_kernel("UserCheckedSum", "CPU", F32)
    def total(x):
        return np.asarray(x.sum(), np.float32)

    out = UserCheckedSum()(f32([1.0, 2.0, 3.0]))
    assert out.shape == () and out.dtype is mstype.float32
    assert out.asnumpy() == 6.0


# ---------------------------------------------------------------------------------------------
# infer_value


class UserConstShape(PrimitiveWithInfer):
    """Gives the shape of its input as an int64 tensor, computed at inference (no kernel)."""

    @prim_attr_register
    def __init__(self):
        pass

    def infer_shape(self, x_shape):
        return [len(x_shape)]

    def infer_dtype(self, x_dtype):
        return mstype.int64

    def infer_value(self, x):
        return np.array(x.shape, np.int64)


def test_infer_value_gives_the_result_without_a_kernel():
    out = UserConstShape()(Tensor(np.zeros((2, 5, 3), np.float32)))
    assert isinstance(out, Tensor)
    assert out.dtype is mstype.int64
    np.testing.assert_array_equal(out.asnumpy(), [2, 5, 3])


class UserMaybeConst(PrimitiveWithInfer):
    """A value at inference for 1-element inputs, else the kernel's result."""

    @prim_attr_register
    def __init__(self):
        pass

    def infer_value(self, x):
        return Tensor(np.full(x.shape, 7.0, np.float32)) if x.shape == (1,) else None


def test_infer_value_none_without_a_kernel_raises():
    with pytest.raises(
        KernelNotFoundError, match=r"^For 'UserMaybeConst', infer_value gave no value and no kernel is registered\.$"
    ):
        UserMaybeConst()(f32([1.0, 2.0]))
    np.testing.assert_array_equal(UserMaybeConst()(f32([1.0])).asnumpy(), [7.0])


def test_infer_value_none_falls_back_to_the_kernel():
    class UserMaybeConst2(UserMaybeConst):
        pass

    @register_kernel("UserMaybeConst2", "CPU", F32)
    def plus_one(x):
        return x + np.float32(1)

    np.testing.assert_array_equal(UserMaybeConst2()(f32([1.0, 2.0])).asnumpy(), [2.0, 3.0])
    np.testing.assert_array_equal(UserMaybeConst2()(f32([1.0])).asnumpy(), [7.0])


def test_infer_value_primitive_uses_a_kernel_registered_after_the_first_call():
    class UserMaybeConst3(UserMaybeConst):
        pass

    with pytest.raises(KernelNotFoundError):
        UserMaybeConst3()(f32([1.0, 2.0]))
    register_kernel("UserMaybeConst3", "CPU", F32)(lambda x: x + np.float32(1))
    np.testing.assert_array_equal(UserMaybeConst3()(f32([1.0, 2.0])).asnumpy(), [2.0, 3.0])


# ---------------------------------------------------------------------------------------------
# infer results are checked


@pytest.mark.parametrize(
    "bad_shape,bad_dtype,message",
    [
        ("abc", None, r"For 'UserGarbage', infer_shape must give a list of non-negative ints, but gave 'abc'\."),
        ([2, -1], None, r"For 'UserGarbage', infer_shape must give a list of non-negative ints, but gave \[2, -1\]\."),
        ([True], None, r"For 'UserGarbage', infer_shape must give a list of non-negative ints, but gave \[True\]\."),
        ([2.0], None, r"For 'UserGarbage', infer_shape must give a list of non-negative ints, but gave \[2\.0\]\."),
        (
            None,
            np.float32,
            r"For 'UserGarbage', infer_dtype must give an opforge dtype, but gave <class 'numpy\.float32'>\.",
        ),
        (None, "float32", r"For 'UserGarbage', infer_dtype must give an opforge dtype, but gave 'float32'\."),
        (([2], [2]), (mstype.float32,), r"For 'UserGarbage', infer gave 2 shapes but 1 dtypes\."),
    ],
)
def test_garbage_from_infer_raises_clear_type_error(bad_shape, bad_dtype, message):
    class UserGarbage(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x):
            return x if bad_shape is None else bad_shape

        def infer_dtype(self, x):
            return x if bad_dtype is None else bad_dtype

    register_kernel("UserGarbage", "CPU", F32)(lambda x: x)
    with pytest.raises(TypeError, match="^" + message + "$"):
        UserGarbage()(f32([1.0, 2.0]))


# ---------------------------------------------------------------------------------------------
# Plans are cached


def _counting_class(name):
    counts = {"infer_shape": 0, "kernel": 0}

    class Counting(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, k=1.0):
            pass

        def infer_shape(self, x):
            counts["infer_shape"] += 1
            return x

    Counting.__name__ = Counting.__qualname__ = name

    attrs = [KernelAttr().add_input_attr(d).add_output_attr(d) for d in (mstype.float32, mstype.float64)]

    @register_kernel(name, "CPU", attrs)
    def kernel(x, k):
        counts["kernel"] += 1
        return x + x.dtype.type(k)

    return Counting, counts


def test_plans_are_cached_per_meta():
    cls, counts = _counting_class("UserCountingA")
    p = cls()
    x = f32([1.0, 2.0])
    np.testing.assert_array_equal(p(x).asnumpy(), [2.0, 3.0])
    np.testing.assert_array_equal(p(f32([5.0, 6.0])).asnumpy(), [6.0, 7.0])
    assert counts == {"infer_shape": 1, "kernel": 2}  # the second call reused the plan

    p(f32([1.0, 2.0, 3.0]))  # a new shape builds a new plan
    assert counts["infer_shape"] == 2
    p(Tensor(np.array([1.0, 2.0])))  # a new dtype too
    assert counts["infer_shape"] == 3
    p(x)
    assert counts["infer_shape"] == 3


def test_plans_are_dropped_when_attrs_change():
    cls, counts = _counting_class("UserCountingB")
    p = cls()
    x = f32([1.0])
    p(x)
    p(x)
    assert counts["infer_shape"] == 1
    p.add_prim_attr("extra", 1)
    p(x)
    assert counts["infer_shape"] == 2
    p.del_prim_attr("extra")
    p(x)  # back to attrs seen before
    assert counts["infer_shape"] == 2


def test_equal_instances_share_plans():
    cls, counts = _counting_class("UserCountingC")
    x = f32([1.0])
    for _ in range(3):
        p = cls()
        np.testing.assert_array_equal(p(x).asnumpy(), [2.0])
    assert counts == {"infer_shape": 1, "kernel": 3}


def test_failed_call_does_not_cache_a_plan():
    class UserNoKernelYet(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

    p = UserNoKernelYet()
    x = f32([1.0])
    with pytest.raises(KernelNotFoundError, match="For 'UserNoKernelYet'"):
        p(x)
    register_kernel("UserNoKernelYet", "CPU", F32)(lambda x: x * np.float32(3))
    np.testing.assert_array_equal(p(x).asnumpy(), [3.0])


def test_kernel_error_type_is_exported():
    assert issubclass(KernelError, RuntimeError)
    assert opforge.KernelError is KernelError
    assert issubclass(opforge.KernelNotFoundError, TypeError)


# ---------------------------------------------------------------------------------------------
# Plans are keyed by constants' types and values, exactly


def test_signed_zero_constants_get_their_own_plans():
    fill = ops.Fill()
    assert np.signbit(fill(mstype.float32, (2,), 0.0).asnumpy()).tolist() == [False, False]
    assert np.signbit(fill(mstype.float32, (2,), -0.0).asnumpy()).tolist() == [True, True]


def test_bool_int_and_float_constants_are_not_confused():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    transpose = ops.Transpose()
    assert transpose(x, (1, 0)).shape == (3, 2)
    for bad in ((1.0, 0.0), (True, False)):
        with pytest.raises(TypeError, match="For 'Transpose'"):
            transpose(x, bad)


def test_nan_constants_reuse_their_plan():
    fill = ops.Fill()
    assert np.isnan(fill(mstype.float32, (1,), float("nan")).asnumpy()).all()
    plans = len(fill._plans)  # (instances with equal attrs share their plans)
    for _ in range(3):
        assert np.isnan(fill(mstype.float32, (1,), float("nan")).asnumpy()).all()
    assert len(fill._plans) == plans


def test_every_written_input_is_written_back_after_a_widening_cast():
    """A kernel registered for float32 only runs float16 Parameters widened; both written inputs
    (the returned one and the other) must receive the update."""
    from opforge.dispatch import signature as sig
    from opforge.kernels import KernelAttr, register_kernel

    class TwoWrites(PrimitiveWithInfer):
        __mindspore_signature__ = (
            sig.make_sig("a", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
            sig.make_sig("b", sig.sig_rw.RW_WRITE, dtype=sig.sig_dtype.T),
            sig.make_sig("d", dtype=sig.sig_dtype.T),
        )

        @prim_attr_register
        def __init__(self):
            self.init_prim_io_names(inputs=["a", "b", "d"], outputs=["a"])

    f32 = mstype.float32
    attr = KernelAttr().add_input_attr(f32).add_input_attr(f32).add_input_attr(f32).add_output_attr(f32)

    @register_kernel("TwoWrites", "CPU", attr)
    def two_writes(a, b, d):
        a += d
        b -= d
        return a

    a = Parameter(np.zeros(2, np.float16), name="a")
    b = Parameter(np.zeros(2, np.float16), name="b")
    out = TwoWrites()(a, b, Tensor(np.ones(2, np.float16)))
    assert out is a and a.dtype is mstype.float16
    assert a.asnumpy().tolist() == [1.0, 1.0] and b.asnumpy().tolist() == [-1.0, -1.0]
    assert a._version == 1 and b._version == 1


def test_docstrings_list_the_registered_kernels_per_backend(isolated_registries):
    from opforge.kernels import KernelAttr, register_kernel

    assert "CPU: Float16 -> Float16; BFloat16 -> BFloat16; Float32 -> Float32" in ops.Elu.__doc__
    assert "GPU: Float16 -> Float16; BFloat16 -> BFloat16; Float32 -> Float32" in ops.Elu.__doc__
    assert "UInt8 -> UInt8" not in ops.Elu.__doc__
    from helpers import user_op

    probe = user_op("DocProbe")
    u8 = mstype.uint8
    register_kernel("DocProbe", "GPU", KernelAttr().add_input_attr(u8).add_output_attr(u8))(lambda x: x)
    assert "\n    GPU: UInt8 -> UInt8" in probe.__doc__  # read from the registry when asked
    assert ops.Elu.__doc__.startswith("Exponential linear unit")


# The C fast path: cached calls of Tensors and weak Python scalars


_SCALAR_CASES = [
    ("float32", [1.5, -0.0, 0.0, float("nan"), float("inf"), -1e-45, 3.4e38, 7, -2, True]),
    ("float64", [1.5, -0.0, 1e300, float("-inf"), 2**53 + 1, -(2**63), True]),
    ("float16", [1.5, -0.0, 65504.0, 3, True]),
    ("bfloat16", [1.5, -0.0, 3, True]),
    ("int8", [0, 1, -128, 127, True, False]),
    ("int16", [-32768, 32767, 5, True]),
    ("int32", [-(2**31), 2**31 - 1, 7, True]),
    ("int64", [-(2**63), 2**63 - 1, 7, True]),
    ("uint8", [0, 255, 9, True]),
]


@pytest.mark.parametrize("dtype, values", _SCALAR_CASES, ids=[c[0] for c in _SCALAR_CASES])
def test_weak_scalar_calls_run_the_fast_plan_with_each_calls_value(dtype, values):
    mul = ops.Mul()
    np_dtype = mstype.to_dtype(dtype).np_dtype
    data = np.array([1, 2, 3], np_dtype)
    x = Tensor(data)
    for value in values * 3:  # more distinct values than the plan keeps converted, each seen again
        out = mul(x, value)
        with np.errstate(over="ignore"):
            want = data * np.asarray(value, np_dtype)
        assert out.dtype is x.dtype
        np.testing.assert_array_equal(out.asnumpy(), want)
        assert np.signbit(out.asnumpy()).tolist() == np.signbit(want).tolist()  # -0.0 is not 0.0
        np.testing.assert_array_equal((value * x).asnumpy(), want)
    plans = {key[1]: plan for key, plan in mul._plans.items()}
    for kind in {type(v) for v in values}:
        assert isinstance(plans[("weak", kind)], opforge._C.FastPlan)


def test_fast_plan_overflow_of_an_int_scalar_still_names_the_operator():
    x = Tensor(np.array([1, 2], np.int16))
    sub = ops.Sub()
    np.testing.assert_array_equal(sub(x, 3).asnumpy(), [-2, -1])
    assert isinstance(sub._plans[(x._meta, ("weak", int))], opforge._C.FastPlan)
    for bad in (32768, -32769, 2**64):
        message = rf"^For 'Sub', the 'y' \({bad}\) does not fit Int16 \[-32768, 32767\]\.$"
        with pytest.raises(OverflowError, match=message):
            sub(x, bad)
        with pytest.raises(OverflowError, match=rf"^For 'Sub', the 'x' \({bad}\) does not fit Int16"):
            bad - x


def test_fast_plan_float32_overflow_warns_as_numpy_does():
    x = f32([1.0])
    x * 2.0
    with pytest.warns(RuntimeWarning, match="overflow"):
        out = x * 1e300
    assert out.asnumpy()[0] == np.inf


def test_numpy_scalars_and_arrays_still_join_tensor_operators():
    x = f32([1.0, 2.0])
    np.testing.assert_array_equal((x * np.float64(2.0)).asnumpy(), [2.0, 4.0])
    assert (x * np.float64(2.0)).dtype is mstype.float32
    np.testing.assert_array_equal((x + np.array([1.0, 1.0], np.float32)).asnumpy(), [2.0, 3.0])
    np.testing.assert_array_equal((np.int32(3) - x).asnumpy(), [2.0, 1.0])
    with pytest.raises(TypeError, match="For 'Add', the 'y' must be a Tensor or a number, but got str"):
        x + "a"


def test_tape_sees_cached_scalar_calls():
    x = f32([1.0, -2.0])
    (x * 3.0).sum()  # cache the plans outside the tape first
    np.testing.assert_array_equal(opforge.grad(lambda t: (t * 3.0 - 1).sum())(x).asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(opforge.grad(lambda t: (2.0 / t).sum())(x).asnumpy(), [-2.0, -0.5])


def test_fast_plan_rejects_arguments_of_another_kind():
    x = f32([1.0])
    add = ops.Add()
    add(x, 1.0)
    plan = add._plans[(x._meta, ("weak", float))]
    with pytest.raises(TypeError, match="Python number"):
        plan((x, x))
    with pytest.raises(TypeError, match="Tensors only"):
        plan((1.0, 1.0))


def _python_functions_run(fn, *args):
    """(fn(*args), the names of the Python functions it ran): none when the C call path served it."""
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(None)
    return out, seen


_CONSTANT_CALLS = [
    ("Reshape", ops.Reshape, lambda x: (x, (6, 4)), lambda a: a.reshape(6, 4)),
    ("Transpose", ops.Transpose, lambda x: (x, (1, 0)), lambda a: a.T),
    ("ReduceSum-axis", ops.ReduceSum, lambda x: (x, 1), lambda a: a.sum(1)),
    ("ReduceSum-tuple", lambda: ops.ReduceSum(keep_dims=True), lambda x: (x, (0,)), lambda a: a.sum(0, keepdims=True)),
    ("ExpandDims", ops.ExpandDims, lambda x: (x, -1), lambda a: a[..., None]),
    ("Tile", ops.Tile, lambda x: (x, (2, 1)), lambda a: np.tile(a, (2, 1))),
    ("Cast-dtype", ops.Cast, lambda x: (x, mstype.float16), lambda a: a.astype(np.float16)),
    ("Concat-tuple", ops.Concat, lambda x: ((x, x),), lambda a: np.concatenate([a, a])),
    ("Concat-list-axis", lambda: ops.Concat(1), lambda x: ([x, x, x],), lambda a: np.concatenate([a, a, a], 1)),
    ("Stack", ops.Stack, lambda x: ((x, x),), lambda a: np.stack([a, a])),
    ("AddN", ops.AddN, lambda x: ([x, x, x],), lambda a: 3 * a),
]


@pytest.mark.parametrize(
    "make, arguments, reference", [c[1:] for c in _CONSTANT_CALLS], ids=[c[0] for c in _CONSTANT_CALLS]
)
def test_calls_with_constants_or_tuples_run_in_c_once_cached(make, arguments, reference):
    """An axis, a shape or a dtype keys the plan by value (``_C.constant_key``), a tuple of Tensors by
    their metas (``_C.sequence_key``), and the plan is a FastPlan of the Tensors alone: a cached call
    runs no Python code, as an all-Tensor call does."""
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    x, prim = Tensor(data), make()
    args = arguments(x)
    prim(*args)
    out, ran = _python_functions_run(prim, *args)
    assert ran == []
    np.testing.assert_array_equal(out.asnumpy(), reference(data))
    assert isinstance(prim._plans[plan_key(prim, args)], opforge._C.FastPlan)


def test_a_tuple_of_tensors_and_other_values_takes_the_python_path():
    x = f32([1.0, 2.0])
    concat = ops.Concat()
    np.testing.assert_array_equal(concat((x, x)).asnumpy(), [1.0, 2.0, 1.0, 2.0])
    assert opforge._C.sequence_key((x, 1.0)) is None and opforge._C.sequence_key(()) is None
    assert opforge._C.sequence_key((x, x)) != opforge._C.sequence_key([x, x])
    with pytest.raises(TypeError, match="Concat"):
        concat((x, 1.0))
    with pytest.raises(TypeError, match="Concat"):
        concat(())


def test_numbers_are_keyed_by_value_where_the_signature_takes_a_constant():
    """ReduceSum's axis is a constant (one plan per value); Mul's y joins a dtype group (one plan per type)."""
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    total = ops.ReduceSum()
    for axis, want in [(0, [3.0, 5.0, 7.0]), (1, [3.0, 12.0]), (-1, [3.0, 12.0])]:
        np.testing.assert_array_equal(total(x, axis).asnumpy(), want)
        assert plan_key(total, (x, axis)) == (x._meta, opforge._C.constant_key(axis))
    mul = ops.Mul()
    mul(x, 2.0), mul(x, 3.0)
    assert plan_key(mul, (x, 3.0)) == (x._meta, ("weak", float)) and plan_key(mul, (x, 3.0)) in mul._plans


@pytest.mark.parametrize(
    "a, b", [(1, True), (1, 1.0), (0.0, -0.0), ((1, 2), [1, 2]), ((1, (2,)), (1, 2)), ("a", b"a"), (None, 0)]
)
def test_constant_keys_tell_apart_type_and_bits(a, b):
    key = opforge._C.constant_key
    assert key(a) == key(copy.deepcopy(a)) and key(a) != key(b)
    x = f32([1.0])
    assert plan_key(ops.ReduceSum(), (x, a)) != plan_key(ops.ReduceSum(), (x, b))


@pytest.mark.parametrize(
    "value",
    [np.int64(1), (np.int64(1),), 2**64, object(), {"a": 1}],
    ids=["numpy-scalar", "tuple-of-numpy-scalar", "int-beyond-int64", "object", "dict"],
)
def test_constants_the_c_key_cannot_take_go_the_python_way(value):
    assert opforge._C.constant_key(value) is None


def test_numpy_scalar_constants_are_python_numbers_for_the_plan():
    x = Tensor(np.arange(15, dtype=np.float32).reshape(3, 5))
    total = ops.ReduceSum()
    np.testing.assert_array_equal(total(x, np.int64(1)).asnumpy(), [10.0, 35.0, 60.0])
    assert plan_key(total, (x, 1)) in total._plans  # the plan of the Python number
    np.testing.assert_array_equal(total(x, (np.int32(0),)).asnumpy(), [15.0, 18.0, 21.0, 24.0, 27.0])
    assert plan_key(total, (x, (0,))) in total._plans


def test_a_constant_call_reshapes_a_parameter_into_a_copy_and_a_tensor_into_a_view():
    reshape = ops.Reshape()
    w = Parameter(f32([1.0, 2.0, 3.0, 4.0]), name="w")
    t = f32([1.0, 2.0, 3.0, 4.0])
    for _ in range(2):  # the second calls run the cached FastPlan
        of_w, of_t = reshape(w, (2, 2)), reshape(t, (2, 2))
        ops.Assign()(w, f32([9.0, 9.0, 9.0, 9.0]))
        np.testing.assert_array_equal(of_w.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
        assert np.shares_memory(of_t._data, t._data)
        ops.Assign()(w, f32([1.0, 2.0, 3.0, 4.0]))


def test_a_constant_call_with_a_bad_argument_still_names_the_operator():
    x = f32([[1.0, 2.0], [3.0, 4.0]])
    reshape = ops.Reshape()
    reshape(x, (4,))
    with pytest.raises(ValueError, match="Reshape"):
        reshape(x, (3,))
    with pytest.raises(TypeError, match="Reshape"):
        reshape((4,), x)


# ---------------------------------------------------------------------------------------------
# Construction and plans shared by new instances


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: ops.Tanh(1), "For 'Tanh', the constructor takes no arguments, but got 1."),
        (
            lambda: ops.Elu(1.0, 2.0),
            "For 'Elu', the constructor takes 1 positional arguments, but got 2; its arguments are (alpha=1.0).",
        ),
        (lambda: ops.Tanh(axis=1), "For 'Tanh', the constructor has no argument 'axis'; it takes none."),
        (
            lambda: ops.Elu(1.0, alpha=1.0),
            "For 'Elu', the constructor got the argument 'alpha' by position and by keyword.",
        ),
        (
            lambda: ops.BroadcastTo(),
            "For 'BroadcastTo', the constructor's argument 'shape' is missing; its arguments are (shape).",
        ),
        (lambda: ops.Elu(1), "For 'Elu', the 'alpha' must be float, but got int."),
    ],
    ids=["too-many", "too-many-positional", "unknown", "twice", "missing", "bad-type"],
)
def test_constructor_misuse_names_the_operator(make, message):
    with pytest.raises(TypeError) as info:
        make()
    assert str(info.value) == message


def test_constructor_binds_by_position_keyword_and_default():
    assert ops.ReduceSum(True).attrs == ops.ReduceSum(keep_dims=True).attrs
    assert ops.ReduceSum().init_attrs == {"keep_dims": False}
    assert ops.BroadcastTo((2, 3)).shape == (2, 3) and ops.BroadcastTo(shape=(4,)).init_attrs == {"shape": (4,)}


def test_attrs_are_fields_but_never_hide_the_class_or_the_state():
    class UserFieldsProbe(Primitive):
        @prim_attr_register
        def __init__(self, scale=2.0, infer_shape=1):
            pass

        def infer_shape(self, x):
            return x

    p = UserFieldsProbe()
    assert p.scale == 2.0 and p.attrs["infer_shape"] == 1 and callable(p.infer_shape)
    p.add_prim_attr("name", "other")  # an attr named like the state stays an attr only
    assert p.name == "UserFieldsProbe" and p.attrs["name"] == "other"
    p.add_prim_attr("scale", 3.0)
    assert p.scale == 3.0
    p.del_prim_attr("scale")
    with pytest.raises(AttributeError):
        _ = p.scale


def test_a_new_instance_runs_the_shared_fast_plan_on_its_first_call():
    x = f32([-1.0, 2.0])
    ops.Elu(alpha=0.5)(x)
    shared = ops.Elu(alpha=0.5)._plans  # a fresh instance: no plans yet
    assert shared == {}
    fresh = ops.Elu(alpha=0.5)
    np.testing.assert_allclose(fresh(x).asnumpy(), [0.5 * np.expm1(-1.0), 2.0], rtol=1e-6)
    assert isinstance(fresh._plans[(x._meta,)], opforge._C.FastPlan)
    other = ops.Elu(alpha=0.25)
    np.testing.assert_allclose(other(x).asnumpy(), [0.25 * np.expm1(-1.0), 2.0], rtol=1e-6)
    assert other._plans is not fresh._plans


@pytest.mark.parametrize("a, b", [(0.0, -0.0), (1, True), (1.0, 1), ((1, 2), [1, 2]), ("a", b"a")])
def test_attrs_that_differ_in_type_or_bits_do_not_share_plans(a, b):
    class UserAttrKeyProbe(Primitive):
        @prim_attr_register
        def __init__(self, value=None):
            pass

    key_a = opforge._C.attrs_key(UserAttrKeyProbe(a))
    assert key_a == opforge._C.attrs_key(UserAttrKeyProbe(a))
    assert key_a != opforge._C.attrs_key(UserAttrKeyProbe(b))


def test_attrs_without_a_key_keep_private_plans_that_new_kernels_still_drop():
    class UserUnkeyed(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, table=None):
            pass

    register_kernel("UserUnkeyed", "CPU", F32)(lambda x, table: x + np.float32(table[0]))
    p = UserUnkeyed(table=np.array([1.0], np.float32))  # an array: no key, so no sharing
    x = f32([1.0])
    np.testing.assert_array_equal(p(x).asnumpy(), [2.0])
    assert p._attrs_key is False and p._plans
    shared = ops.Elu()
    shared(x)
    assert shared._plans
    register_kernel("UserUnkeyedOther", "CPU", F32)(lambda x: x)
    assert not p._plans and not shared._plans  # a new kernel drops private and shared plans alike
    np.testing.assert_array_equal(p(x).asnumpy(), [2.0])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_blas_jobs_run_on_the_openmp_threads(threads, rng):
    # OpenBLAS runs its parallel jobs on opforge's OpenMP team (one pool for both); a GEMM's jobs
    # wait for each other, so every thread count must still finish with the right answer.
    a = rng.standard_normal((384, 512)).astype(np.float32)
    b = rng.standard_normal((512, 256)).astype(np.float32)
    before = opforge.get_context("num_threads")
    opforge.set_context(num_threads=threads)
    try:
        got = ops.MatMul()(Tensor(a), Tensor(b)).asnumpy()
        relu = ops.ReLU()(Tensor(np.tile(a.ravel(), 4))).asnumpy()  # an OpenMP kernel between GEMMs
        again = ops.MatMul(transpose_a=True)(Tensor(a), Tensor(a)).asnumpy()
    finally:
        opforge.set_context(num_threads=before)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(relu, np.maximum(np.tile(a.ravel(), 4), 0))
    np.testing.assert_allclose(again, a.T @ a, rtol=1e-4, atol=1e-3)
