"""opforge.dtype: the dtype objects, their C++ ids, NumPy conversion, groups, promotion and casting."""

from __future__ import annotations

import copy
import itertools
import pickle
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opforge
from opforge import _C
from opforge import dtype as mstype

# (attribute name, C++ name suffix, NumPy dtype, kind)
DTYPES = [
    ("bool_", "Bool", np.dtype(np.bool_), "b"),
    ("int8", "Int8", np.dtype(np.int8), "i"),
    ("int16", "Int16", np.dtype(np.int16), "i"),
    ("int32", "Int32", np.dtype(np.int32), "i"),
    ("int64", "Int64", np.dtype(np.int64), "i"),
    ("uint8", "UInt8", np.dtype(np.uint8), "u"),
    ("uint16", "UInt16", np.dtype(np.uint16), "u"),
    ("uint32", "UInt32", np.dtype(np.uint32), "u"),
    ("uint64", "UInt64", np.dtype(np.uint64), "u"),
    ("float16", "Float16", np.dtype(np.float16), "f"),
    ("bfloat16", "BFloat16", np.dtype(ml_dtypes.bfloat16), "f"),
    ("float32", "Float32", np.dtype(np.float32), "f"),
    ("float64", "Float64", np.dtype(np.float64), "f"),
    ("complex64", "Complex64", np.dtype(np.complex64), "c"),
    ("complex128", "Complex128", np.dtype(np.complex128), "c"),
]
ALL = [getattr(mstype, name) for name, *_ in DTYPES]
T = mstype  # short alias for the spot-check tables


# ---------------------------------------------------------------------------------------------
# The dtype objects


@pytest.mark.parametrize("attr,cname,np_dtype,kind", DTYPES)
def test_dtype_exported_at_top_level_with_cpp_type_id(attr, cname, np_dtype, kind):
    t = getattr(mstype, attr)
    assert getattr(opforge, attr) is t
    assert t.type_id == getattr(_C, "kNumberType" + cname)
    assert t.name == cname
    assert repr(t) == cname and str(t) == cname
    assert t.np_dtype == np_dtype
    assert t.kind == kind
    assert t.itemsize == np_dtype.itemsize
    assert mstype.type_id_to_dtype(t.type_id) is t


def test_type_ids_are_distinct_and_all_types_is_complete():
    assert len({t.type_id for t in ALL}) == len(ALL)
    assert mstype.all_types == tuple(ALL)


def test_unknown_type_id_raises():
    with pytest.raises(ValueError, match="unknown type id 12345"):
        mstype.type_id_to_dtype(12345)


@pytest.mark.parametrize("t", ALL, ids=str)
def test_dtype_survives_pickle_and_copy_as_the_same_object(t):
    assert pickle.loads(pickle.dumps(t)) is t
    assert copy.deepcopy(t) is t
    assert copy.copy(t) is t


def test_groups():
    assert mstype.int_type == (T.int8, T.int16, T.int32, T.int64)
    assert mstype.uint_type == (T.uint8, T.uint16, T.uint32, T.uint64)
    assert mstype.float_type == (T.float16, T.bfloat16, T.float32, T.float64)
    assert mstype.complex_type == (T.complex64, T.complex128)
    assert mstype.number_type == mstype.int_type + mstype.uint_type + mstype.float_type + mstype.complex_type
    assert T.bool_ not in mstype.number_type
    assert mstype.all_types == (T.bool_,) + mstype.number_type


def test_category_and_value_bits():
    assert [t.category for t in (T.bool_, T.int8, T.uint64, T.bfloat16, T.complex128)] == [0, 1, 1, 2, 3]
    assert T.int8.value_bits == 7
    assert T.uint8.value_bits == 8
    assert T.int64.value_bits == 63
    assert T.bool_.value_bits == 1
    assert T.float16.value_bits == 11
    assert T.bfloat16.value_bits == 8
    assert T.float32.value_bits == 24
    assert T.float64.value_bits == 53
    assert T.complex64.value_bits == 24
    assert T.complex128.value_bits == 53


