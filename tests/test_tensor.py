"""Tensor and Parameter: construction, meta, conversion, DLPack, operators, in-place Parameters."""

from __future__ import annotations

import pickle

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import opforge
from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.device import get_device

# ---------------------------------------------------------------------------------------------
# Construction and dtype inference


@pytest.mark.parametrize(
    "data,dtype,shape",
    [
        ([1.0, 2.0], mstype.float32, (2,)),  # Python float -> float32
        ([1, 2, 3], mstype.int64, (3,)),  # Python int -> int64
        ([True, False], mstype.bool_, (2,)),
        ([1, 2.5], mstype.float32, (2,)),
        ([[1 + 2j]], mstype.complex64, (1, 1)),  # Python complex -> complex64
        (np.array([1.0, 2.0]), mstype.float64, (2,)),  # NumPy float64 stays float64
        (np.array([1.0], np.float16), mstype.float16, (1,)),
        (np.array([[1]], np.uint16), mstype.uint16, (1, 1)),
        (np.array([1.5], ml_dtypes.bfloat16), mstype.bfloat16, (1,)),
        (np.array([1j]), mstype.complex128, (1,)),
    ],
    ids=lambda v: str(v) if isinstance(v, (mstype.Type, tuple)) else None,
)
def test_inferred_dtype(data, dtype, shape):
    x = Tensor(data)
    assert x.dtype is dtype
    assert x.shape == shape
    np.testing.assert_array_equal(x.asnumpy(), np.asarray(data).astype(dtype.np_dtype))


def test_scalar_dtypes():
    assert Tensor(1.5).dtype is mstype.float32
    assert Tensor(3).dtype is mstype.int64
    assert Tensor(True).dtype is mstype.bool_
    assert Tensor(np.float64(1.5)).dtype is mstype.float64  # a NumPy scalar keeps its dtype
    assert Tensor(np.int8(3)).dtype is mstype.int8
    assert Tensor(1.5).item() == 1.5


def test_scalar_data_gives_a_0d_tensor():
    for data in (1.5, 3, True, np.float64(1.5), np.array(2.0, np.float32)):
        x = Tensor(data)
        assert x.shape == () and x.ndim == 0 and x.size == 1, (data, x.shape)
    assert Parameter(np.array(0.0, np.float32)).shape == ()


@pytest.mark.parametrize(
    "dtype",
    [mstype.float16, "float64", np.int8, np.dtype(np.uint32), mstype.bfloat16, "Complex64", bool],
    ids=str,
)
def test_explicit_dtype(dtype):
    x = Tensor([1, 2, 3], dtype=dtype)
    target = mstype.to_dtype(dtype)
    assert x.dtype is target
    assert x.asnumpy().dtype == target.np_dtype
    np.testing.assert_array_equal(x.asnumpy(), np.array([1, 2, 3]).astype(target.np_dtype))


def test_explicit_dtype_converts_arrays_and_tensors():
    x = Tensor(np.array([1.7, -2.2]), dtype=mstype.int32)
    assert x.dtype is mstype.int32
    np.testing.assert_array_equal(x.asnumpy(), [1, -2])
    y = Tensor(Tensor([1.5, 2.5]), dtype="float64")
    assert y.dtype is mstype.float64
    np.testing.assert_array_equal(y.asnumpy(), [1.5, 2.5])


def test_from_tensor_keeps_dtype_and_values():
    x = Tensor(np.arange(6, dtype=np.int16).reshape(2, 3))
    y = Tensor(x)
    assert y.dtype is mstype.int16 and y.shape == (2, 3)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_shape_and_dtype_without_data_gives_zeros():
    x = Tensor(shape=(2, 3), dtype=mstype.int32)
    assert x.dtype is mstype.int32 and x.shape == (2, 3)
    np.testing.assert_array_equal(x.asnumpy(), np.zeros((2, 3), np.int32))
    assert Tensor(shape=[4]).dtype is mstype.float32


def test_shape_reshapes_the_data():
    x = Tensor(np.arange(6), shape=(3, 2))
    assert x.shape == (3, 2)
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6).reshape(3, 2))


