"""Bad input gets a clear Python exception (never a crash or a silent wrong answer); edge values work."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelError, KernelNotFoundError
from opforge.kernels import KernelAttr, kernels_for, register_kernel
from opforge.primitives import PrimitiveWithInfer, prim_attr_register

pytestmark = pytest.mark.usefixtures("isolated_registries")


def f32(values):
    return Tensor(np.asarray(values, np.float32))


FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
FLOAT_IDS = ["float16", "bfloat16", "float32", "float64"]


# ---------------------------------------------------------------------------------------------
# Wrong Python types


@pytest.mark.parametrize(
    "arg,got",
    [
        ("abc", "str"),
        ([1.0, 2.0], "list"),
        (None, "NoneType"),
        (np.ones(2, np.float32), "numpy.ndarray"),
        (1.5, "float"),
    ],
)
def test_relu_rejects_non_tensors(arg, got):
    with pytest.raises(TypeError, match=rf"^For 'ReLU', the 'input_x' must be a Tensor, but got {got}\.$"):
        ops.ReLU()(arg)


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: ops.Elu(alpha=1), "For 'Elu', the 'alpha' must be float, but got int."),
        (lambda: ops.Elu(alpha=True), "For 'Elu', the 'alpha' must be float, but got bool."),
        (lambda: ops.Elu("1.0"), "For 'Elu', the 'alpha' must be float, but got str."),
        (lambda: ops.EluGrad(alpha=2), "For 'EluGrad', the 'alpha' must be float, but got int."),
        (lambda: ops.MatMul(transpose_a=1), "For 'MatMul', the 'transpose_a' must be bool, but got int."),
        (lambda: ops.MatMul(transpose_b=None), "For 'MatMul', the 'transpose_b' must be bool, but got NoneType."),
        (lambda: ops.ReduceSum(keep_dims="yes"), "For 'ReduceSum', the 'keep_dims' must be bool, but got str."),
        (lambda: ops.ReduceMean(keep_dims=0), "For 'ReduceMean', the 'keep_dims' must be bool, but got int."),
        (lambda: ops.BiasAdd(data_format=1), "For 'BiasAdd', the 'data_format' must be str, but got int."),
    ],
)
def test_bad_attr_types(make, message):
    with pytest.raises(TypeError) as info:
        make()
    assert str(info.value) == message


def test_bad_attr_value():
    with pytest.raises(ValueError) as info:
        ops.BiasAdd(data_format="NDHW")
    assert str(info.value) == "For 'BiasAdd', the 'data_format' must be one of ['NCHW', 'NHWC'], but got 'NDHW'."


def test_unexpected_constructor_argument():
    with pytest.raises(TypeError, match="beta"):
        ops.Elu(beta=1.0)


def test_numpy_scalars_are_accepted_like_python_numbers():
    out = ops.Add()(f32([1.0]), np.float32(2.0))  # a weak scalar, as 2.0 would be
    assert out.dtype is mstype.float32 and out.asnumpy().tolist() == [3.0]
    np.testing.assert_array_equal(ops.ReduceSum()(f32([[1.0, 2.0]]), np.int64(1)).asnumpy(), [3.0])
    with pytest.raises(TypeError, match=r"^For 'Add', the 'y' must be a Tensor or a number, but got str\.$"):
        ops.Add()(f32([1.0]), "2")


def test_one_parameter_in_two_written_slots_is_rejected():
    w = Parameter(np.zeros(2, np.float32), name="w")
    with pytest.raises(ValueError, match=r"^For 'Adam', the 'var' and the 'm' are both written in place, so they "):
        ops.Adam()(w, w, Parameter(np.zeros(2, np.float32)), 0.9, 0.99, 0.1, 0.9, 0.999, 1e-8, f32([1.0, 1.0]))


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: ops.Tanh(1), "For 'Tanh', the constructor takes no arguments, but got 1."),
        (
            lambda: ops.Elu(1.0, 2.0),
            "For 'Elu', the constructor takes 1 positional arguments, but got 2; its arguments are (alpha=1.0).",
        ),
        (lambda: ops.Tanh(axis=1), "For 'Tanh', the constructor has no argument 'axis'; it takes none."),
        (
            lambda: ops.ReduceSum(axis=1),
            "For 'ReduceSum', the constructor has no argument 'axis'; its arguments are (keep_dims=False).",
        ),
        (
            lambda: ops.Elu(1.0, alpha=1.0),
            "For 'Elu', the constructor got the argument 'alpha' by position and by keyword.",
        ),
        (
            lambda: ops.BroadcastTo(),
            "For 'BroadcastTo', the constructor's argument 'shape' is missing; its arguments are (shape).",
        ),
    ],
    ids=["too-many", "too-many-positional", "unknown", "unknown-with-attrs", "twice", "missing"],
)
def test_constructor_misuse_names_the_operator(make, message):
    with pytest.raises(TypeError) as info:
        make()
    assert str(info.value) == message


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: ops.Softmax()(3), "For 'Softmax', the 'logits' must be a Tensor, but got int."),
        (lambda: ops.ReduceSum()(True, 1), "For 'ReduceSum', the 'input_x' must be a Tensor, but got bool."),
        (
            lambda: ops.SigmoidGrad()(f32([1.0]), None),
            "For 'SigmoidGrad', the 'dy' must be a Tensor, but got NoneType.",
        ),
        (lambda: ops.ReLU()(mstype.float32), "For 'ReLU', the 'input_x' must be a Tensor, but got Type."),
        (
            lambda: ops.Cast()(f32([1.0]), f32([1.0])),
            "For 'Cast', the 'dtype' must be a constant (a Python value), but got a Tensor.",
        ),
    ],
    ids=["int", "bool", "none", "dtype", "tensor-as-constant"],
)
def test_non_tensor_in_a_tensor_slot_names_the_operator_and_argument(call, message):
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == message


def test_an_output_too_large_to_address_is_refused_before_allocation():
    with pytest.raises(ValueError) as info:
        ops.Fill()(mstype.float32, (2**40, 2**40), 1.0)
    assert str(info.value) == (
        "For 'Fill', the output of shape [1099511627776, 1099511627776] and dtype Float32 is too large: its non-zero "
        "dims times the item size make 4835703278458516698824704 bytes, but at most 2**63 - 1 can be addressed."
    )
    with pytest.raises(ValueError, match=r"^For 'BroadcastTo', each dim of the output must be less than 2\*\*63"):
        ops.BroadcastTo((0, 2**64))(f32([1.0]))
    with pytest.raises(ValueError, match=r"^For 'OneHot', the output of shape \[3, 0, 4611686018427387904\]"):
        ops.OneHot()(Tensor(np.zeros((3, 0), np.int32)), 2**62, 1.0, 0.0)
    assert ops.OneHot()(Tensor(np.zeros((3, 0), np.int32)), 2**40, 1.0, 0.0).shape == (3, 0, 2**40)


def test_fill_takes_numpy_scalars_as_values_it_checks():
    with pytest.raises(ValueError, match=r"^For 'Fill', the 'value' must fit Int8 \[-128, 127\], but got 200\.$"):
        ops.Fill()(mstype.int8, (2,), np.int64(200))
    with pytest.raises(ValueError, match=r"^For 'Fill', an int 'value' must fit int64, but got 1844674407370955161"):
        ops.Fill()(mstype.bool_, (2,), 2**64)
    with pytest.raises(TypeError, match=r"^For 'Fill', the 'value' must be one of .*, but got complex\.$"):
        ops.Fill()(mstype.float32, (2,), 1j)


def test_numpy_scalar_in_a_dtype_group_is_a_weak_number():
    """A NumPy scalar is taken like the Python number it holds: accepted, and weak."""
    x = Tensor(np.array([1, 2], np.int8))
    for scalar, dtype in ((np.int64(2), mstype.int8), (np.float32(0.5), mstype.float32), (np.bool_(True), mstype.int8)):
        out = ops.Add()(x, scalar)
        want = ops.Add()(x, scalar.item())
        assert out.dtype is dtype is want.dtype
        np.testing.assert_array_equal(out.asnumpy(), want.asnumpy())
    with pytest.raises(OverflowError, match=r"^For 'Add', the 'y' \(300\) does not fit Int8"):
        ops.Add()(x, np.int64(300))
    with pytest.raises(TypeError, match=r"^For 'Add', the 'y' must be a Tensor or a number, but got str_\.$"):
        ops.Add()(x, np.str_("2"))


def test_string_in_a_dtype_group_is_rejected_clearly():
    with pytest.raises(TypeError, match=r"^For 'Mul', the 'x' must be a Tensor or a number, but got str\.$"):
        ops.Mul()("2", f32([1.0]))


def test_unhashable_constant_is_rejected_clearly():
    with pytest.raises(TypeError, match=r"^For 'ReduceSum', the 'axis' has unsupported type set\.$"):
        ops.ReduceSum()(f32([1.0]), {0})
    with pytest.raises(TypeError, match=r"^For 'Reshape', the 'shape' must be a Tensor, but got numpy\.ndarray\.$"):
        ops.Reshape()(f32([1.0]), np.array([1]))


def test_cast_to_a_non_dtype():
    with pytest.raises(TypeError, match=r"^For 'Cast', the 'dtype' must be an opforge dtype, but got 'float32'\.$"):
        ops.Cast()(f32([1.0]), "float32")


# ---------------------------------------------------------------------------------------------
# Arity of primitives without a signature


def test_too_many_args_to_a_signature_less_primitive_names_the_op():
    x = f32([1.0])
    with pytest.raises(TypeError, match=r"^For 'ReLU', it takes 1 inputs \(input_x\), but got 2\.$"):
        ops.ReLU()(x, x)
    with pytest.raises(TypeError, match=r"^For 'ReluGrad', it takes 2 inputs \(y_backprop, x\), but got 1\.$"):
        ops.ReluGrad()(x)


def test_unknown_keyword_to_a_signature_less_primitive_is_named():
    with pytest.raises(TypeError) as info:
        ops.ReLU()(f32([1.0]), foo=1)
    assert "For 'ReLU'" in str(info.value) and "foo" in str(info.value)


# ---------------------------------------------------------------------------------------------
# Wrong dtypes


@pytest.mark.parametrize(
    "op,arg,dtype",
    [
        (ops.Exp, "x", mstype.int32),
        (ops.Log, "x", mstype.bool_),
        (ops.Sigmoid, "input_x", mstype.int64),
        (ops.Tanh, "input_x", mstype.uint8),
        (ops.Elu, "input_x", mstype.int8),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_float_only_ops_reject_other_dtypes(op, arg, dtype):
    x = Tensor(np.zeros(2, dtype.np_dtype))
    with pytest.raises(TypeError) as info:
        op()(x)
    complex_too = ", Complex64, Complex128" if op in (ops.Exp, ops.Log, ops.Tanh) else ""
    assert str(info.value) == (
        f"For '{op.__name__}', the '{arg}' must be a Tensor of dtype one of "
        f"[Float16, BFloat16, Float32, Float64{complex_too}], but got {dtype}."
    )


def test_real_div_of_ints_is_a_clear_type_error():
    x = Tensor(np.array([1, 2], np.int32))
    with pytest.raises(
        TypeError,
        match=r"^For 'RealDiv', the 'x' must be a Tensor of dtype one of "
        r"\[Float16, BFloat16, Float32, Float64, Complex64, Complex128\], but got Int32\.$",
    ):
        ops.RealDiv()(x, x)


def test_bias_add_promotes_as_add_does():
    """One dtype rule (docs/dtypes.md): BiasAdd's inputs are one dtype group, as MatMul's and Add's."""
    out = ops.BiasAdd()(Tensor(np.zeros((2, 3), np.float32)), Tensor(np.zeros(3, np.float64)))
    assert out.dtype is opforge.float64
    with pytest.raises(TypeError, match=r"^For 'BiasAdd', the 'bias' must be a Tensor or a number, but got str\.$"):
        ops.BiasAdd()(Tensor(np.zeros((2, 3), np.float32)), "x")