# ---------------------------------------------------------------------------------------------
# NumPy round trip


@pytest.mark.parametrize("attr,cname,np_dtype,kind", DTYPES)
def test_numpy_round_trip(attr, cname, np_dtype, kind):
    t = getattr(mstype, attr)
    assert mstype.dtype_to_nptype(t) == np_dtype
    assert mstype.nptype_to_dtype(np_dtype) is t
    assert mstype.nptype_to_dtype(np_dtype.type) is t
    assert mstype.nptype_to_dtype(mstype.dtype_to_nptype(t)) is t
    assert mstype.to_dtype(t) is t
    assert mstype.to_dtype(np_dtype) is t
    assert mstype.to_dtype(np_dtype.type) is t
    assert mstype.to_dtype(np_dtype.name) is t  # NumPy name: "float32", "bfloat16", "bool"
    assert mstype.to_dtype(cname) is t  # opforge name, any case
    assert mstype.to_dtype(cname.upper()) is t


def test_bfloat16_is_ml_dtypes_bfloat16():
    assert mstype.dtype_to_nptype(T.bfloat16) == np.dtype(ml_dtypes.bfloat16)
    assert mstype.nptype_to_dtype(ml_dtypes.bfloat16) is T.bfloat16
    assert mstype.to_dtype(ml_dtypes.bfloat16) is T.bfloat16
    assert mstype.to_dtype("bfloat16") is T.bfloat16
    assert np.array([1.5], ml_dtypes.bfloat16).dtype == T.bfloat16.np_dtype


def test_to_dtype_python_types_and_aliases():
    assert mstype.to_dtype(bool) is T.bool_
    assert mstype.to_dtype(int) is T.int64
    assert mstype.to_dtype(float) is T.float64
    assert mstype.to_dtype(complex) is T.complex128
    assert mstype.to_dtype("bool_") is T.bool_
    assert mstype.to_dtype("bool") is T.bool_


def test_byte_swapped_numpy_dtype_maps_to_native_dtype():
    assert mstype.nptype_to_dtype(np.dtype(">f4")) is T.float32
    assert mstype.nptype_to_dtype(np.dtype(">i8")) is T.int64
    assert mstype.nptype_to_dtype(np.dtype("<u2")) is T.uint16


def test_unsupported_numpy_dtype_raises_type_error_listing_supported():
    with pytest.raises(TypeError, match=r"NumPy dtype '<U3' is not supported by opforge; supported: bool, int8"):
        mstype.nptype_to_dtype(np.dtype("<U3"))
    with pytest.raises(TypeError, match=r"NumPy dtype 'object' is not supported by opforge"):
        mstype.to_dtype(object)


def test_unknown_dtype_name_raises():
    with pytest.raises(TypeError, match=r"unknown dtype name 'float17'\."):
        mstype.to_dtype("float17")


def test_uninterpretable_value_raises_type_error():
    with pytest.raises(TypeError):
        mstype.to_dtype(object())
    with pytest.raises(TypeError):
        mstype.to_dtype(3.5)


# ---------------------------------------------------------------------------------------------
# Promotion table


def test_promotion_table_covers_every_pair():
    assert len(mstype.PROMOTION_TABLE) == len(ALL) ** 2
    assert all(isinstance(v, mstype.Type) for v in mstype.PROMOTION_TABLE.values())


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(ALL, 2)), ids=str)
def test_promotion_is_symmetric(a, b):
    assert mstype.promote_types(a, b) is mstype.promote_types(b, a)


@pytest.mark.parametrize("t", ALL, ids=str)
def test_promotion_is_idempotent_and_bool_is_identity(t):
    assert mstype.promote_types(t, t) is t
    assert mstype.promote_types(T.bool_, t) is t
    assert mstype.promote_types(t, T.bool_) is t


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)), ids=str)
def test_promotion_never_drops_category(a, b):
    result = mstype.promote_types(a, b)
    assert result.category == max(a.category, b.category) or (
        {a, b} & {T.uint64} and result is T.float64 and {a.kind, b.kind} == {"i", "u"}
    )


