"""Op info builders: rows, their validation, and the shorthand for same-dtype rows."""

from __future__ import annotations

import pytest

from opforge import dtype as mstype
from opforge.kernels import KernelAttr
from opforge.op_info import CpuRegOp, DataType, get_op_info


def _builder():
    return CpuRegOp("Probe").input(0, "x", "required").input(1, "y", "required").output(0, "z", "required")


def test_dtype_formats_is_one_same_dtype_row_per_data_type():
    short = _builder().dtype_formats(DataType.F16_Default, DataType.I32_Default).get_op_info()
    long = (
        _builder()
        .dtype_format(DataType.F16_Default, DataType.F16_Default, DataType.F16_Default)
        .dtype_format(DataType.I32_Default, DataType.I32_Default, DataType.I32_Default)
        .get_op_info()
    )
    assert short == long
    assert short.dtype_signatures() == [
        ((mstype.float16, mstype.float16), (mstype.float16,)),
        ((mstype.int32, mstype.int32), (mstype.int32,)),
    ]


def test_all_default_covers_every_dtype_once():
    assert [t for t, _ in DataType.ALL_Default] == list(mstype.all_types)


def test_a_row_of_the_wrong_length_names_the_operator():
    with pytest.raises(ValueError, match="For the op info of 'Probe' .* must give 3 entries"):
        _builder().dtype_format(DataType.F32_Default, DataType.F32_Default)


def test_builtin_op_info_is_queryable_by_operator_and_backend():
    info = get_op_info("Elu", "CPU")
    assert info is not None and info.backend == "CPU"
    assert ((mstype.float32,), (mstype.float32,)) in info.dtype_signatures()
    gpu = get_op_info("Elu", "GPU")
    assert gpu is not None and gpu.backend == "GPU" and gpu.dtype_signatures() == info.dtype_signatures()
    assert get_op_info("NoSuchOp", "GPU") is None


def test_covers_maps_a_kernel_attr_to_a_row_by_its_input_and_output_dtypes():
    info = _builder().dtype_format(DataType.F32_Default, DataType.I32_Default, DataType.F32_Default).get_op_info()
    assert info.covers(KernelAttr([mstype.float32, mstype.int32], [mstype.float32]))
    assert not info.covers(KernelAttr([mstype.int32, mstype.float32], [mstype.float32]))  # order matters
    assert not info.covers(KernelAttr([mstype.float32, mstype.int32], [mstype.float64]))  # so does the output
    assert info.rows_text() == "(Float32, Int32) -> (Float32)"
    assert _builder().get_op_info().rows_text() == "no dtype_format rows"