def test_construction_errors():
    with pytest.raises(ValueError, match=r"^For 'Tensor', give 'input_data', or 'shape' and 'dtype'\.$"):
        Tensor()
    with pytest.raises(TypeError, match=r"^For 'Tensor', the 'input_data' must be numeric, but got list\.$"):
        Tensor([object()])
    with pytest.raises(TypeError, match=r"NumPy dtype '<U1' is not supported by opforge"):
        Tensor(["a"])
    with pytest.raises(TypeError, match=r"unknown dtype name 'float7'"):
        Tensor([1.0], dtype="float7")


# ---------------------------------------------------------------------------------------------
# Meta and conversion


def test_meta_properties():
    x = Tensor(np.zeros((2, 3, 4), np.float16))
    assert x.shape == (2, 3, 4)
    assert x.dtype is mstype.float16
    assert x.ndim == 3
    assert x.size == 24
    assert x.device == "CPU"
    assert x.itemsize == 2
    assert x.nbytes == 48
    assert len(x) == 2


def test_python_conversions():
    x = Tensor(np.array([[1, 2], [3, 4]], np.int32))
    assert x.tolist() == [[1, 2], [3, 4]]
    assert Tensor([7]).item() == 7
    assert [1, 2, 3][Tensor(np.array([1], np.int64)).item()] == 2
    assert bool(Tensor([0.0])) is False
    with pytest.raises(TypeError, match="only integer Tensors can be used as an index, but got Float32"):
        Tensor([1.0]).__index__()


def test_asnumpy_is_a_copy():
    x = Tensor(np.array([1.0, 2.0], np.float32))
    a = x.asnumpy()
    a[0] = 100.0
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 2.0])
    assert not np.shares_memory(a, x.asnumpy())


def test_array_protocol():
    x = Tensor(np.array([[1.0, 2.0]], np.float32))
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.shape == (1, 2)
    np.testing.assert_array_equal(a, [[1.0, 2.0]])
    b = np.asarray(x, dtype=np.float64)
    assert b.dtype == np.float64
    np.testing.assert_array_equal(b, [[1.0, 2.0]])
    np.testing.assert_array_equal(np.exp(x), np.exp(np.array([[1.0, 2.0]], np.float32)))


def test_dlpack_round_trip():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    a = np.from_dlpack(x)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU

    src = np.arange(5, dtype=np.int16)
    y = opforge.from_dlpack(src)
    assert isinstance(y, Tensor)
    assert y.dtype is mstype.int16 and y.shape == (5,)
    np.testing.assert_array_equal(y.asnumpy(), src)

    z = opforge.from_dlpack(x)  # Tensor -> Tensor through DLPack
    assert z.dtype is mstype.float32
    np.testing.assert_array_equal(z.asnumpy(), x.asnumpy())


def test_repr_and_str():
    x = Tensor(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))
    text = repr(x)
    assert text.startswith("Tensor(shape=[2, 3], dtype=Float32, value=")
    assert "4., 5., 6." in text
    assert str(x) == str(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))


# ---------------------------------------------------------------------------------------------
# Contiguity and byte order


def test_non_contiguous_input_becomes_contiguous():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base[:, ::2]
    assert not view.flags.c_contiguous
    x = Tensor(view)
    assert x.shape == (4, 3)
    assert np.asarray(x).flags.c_contiguous
    np.testing.assert_array_equal(x.asnumpy(), view)
    f = np.asfortranarray(base)
    y = Tensor(f)
    assert np.asarray(y).flags.c_contiguous
    np.testing.assert_array_equal(y.asnumpy(), base)
    # A kernel runs on it correctly.
    np.testing.assert_array_equal(opforge.ops.Neg()(x).asnumpy(), -view)