PROMOTION_SPOT_CHECKS = [
    # same dtype
    (T.int16, T.int16, T.int16),
    (T.bfloat16, T.bfloat16, T.bfloat16),
    # bool + X -> X
    (T.bool_, T.uint8, T.uint8),
    (T.bool_, T.complex64, T.complex64),
    # intN + intM -> the wider signed int
    (T.int8, T.int32, T.int32),
    (T.int64, T.int16, T.int64),
    # uintN + uintM -> the wider unsigned int
    (T.uint8, T.uint32, T.uint32),
    (T.uint64, T.uint16, T.uint64),
    # uintN + intM -> intM if M > N, else the next signed int wider than N (uint64 -> float64)
    (T.int8, T.uint8, T.int16),
    (T.uint8, T.int16, T.int16),
    (T.uint16, T.int16, T.int32),
    (T.uint16, T.int64, T.int64),
    (T.uint32, T.int8, T.int64),
    (T.uint32, T.int32, T.int64),
    (T.uint64, T.int8, T.float64),
    (T.uint64, T.int64, T.float64),
    # int/uint + float -> the float
    (T.int64, T.float16, T.float16),
    (T.uint64, T.bfloat16, T.bfloat16),
    (T.int8, T.float64, T.float64),
    (T.uint32, T.float32, T.float32),
    # float16 + bfloat16 -> float32
    (T.float16, T.bfloat16, T.float32),
    # floatN + floatM -> the wider float
    (T.float16, T.float32, T.float32),
    (T.bfloat16, T.float64, T.float64),
    (T.float32, T.float64, T.float64),
    # float + complex -> the complex type wide enough for the float
    (T.float32, T.complex64, T.complex64),
    (T.float16, T.complex64, T.complex64),
    (T.bfloat16, T.complex64, T.complex64),
    (T.float64, T.complex64, T.complex128),
    (T.float64, T.complex128, T.complex128),
    # ints with complex
    (T.int64, T.complex64, T.complex64),
    # complexN + complexM -> the wider complex
    (T.complex64, T.complex128, T.complex128),
]


@pytest.mark.parametrize("a,b,expected", PROMOTION_SPOT_CHECKS, ids=str)
def test_promotion_spot_checks(a, b, expected):
    assert mstype.promote_types(a, b) is expected
    assert mstype.PROMOTION_TABLE[a, b] is expected
    assert mstype.result_type((a, b)) is expected


def test_result_type_folds_several_strong_dtypes():
    assert mstype.result_type((T.int8, T.uint8, T.int32)) is T.int32
    assert mstype.result_type((T.float16, T.int64, T.bfloat16)) is T.float32
    assert mstype.result_type((T.bool_,)) is T.bool_


def test_result_type_needs_an_operand():
    with pytest.raises(ValueError, match="result_type needs at least one operand"):
        mstype.result_type(())


# ---------------------------------------------------------------------------------------------
# Weak scalars

BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


def test_weak_category_of_python_scalars():
    assert mstype.weak_category(True) == BOOL
    assert mstype.weak_category(3) == INT
    assert mstype.weak_category(3.5) == FLOAT
    assert mstype.weak_category(1j) == COMPLEX
    assert mstype.weak_category("1") is None
    assert mstype.weak_category(None) is None


def test_weak_category_of_numpy_scalars_is_that_of_their_python_number():
    assert mstype.weak_category(np.bool_(True)) == BOOL
    assert mstype.weak_category(np.uint8(3)) == mstype.weak_category(np.int64(3)) == INT
    assert mstype.weak_category(np.float16(1.0)) == mstype.weak_category(np.float32(1.0)) == FLOAT
    assert mstype.weak_category(np.complex64(1j)) == COMPLEX
    assert mstype.weak_category(np.str_("1")) is None
    assert mstype.weak_category(np.datetime64("2020")) is None
    assert mstype.weak_category(np.array(1.0)) is None  # an array is not a scalar