# ---------------------------------------------------------------------------------------------
# Wrong shapes


def test_add_mismatched_shapes_mentions_both():
    with pytest.raises(ValueError) as info:
        ops.Add()(Tensor(np.zeros((2, 3), np.float32)), Tensor(np.zeros(4, np.float32)))
    assert str(info.value) == "For 'Add', the shapes of 'x' [2, 3] and 'y' [4] cannot broadcast."
    with pytest.raises(ValueError, match=r"For 'Sub', the shapes of 'x' \[3, 1\] and 'y' \[2, 4\] cannot broadcast"):
        Tensor(np.zeros((3, 1), np.float32)) - Tensor(np.zeros((2, 4), np.float32))


def test_matmul_inner_dimension_mismatch():
    a, b = Tensor(np.zeros((2, 3), np.float32)), Tensor(np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError) as info:
        ops.MatMul()(a, b)
    assert str(info.value) == (
        "For 'MatMul', the inner dimensions must match (transpose_a=False, transpose_b=False), "
        "but got shapes [2, 3] and [4, 2]."
    )
    with pytest.raises(
        ValueError, match=r"transpose_a=True, transpose_b=False\), but got shapes \[2, 3\] and \[4, 2\]"
    ):
        ops.MatMul(transpose_a=True)(a, b)
    ok = ops.MatMul(transpose_a=True, transpose_b=True)(a, b)  # (3, 2) @ (2, 4)
    assert ok.shape == (3, 4)
    with pytest.raises(
        ValueError, match=r"^For 'MatMul', the inputs must be 2-D, but got shapes \[3\] and \[3, 1\]\.$"
    ):
        ops.MatMul()(Tensor(np.zeros(3, np.float32)), Tensor(np.zeros((3, 1), np.float32)))