@pytest.mark.parametrize("code,dtype", [(">i4", mstype.int32), (">f8", mstype.float64), (">u2", mstype.uint16)])
def test_byte_swapped_input_becomes_native(code, dtype):
    swapped = np.array([1, 2, 300], dtype=code)
    assert not swapped.dtype.isnative
    x = Tensor(swapped)
    assert x.dtype is dtype
    a = np.asarray(x)
    assert a.dtype.isnative and a.dtype == dtype.np_dtype
    np.testing.assert_array_equal(a, [1, 2, 300])
    y = Tensor(swapped, dtype=dtype)
    assert np.asarray(y).dtype.isnative
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 300])


SUPPORTED_NP = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SUPPORTED_NP += [np.float16, np.float32, np.float64, np.complex64, np.complex128]


@settings(max_examples=60, deadline=None)
@given(
    array=st.sampled_from(SUPPORTED_NP).flatmap(
        lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))
    ),
    step=st.integers(1, 2),
    swap=st.booleans(),
)
def test_any_supported_array_round_trips(array, step, swap):
    data = array[..., ::step]
    if swap:
        data = data.astype(data.dtype.newbyteorder("S"))
    x = Tensor(data)
    stored = np.asarray(x)
    assert stored.flags.c_contiguous and stored.dtype.isnative
    assert x.dtype is mstype.nptype_to_dtype(data.dtype)
    assert x.shape == data.shape
    np.testing.assert_array_equal(x.asnumpy(), data)


# ---------------------------------------------------------------------------------------------
# Operators

F32 = np.float32


def _f32(shape):
    return hnp.arrays(F32, shape, elements=st.floats(-100, 100, width=32))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4))
def test_binary_operators_match_numpy(data, shapes):
    a = data.draw(_f32(shapes.input_shapes[0]))
    b = data.draw(_f32(shapes.input_shapes[1]))
    x, y = Tensor(a), Tensor(b)
    for got, want in [(x + y, a + b), (x - y, a - b), (x * y, a * b)]:
        assert got.dtype is mstype.float32 and got.shape == want.shape
        np.testing.assert_array_equal(got.asnumpy(), want)
    b_nonzero = np.where(b == 0, F32(1), b)
    q = x / Tensor(b_nonzero)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(q.asnumpy(), a / b_nonzero)
    np.testing.assert_array_equal((-x).asnumpy(), -a)


@settings(max_examples=20, deadline=None)
@given(data=st.data(), m=st.integers(1, 5), k=st.integers(1, 5), n=st.integers(1, 5))
def test_matmul_operator_matches_numpy(data, m, k, n):
    a = data.draw(_f32((m, k)))
    b = data.draw(_f32((k, n)))
    out = Tensor(a) @ Tensor(b)
    assert out.shape == (m, n) and out.dtype is mstype.float32
    np.testing.assert_allclose(out.asnumpy(), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-3)


def test_reflected_operators_with_python_scalars():
    a = np.array([1.0, -2.0, 4.0], np.float32)
    x = Tensor(a)
    cases = [
        (x + 2, a + 2),
        (2 + x, 2 + a),
        (x - 1.5, a - 1.5),
        (1.5 - x, 1.5 - a),
        (x * 3, a * 3),
        (3 * x, 3 * a),
        (x / 4, a / 4),
        (4 / x, F32(4) / a),
    ]
    for got, want in cases:
        assert got.dtype is mstype.float32
        np.testing.assert_array_equal(got.asnumpy(), want.astype(np.float32))
    assert +x is x


def test_int_tensor_operators_keep_int_dtype_with_int_scalars():
    a = np.array([1, -2, 100], np.int64)
    x = Tensor(a)
    assert (x + 1).dtype is mstype.int64
    np.testing.assert_array_equal((x + 1).asnumpy(), a + 1)
    np.testing.assert_array_equal((10 - x).asnumpy(), 10 - a)
    np.testing.assert_array_equal((x * x).asnumpy(), a * a)
    np.testing.assert_array_equal((-x).asnumpy(), -a)
    y = x * 0.5  # a float scalar moves the int group to float32
    assert y.dtype is mstype.float32
    np.testing.assert_array_equal(y.asnumpy(), (a * 0.5).astype(np.float32))