@pytest.mark.parametrize("t", mstype.int_type + mstype.uint_type, ids=str)
def test_int_scalar_never_widens_an_integer_tensor(t):
    assert mstype.result_type((t,), (INT,)) is t
    assert mstype.result_type((t,), (INT, BOOL)) is t


@pytest.mark.parametrize("t", mstype.int_type + mstype.uint_type, ids=str)
def test_float_scalar_turns_integers_into_float32(t):
    assert mstype.result_type((t,), (FLOAT,)) is T.float32
    assert mstype.result_type((t,), (INT, FLOAT)) is T.float32


@pytest.mark.parametrize("t", mstype.float_type, ids=str)
def test_float_scalar_keeps_float_tensor_dtype(t):
    assert mstype.result_type((t,), (FLOAT,)) is t
    assert mstype.result_type((t,), (INT,)) is t


@pytest.mark.parametrize(
    "t,expected",
    [
        (T.int8, T.complex64),
        (T.uint64, T.complex64),
        (T.float16, T.complex64),
        (T.bfloat16, T.complex64),
        (T.float32, T.complex64),
        (T.float64, T.complex128),
        (T.complex64, T.complex64),
        (T.complex128, T.complex128),
        (T.bool_, T.complex64),
    ],
    ids=str,
)
def test_complex_scalar(t, expected):
    assert mstype.result_type((t,), (COMPLEX,)) is expected


def test_weak_scalars_with_bool_tensor_and_without_tensors():
    assert mstype.result_type((T.bool_,), (BOOL,)) is T.bool_
    assert mstype.result_type((T.bool_,), (INT,)) is T.int64
    assert mstype.result_type((T.bool_,), (FLOAT,)) is T.float32
    assert mstype.result_type((), (BOOL,)) is T.bool_
    assert mstype.result_type((), (INT, INT)) is T.int64
    assert mstype.result_type((), (INT, FLOAT)) is T.float32
    assert mstype.result_type((), (COMPLEX,)) is T.complex64
    complex128_float = mstype.result_type((T.complex128,), (FLOAT,))
    assert complex128_float is T.complex128


def test_weak_scalar_after_strong_promotion():
    # The tensors are promoted first (int8 + uint8 -> int16); an int scalar keeps that.
    assert mstype.result_type((T.int8, T.uint8), (INT,)) is T.int16
    assert mstype.result_type((T.float16, T.bfloat16), (FLOAT,)) is T.float32
    assert mstype.result_type((T.float64, T.int8), (COMPLEX,)) is T.complex128


# ---------------------------------------------------------------------------------------------
# Lossless casts

CAST_SPOT_CHECKS = [
    (T.int8, T.float16, True),
    (T.int16, T.float16, False),
    (T.int32, T.float64, True),
    (T.int64, T.float64, False),
    (T.float16, T.bfloat16, False),
    (T.bfloat16, T.float16, False),
    (T.uint8, T.int8, False),
    (T.int8, T.uint8, False),
    (T.int8, T.uint64, False),
    (T.uint8, T.int16, True),
    (T.uint8, T.uint16, True),
    (T.int8, T.int16, True),
    (T.int16, T.int8, False),
    (T.int8, T.bfloat16, True),
    (T.uint8, T.bfloat16, True),
    (T.int16, T.bfloat16, False),
    (T.uint16, T.float32, True),
    (T.int32, T.float32, False),
    (T.float16, T.float32, True),
    (T.bfloat16, T.float32, True),
    (T.float32, T.float16, False),
    (T.float32, T.float64, True),
    (T.float64, T.float32, False),
    (T.float32, T.int64, False),
    (T.float32, T.complex64, True),
    (T.float64, T.complex64, False),
    (T.float64, T.complex128, True),
    (T.float16, T.complex64, True),
    (T.int16, T.complex64, True),
    (T.int32, T.complex64, False),
    (T.int32, T.complex128, True),
    (T.complex64, T.complex128, True),
    (T.complex128, T.complex64, False),
    (T.complex64, T.float64, False),
    (T.bool_, T.int8, True),
    (T.bool_, T.bfloat16, True),
    (T.int8, T.bool_, False),
    (T.float32, T.bool_, False),
]