def test_other_shape_errors():
    x = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"For 'BiasAdd', the 'bias' length must equal the channel dimension 3"):
        ops.BiasAdd()(x, Tensor(np.zeros(2, np.float32)))
    with pytest.raises(
        ValueError, match=r"^For 'BiasAdd', the 'input_x rank' must be greater than or equal to 2, but got 1\.$"
    ):
        ops.BiasAdd()(Tensor(np.zeros(3, np.float32)), Tensor(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match=r"^For 'ReduceSum', the 'axis' must be in \[-2, 2\), but got 2\.$"):
        ops.ReduceSum()(x, 2)
    with pytest.raises(ValueError, match=r"^For 'Reshape', cannot reshape \[2, 3\] \(size 6\) into \[4\]\.$"):
        ops.Reshape()(x, (4,))
    with pytest.raises(ValueError, match=r"the 'shape' may hold one -1 and no other negative, but got \[-1, -1\]"):
        x.reshape(-1, -1)
    with pytest.raises(
        ValueError, match=r"^For 'AssignSub', the 'value' must have the shape of 'variable' \[2, 3\], but got \[3\]\.$"
    ):
        ops.AssignSub()(Parameter(np.zeros((2, 3), np.float32)), Tensor(np.zeros(3, np.float32)))
    with pytest.raises(
        ValueError, match=r"^For 'ReluGrad', 'dy' and 'y' must have the same shape, but got \[2\] and \[3\]\.$"
    ):
        ops.ReluGrad()(f32([1.0, 2.0]), f32([1.0, 2.0, 3.0]))


def test_non_parameter_to_rw_write():
    with pytest.raises(TypeError) as info:
        ops.AssignSub()(f32([1.0]), f32([1.0]))
    assert str(info.value) == (
        "For 'AssignSub', the 'variable' is written in place, so it must be a Parameter, but got Tensor."
    )
    with pytest.raises(TypeError, match=r"^For 'Assign', the 'variable' must be a Tensor, but got numpy\.ndarray\.$"):
        ops.Assign()(np.zeros(1, np.float32), f32([1.0]))


# ---------------------------------------------------------------------------------------------
# Zero-size arrays


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize(
    "op", [ops.ReLU, ops.Elu, ops.Exp, ops.Log, ops.Sigmoid, ops.Tanh, ops.Neg], ids=lambda c: c.__name__
)
def test_unary_ops_on_empty_arrays(op, dtype):
    out = op()(Tensor(np.zeros((0, 3), dtype)))
    assert out.shape == (0, 3) and out.size == 0
    assert out.dtype is mstype.nptype_to_dtype(dtype)


def test_binary_ops_on_empty_arrays():
    z = Tensor(np.zeros((0, 3), np.float32))
    one = Tensor(np.ones((1, 3), np.float32))
    for out in (z + one, z - 1.0, 2 * z, z / one, ops.Add()(one, z)):
        assert out.shape == (0, 3) and out.dtype is mstype.float32
    assert (Tensor(np.zeros((0,), np.int64)) + 1).shape == (0,)


def test_reductions_on_empty_arrays():
    z = Tensor(np.zeros((0, 3), np.float32))
    s = ops.ReduceSum()(z, 0)
    assert s.shape == (3,)
    np.testing.assert_array_equal(s.asnumpy(), [0.0, 0.0, 0.0])
    assert ops.ReduceSum()(z, 1).shape == (0,)
    total = ops.ReduceSum()(z)
    assert total.shape == () and total.item() == 0.0
    m = ops.ReduceMean()(z, 0)
    assert m.shape == (3,) and np.isnan(m.asnumpy()).all()  # like NumPy: the mean of nothing is NaN


def test_matmul_and_reshape_on_empty_arrays():
    out = ops.MatMul()(Tensor(np.zeros((0, 3), np.float32)), Tensor(np.ones((3, 2), np.float32)))
    assert out.shape == (0, 2)
    for dtype in (np.float32, np.float64, np.int64):
        out = ops.MatMul()(Tensor(np.ones((2, 0), dtype)), Tensor(np.ones((0, 3), dtype)))
        assert out.shape == (2, 3)
        np.testing.assert_array_equal(out.asnumpy(), np.zeros((2, 3), dtype))
    z = Tensor(np.zeros((0, 3), np.float32))
    assert ops.Reshape()(z, (3, 0)).shape == (3, 0)
    assert z.reshape(-1).shape == (0,)


def test_empty_parameter_update():
    w = Parameter(np.zeros((0, 2), np.float32))
    assert ops.AssignSub()(w, Tensor(np.zeros((0, 2), np.float32))) is w
    assert w.shape == (0, 2)


# ---------------------------------------------------------------------------------------------
# NaN and Inf

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -1.0, 1.0]