def test_operators_with_numpy_arrays_match_numpy():
    a = np.array([1.0, -2.0, 4.0], np.float32)
    b = np.array([0.5, 0.25, 2.0], np.float32)
    x = Tensor(a)
    np.testing.assert_array_equal((x + b).asnumpy(), a + b)
    np.testing.assert_array_equal((b + x).asnumpy(), b + a)
    np.testing.assert_array_equal((b - x).asnumpy(), b - a)
    np.testing.assert_array_equal((x * b).asnumpy(), a * b)
    np.testing.assert_array_equal((b / x).asnumpy(), b / a)


def test_tensor_methods_call_primitives():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = Tensor(a)
    r = x.reshape(3, 2)
    assert r.shape == (3, 2)
    np.testing.assert_array_equal(r.asnumpy(), a.reshape(3, 2))
    assert x.reshape((6,)).shape == (6,)
    assert x.sum().item() == 15.0
    np.testing.assert_array_equal(x.sum(axis=1).asnumpy(), [3.0, 12.0])
    assert x.sum(axis=0, keepdims=True).shape == (1, 3)
    np.testing.assert_array_equal(x.mean(axis=1).asnumpy(), [1.0, 4.0])


def test_astype_matches_numpy():
    a = np.array([0, 1, 2, 3, -7, 100], np.int32)
    for target in (mstype.float16, mstype.float64, mstype.int8, mstype.bool_):
        got = Tensor(a).astype(target)
        assert got.dtype is target
        np.testing.assert_array_equal(got.asnumpy(), a.astype(target.np_dtype), err_msg=str(target))
    f = np.array([1.9, -1.9, 0.5, 250.0], np.float32)
    np.testing.assert_array_equal(Tensor(f).astype("int32").asnumpy(), [1, -1, 0, 250])


# ---------------------------------------------------------------------------------------------
# Parameter


def test_parameter_defaults_and_fields():
    p = Parameter(np.zeros((2, 2), np.float32))
    assert isinstance(p, Tensor)
    assert p.name == "Parameter"
    assert p.requires_grad is True
    assert p.dtype is mstype.float32 and p.shape == (2, 2)
    q = Parameter(Tensor([1.0, 2.0]), name="weight", requires_grad=False, dtype=mstype.float64)
    assert q.name == "weight" and q.requires_grad is False and q.dtype is mstype.float64
    assert repr(q) == "Parameter(name=weight, shape=[2], dtype=Float64, requires_grad=False)"


def test_parameter_validation():
    with pytest.raises(TypeError, match=r"^For 'Parameter', the 'name' must be str, but got int\.$"):
        Parameter([1.0], name=3)
    with pytest.raises(TypeError, match=r"^For 'Parameter', the 'requires_grad' must be bool, but got int\.$"):
        Parameter([1.0], requires_grad=1)


def test_parameter_set_data_in_place():
    p = Parameter(np.array([1.0, 2.0], np.float32))
    data = p._data
    assert p.set_data([5, 6]) is p
    assert p.dtype is mstype.float32
    np.testing.assert_array_equal(p.asnumpy(), [5.0, 6.0])
    assert p._data is data  # the same buffer: kernels that hold it see the update
    with pytest.raises(ValueError, match=r"^For 'Parameter.set_data', the shape must be \[2\], but got \[3\]\.$"):
        p.set_data([1.0, 2.0, 3.0])


def test_parameter_updates_do_not_leak_into_the_source_tensor():
    src = Tensor(np.array([1.0, 2.0], np.float32))
    p = Parameter(src)
    p.set_data([7.0, 8.0])
    np.testing.assert_array_equal(src.asnumpy(), [1.0, 2.0])
    array = np.array([1.0, 2.0], np.float32)
    q = Parameter(array)
    opforge.ops.AssignSub()(q, Tensor(np.array([1.0, 1.0], np.float32)))
    np.testing.assert_array_equal(q.asnumpy(), [0.0, 1.0])
    np.testing.assert_array_equal(array, [1.0, 2.0])


# ---------------------------------------------------------------------------------------------
# Memory: MindSpore's conventions