@pytest.mark.parametrize("src,dst,expected", CAST_SPOT_CHECKS, ids=str)
def test_can_cast_losslessly_spot_checks(src, dst, expected):
    assert mstype.can_cast_losslessly(src, dst) is expected


@pytest.mark.parametrize("t", ALL, ids=str)
def test_can_cast_to_itself(t):
    assert mstype.can_cast_losslessly(t, t) is True


REAL = [t for t in ALL if t.kind != "c"]


def _witnesses(t) -> np.ndarray:
    """Values of ``t`` that expose a lossy cast: the extremes, their neighbours, fractions, specials."""
    if t.kind == "b":
        return np.array([False, True])
    if t.kind in "iu":
        info = np.iinfo(t.np_dtype)
        vals = [info.min, info.min + 1, -1 if t.kind == "i" else 0, 0, 1, info.max - 1, info.max]
        return np.array(vals, dtype=t.np_dtype)
    info = ml_dtypes.finfo(t.np_dtype)
    vals = [float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal), float(info.eps)]
    vals += [1 + float(info.eps), 0.5, 0.0, 1.0, -3.0, np.inf, -np.inf, np.nan]
    return np.array(vals, dtype=np.float64).astype(t.np_dtype)


def _exact(array) -> list:
    """Exact Python values (ints stay ints, floats go through float64, which holds every float exactly)."""
    if array.dtype.kind in "biu":
        return [int(v) for v in array.tolist()]
    return array.astype(np.float64).tolist()


def _same(a: list, b: list) -> bool:
    return all(x == y or (x != x and y != y) for x, y in zip(a, b))


@pytest.mark.parametrize("src,dst", list(itertools.product(REAL, REAL)), ids=str)
def test_can_cast_losslessly_agrees_with_numpy_round_trips(src, dst):
    """True exactly when every witness value of ``src`` survives a NumPy cast to ``dst`` unchanged."""
    values = _witnesses(src)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cast = values.astype(dst.np_dtype)
    survives = _same(_exact(values), _exact(cast))
    assert mstype.can_cast_losslessly(src, dst) is survives


@settings(max_examples=60, deadline=None)
@given(src=st.sampled_from(mstype.int_type + mstype.uint_type), data=st.data())
def test_lossless_int_casts_preserve_random_values(src, data):
    info = np.iinfo(src.np_dtype)
    value = data.draw(st.integers(int(info.min), int(info.max)))
    for dst in ALL:
        if dst.kind in "iuf" and mstype.can_cast_losslessly(src, dst):
            got = np.array([value], src.np_dtype).astype(dst.np_dtype)
            assert _exact(got) == [value], (src, dst, value)


def test_float16_casts_on_the_cpu_match_numpy_bit_for_bit():
    """float32 <-> float16 run eight at a time with F16C where the CPU has it, element by element after:
    every float16 (signalling NaNs aside: the CPU quiets them, NumPy keeps them) and float32 values around
    each rounding boundary, on lengths that leave a tail."""
    import numpy as np

    import opforge
    from opforge import ops

    halves = np.arange(65536, dtype=np.uint16)
    signalling = ((halves & 0x7C00) == 0x7C00) & ((halves & 0x3FF) != 0) & ((halves & 0x200) == 0)
    halves = halves[~signalling].view(np.float16)[:-3]  # not a multiple of 8
    got = ops.Cast()(opforge.Tensor(halves), opforge.float32).asnumpy()
    np.testing.assert_array_equal(got.view(np.uint32), halves.astype(np.float32).view(np.uint32))
    finite = halves[np.isfinite(halves)].astype(np.float32)
    ties = np.concatenate([finite, np.nextafter(finite, np.float32(np.inf)), np.nextafter(finite, -np.inf)])
    ties = np.concatenate([ties, np.float32([65519.99, 65520.0, 7e4, np.inf, -np.inf, np.nan, 1e-9])])
    with np.errstate(over="ignore"):
        want = ties.astype(np.float16)
    got = ops.Cast()(opforge.Tensor(ties), opforge.float16).asnumpy()
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