def _ref(fn, dtype):
    with np.errstate(all="ignore"):
        return fn(np.array(SPECIALS, np.float64)).astype(dtype)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize(
    "op,ref",
    [
        (ops.Exp, np.exp),
        (ops.Log, np.log),
        (ops.Sigmoid, _sigmoid),
        (ops.Tanh, np.tanh),
        (ops.Neg, np.negative),
        (ops.Elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_nan_and_inf_propagate(op, ref, dtype):
    out = op()(Tensor(np.array(SPECIALS, dtype))).asnumpy()
    want = _ref(ref, dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.isnan(out.astype(np.float64)), np.isnan(want.astype(np.float64)))
    np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=1e-2, equal_nan=True)


def test_specific_special_values():
    x = f32([np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(ops.Exp()(x).asnumpy(), [np.nan, np.inf, 0.0])
    np.testing.assert_array_equal(ops.Sigmoid()(x).asnumpy(), [np.nan, 1.0, 0.0])
    np.testing.assert_array_equal(ops.Tanh()(x).asnumpy(), [np.nan, 1.0, -1.0])
    np.testing.assert_array_equal(ops.Log()(f32([0.0, -1.0, np.inf])).asnumpy(), [-np.inf, np.nan, np.inf])
    np.testing.assert_array_equal(ops.ReLU()(f32([np.inf, -np.inf])).asnumpy(), [np.inf, 0.0])
    np.testing.assert_array_equal((f32([np.inf, 1.0]) + f32([-np.inf, np.nan])).asnumpy(), [np.nan, np.nan])
    np.testing.assert_array_equal((f32([1.0, -1.0, 0.0]) / f32([0.0, 0.0, 0.0])).asnumpy(), [np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
def test_relu_propagates_nan(dtype):
    """ReLU(NaN) is NaN, as NumPy's maximum (and PyTorch / TensorFlow) give: a diverging value is not hidden."""
    out = ops.ReLU()(Tensor(np.array([np.nan, 1.0], dtype))).asnumpy().astype(np.float64)
    assert np.isnan(out[0]) and out[1] == 1.0


# ---------------------------------------------------------------------------------------------
# Integer results that do not fit the widened float kernel


def test_int8_results_match_numpy_wraparound():
    a = np.array([[127, 127]], np.int8)
    b = np.array([[127], [127]], np.int8)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int8)
    np.testing.assert_array_equal(ops.MatMul()(Tensor(a), Tensor(b)).asnumpy(), want)
    ones = np.ones(2049, np.int8)
    assert ops.ReduceSum()(Tensor(ones)).asnumpy().item() == ones.sum(dtype=np.int8)


# ---------------------------------------------------------------------------------------------
# C++ kernels given wrong arrays raise, never crash


def _relu_f32_instance(shape=(3,)):
    (entry,) = [e for e in kernels_for("ReLU", "CPU") if e.attr.inputs == (mstype.float32,)]
    f = np.dtype(np.float32)
    fid = mstype.float32.type_id
    return opforge._C.KernelInstance(entry.impl, "ReLU", [list(shape)], [fid], [f], [list(shape)], [fid], [f], {}, [])


def test_kernel_instance_runs_with_the_right_array():
    inst = _relu_f32_instance()
    out = inst.launch((np.array([-1.0, 0.0, 2.0], np.float32),))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [0.0, 0.0, 2.0])


@pytest.mark.parametrize(
    "args,exc,message",
    [
        (
            (np.array([-1.0, 0.0, 2.0]),),
            TypeError,
            "For 'ReLU', the kernel's input 0 must have dtype float32, but got float64.",
        ),
        ((np.zeros(4, np.float32),), ValueError, "For 'ReLU', the kernel's input 0 must have shape [3]."),
        ((np.zeros((3, 1), np.float32),), ValueError, "For 'ReLU', the kernel's input 0 must have shape [3]."),
        ((np.zeros(6, np.float32)[::2],), ValueError, "For 'ReLU', the kernel's input 0 must be C-contiguous."),
        (([1.0, 2.0, 3.0],), TypeError, "For 'ReLU', the kernel's input 0 must be a numpy.ndarray."),
        ((), ValueError, "For 'ReLU', the kernel expects 1 inputs, but got 0."),
        ((np.zeros(3, np.float32),) * 2, ValueError, "For 'ReLU', the kernel expects 1 inputs, but got 2."),
    ],
    ids=["dtype", "size", "rank", "strided", "list", "none", "two"],
)
def test_kernel_instance_rejects_wrong_arrays(args, exc, message):
    inst = _relu_f32_instance()
    with pytest.raises(exc) as info:
        inst.launch(args)
    assert str(info.value) == message
    np.testing.assert_array_equal(inst.launch((np.ones(3, np.float32),)), [1.0, 1.0, 1.0])  # still usable


def test_kernel_instance_with_a_missing_factory_index_raises():
    f = np.dtype(np.float32)
    fid = mstype.float32.type_id
    with pytest.raises(IndexError):
        opforge._C.KernelInstance(10**6, "ReLU", [[3]], [fid], [f], [[3]], [fid], [f], {}, [])


def test_kernel_instance_rejects_bad_inplace_map():
    (entry,) = [e for e in kernels_for("ReLU", "CPU") if e.attr.inputs == (mstype.float32,)]
    f = np.dtype(np.float32)
    fid = mstype.float32.type_id
    with pytest.raises(ValueError, match="inplace map names a missing input"):
        opforge._C.KernelInstance(entry.impl, "ReLU", [[3]], [fid], [f], [[3]], [fid], [f], {}, [5])
    with pytest.raises(ValueError, match="inplace map must have one entry per output"):
        opforge._C.KernelInstance(entry.impl, "ReLU", [[3]], [fid], [f], [[3]], [fid], [f], {}, [0, 0])


def test_kernel_instance_rejects_attrs_a_kernel_cannot_receive():
    (entry,) = [e for e in kernels_for("Elu", "CPU") if e.attr.inputs == (mstype.float32,)]
    f = np.dtype(np.float32)
    fid = mstype.float32.type_id
    with pytest.raises(TypeError, match="the attr 'alpha' has type 'dict'"):
        opforge._C.KernelInstance(entry.impl, "Elu", [[3]], [fid], [f], [[3]], [fid], [f], {"alpha": {}}, [])
    with pytest.raises(KernelError, match="For 'Elu', the attr 'alpha' must be float, but got str"):
        opforge._C.KernelInstance(entry.impl, "Elu", [[3]], [fid], [f], [[3]], [fid], [f], {"alpha": "x"}, [])
    with pytest.raises(KernelError, match="For 'Elu', the kernel needs the attr 'alpha', but it was not given"):
        opforge._C.KernelInstance(entry.impl, "Elu", [[3]], [fid], [f], [[3]], [fid], [f], {}, [])


def test_in_place_kernel_refuses_a_read_only_parameter():
    data = np.array([1.0, 2.0], np.float32)
    w = Parameter(data)
    w._data.flags.writeable = False
    with pytest.raises(
        ValueError, match=r"^For 'AssignSub', the 'variable' is written in place, but its data is read-only"
    ):
        ops.AssignSub()(w, f32([1.0, 1.0]))


def test_kernel_instance_rejects_metas_that_contradict_the_kernel():
    (entry,) = [e for e in kernels_for("ReLU", "CPU") if e.attr.inputs == (mstype.float32,)]
    f64, f32_ = np.dtype(np.float64), np.dtype(np.float32)
    with pytest.raises((TypeError, ValueError, KernelError)):
        inst = opforge._C.KernelInstance(
            entry.impl, "ReLU", [[3]], [mstype.float64.type_id], [f64], [[3]], [mstype.float32.type_id], [f32_], {}, []
        )
        out = inst.launch((np.array([-1.0, 2.0, 3.0]),))
        raise AssertionError(f"ran and returned {out!r}")


# ---------------------------------------------------------------------------------------------
# Python kernels returning the wrong thing


F32_ATTR = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)


def _bad_kernel_op(name, kernel):
    """A fresh primitive class ``name`` whose only kernel is the Python function ``kernel``."""

    class UserBadKernelOp(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

    UserBadKernelOp.__name__ = UserBadKernelOp.__qualname__ = name
    register_kernel(name, "CPU", F32_ATTR)(kernel)
    return UserBadKernelOp


@pytest.mark.parametrize(
    "result,message",
    [
        (lambda x: x.astype(np.float64), "the kernel's output 0 must be Float32[3] as inferred, but got Float64[3]."),
        (lambda x: x[:2], "the kernel's output 0 must be Float32[3] as inferred, but got Float32[2]."),
        (lambda x: x.reshape(3, 1), "the kernel's output 0 must be Float32[3] as inferred, but got Float32[3, 1]."),
        (lambda x: None, "the kernel's output 0 must be Float32[3] as inferred, but got object[]."),
        (lambda x: (x, x), "the kernel's output 0 must be Float32[3] as inferred, but got Float32[2, 3]."),
    ],
    ids=["dtype", "shape", "rank", "none", "tuple"],
)
def test_python_kernel_returning_wrong_output_raises_kernel_error(result, message, request):
    name = "UserBadKernel_" + request.node.callspec.id
    with pytest.raises(KernelError) as info:
        _bad_kernel_op(name, result)()(f32([1.0, 2.0, 3.0]))
    assert str(info.value) == f"For '{name}', " + message


def test_python_kernel_returning_unsupported_dtype_raises_kernel_error():
    op = _bad_kernel_op("UserBadKernelStr", lambda x: np.array(["abc", "d", "e"]))
    with pytest.raises(KernelError, match="For 'UserBadKernelStr', the kernel's output 0 must be Float32"):
        op()(f32([1.0, 2.0, 3.0]))


def test_python_kernel_exception_propagates():
    def broken(x):
        raise ZeroDivisionError("kernel exploded")

    with pytest.raises(ZeroDivisionError, match="kernel exploded"):
        _bad_kernel_op("UserBadKernelRaises", broken)()(f32([1.0]))


def test_python_kernel_returning_too_many_outputs_raises_kernel_error():
    class UserTwoOutputs(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x):
            return (x, x)

        def infer_dtype(self, x):
            return (x, x)

    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32).add_output_attr(mstype.float32)
    register_kernel("UserTwoOutputs", "CPU", attr)(lambda x: (x, x, x))
    with pytest.raises(KernelError) as info:
        UserTwoOutputs()(f32([1.0]))
    assert str(info.value) == "For 'UserTwoOutputs', the kernel returned 3 outputs, expected 2."


def test_kernel_with_fewer_outputs_than_inferred_is_not_selected():
    class UserOutputCount(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x):
            return (x, x)

        def infer_dtype(self, x):
            return (x, x)

    register_kernel("UserOutputCount", "CPU", F32_ATTR)(lambda x: x)
    with pytest.raises(KernelNotFoundError) as info:
        UserOutputCount()(f32([1.0]))
    assert str(info.value) == (
        "For 'UserOutputCount', no CPU kernel accepts inputs (Float32 -> Float32, Float32), "
        "even after a lossless widening cast.\n"
        "Registered CPU kernels:\n  Float32 -> Float32\nClosest: Float32 -> Float32"
    )