def test_tensor_of_an_array_copies_and_from_numpy_shares():
    a = np.arange(4, dtype=np.float32)
    t, shared = Tensor(a), Tensor.from_numpy(a)
    a[0] = 100
    assert t.asnumpy()[0] == 0 and shared.asnumpy()[0] == 100
    assert Tensor(t)._data is not t._data


def test_numpy_conversions_copy_or_give_a_read_only_view():
    t = Tensor(np.arange(3, dtype=np.float32))
    copied = np.array(t)
    copied[0] = 7
    assert t.asnumpy()[0] == 0
    view = np.asarray(t)
    assert np.shares_memory(view, t._data) and not view.flags.writeable
    assert not np.shares_memory(np.array(t, copy=True), t._data)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(t, dtype=np.float64, copy=False)


def test_from_numpy_copies_what_kernels_cannot_take():
    buffer = np.zeros(4 * 8 + 1, np.uint8)
    unaligned = buffer[1:].view(np.float32)
    assert not unaligned.flags.aligned
    t = Tensor.from_numpy(unaligned)
    assert t._data.flags.aligned and t._data.flags.c_contiguous
    strided = np.arange(8, dtype=np.float64)[::2]
    np.testing.assert_array_equal(ops.Neg()(Tensor.from_numpy(strided)).asnumpy(), -strided)
    swapped = np.arange(3, dtype=">i4")
    t = Tensor.from_numpy(swapped)
    assert t.dtype is mstype.int32 and t.asnumpy().tolist() == [0, 1, 2]


def test_to_moves_between_devices_and_names_what_is_missing():
    t = Tensor(np.ones(2, np.float32))
    assert t.to("CPU") is t and t.device == "CPU"
    if "GPU" not in opforge.device.available_devices():
        with pytest.raises(RuntimeError, match=r"^The GPU device is not available here"):
            t.to("GPU")
    with pytest.raises(ValueError, match="must be one of"):
        t.to("TPU")


def test_equality_is_elementwise_and_tensors_stay_hashable_by_identity():
    """``==`` is MindSpore's elementwise Equal (as ``!=``, ``<`` ...); a Tensor still keys a dict by identity."""
    a, b = Tensor(np.array([1, 2, 3], np.int32)), Tensor(np.array([1, 5, 3], np.int32))
    eq = a == b
    assert isinstance(eq, Tensor) and eq.dtype == opforge.bool_
    np.testing.assert_array_equal(eq.asnumpy(), [True, False, True])
    np.testing.assert_array_equal((a == 2).asnumpy(), [False, True, False])
    np.testing.assert_array_equal((2.0 == a).asnumpy(), [False, True, False])
    assert (a == None) is False and (a != None) is True  # noqa: E711 (None is not an operand)
    assert {a: 1, b: 2}[a] == 1 and len({a, b, a}) == 2


def test_view_is_reshape():
    x = Tensor(np.arange(6, dtype=np.float32))
    assert x.view(2, 3).shape == (2, 3) and x.view((3, 2)).shape == (3, 2)
    np.testing.assert_array_equal(x.view(-1, 2).asnumpy(), np.arange(6, dtype=np.float32).reshape(3, 2))


def test_a_tensor_pickles_its_device_by_name():
    """The device is the process's one instance (its pool, its communicators): a pickled Tensor names it, so a
    communicator the device holds (MPI's, NCCL's) is neither pickled nor copied."""
    cpu = get_device("CPU")
    cpu.set_communicator("test-group", pickle)  # a module: unpicklable by value
    try:
        p = Parameter(Tensor(np.arange(3, dtype=np.float32)), name="w", requires_grad=False)
        for q in (pickle.loads(pickle.dumps(p)), pickle.loads(pickle.dumps(Tensor(p.asnumpy())))):
            np.testing.assert_array_equal(q.asnumpy(), [0, 1, 2])
            assert q._meta[2] is cpu
        assert pickle.loads(pickle.dumps(p)).name == "w"
    finally:
        cpu.set_communicator("test-group", None)
