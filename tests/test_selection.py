"""Kernel selection: exact match, lossless widening, no lossy casts, miss messages, cache, backends."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import user_op

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelNotFoundError
from opforge.kernels import KernelAttr, kernels_for, register_kernel
from opforge.kernels.selection import select_kernel
from opforge.op_info import CpuRegOp, DataType, op_info_register

pytestmark = pytest.mark.usefixtures("isolated_registries")


def unary(dtype, out=None):
    return KernelAttr().add_input_attr(dtype).add_output_attr(out or dtype)


# ---------------------------------------------------------------------------------------------
# KernelAttr


def test_kernel_attr_builder_equality_and_text():
    a = KernelAttr().add_input_attr(mstype.float32).add_input_attr("int32").add_output_attr(np.float32)
    b = KernelAttr().AddInputAttr(mstype.float32).AddInputAttr(mstype.int32).AddOutputAttr(mstype.float32)
    assert a == b and hash(a) == hash(b)
    assert a.inputs == (mstype.float32, mstype.int32) and a.outputs == (mstype.float32,)
    assert repr(a) == "KernelAttr(inputs=[Float32, Int32], outputs=[Float32])"
    assert a.short() == "Float32, Int32 -> Float32"
    assert a != KernelAttr([mstype.float32], [mstype.float32])
    assert a.input_dtypes_for(2) == (mstype.float32, mstype.int32)
    assert a.input_dtypes_for(3) is None


def test_kernel_attr_all_same():
    a = KernelAttr().add_input_attr(mstype.float16).add_output_attr(mstype.float16).add_all_same_attr()
    assert a.all_same is True
    assert a.input_dtypes_for(3) == (mstype.float16,) * 3
    assert a.short() == "Float16, ... -> Float16"
    assert "all_same=True" in repr(a)


def test_all_same_kernel_is_selected_for_any_input_count():
    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32).add_all_same_attr()
    register_kernel("SelProbeVariadic", "CPU", attr)(lambda *xs: sum(xs))
    sel = select_kernel("SelProbeVariadic", "CPU", (mstype.float32,) * 4)
    assert sel.input_dtypes == (mstype.float32,) * 4
    sel = select_kernel("SelProbeVariadic", "CPU", (mstype.float16, mstype.float32))
    assert sel.input_dtypes == (mstype.float32, mstype.float32)


def test_register_kernel_argument_errors():
    with pytest.raises(ValueError, match=r"the 'backend' must be one of \('CPU', 'GPU'\), but got 'TPU'"):
        register_kernel("SelProbeBad", "TPU", unary(mstype.float32))
    with pytest.raises(TypeError, match="the 'kernel_attrs' must be a KernelAttr or a list of them"):
        register_kernel("SelProbeBad", "CPU", "float32")
    with pytest.raises(TypeError, match="the 'kernel_attrs' must be a KernelAttr or a list of them"):
        register_kernel("SelProbeBad", "CPU", [])


# ---------------------------------------------------------------------------------------------
# Exact and widening matches


@pytest.mark.parametrize("dtype", [mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64, mstype.int32])
def test_exact_match(dtype):
    sel = select_kernel("ReLU", "CPU", (dtype,))
    assert sel.entry.attr.inputs == (dtype,)
    assert sel.entry.attr.outputs == (dtype,)
    assert sel.input_dtypes == (dtype,)
    assert sel.entry.kind == "cpp" and sel.entry.op_name == "ReLU" and sel.entry.backend == "CPU"


def test_float16_elu_is_exact():
    sel = select_kernel("Elu", "CPU", (mstype.float16,))
    assert sel.input_dtypes == (mstype.float16,)
    out = ops.Elu()(Tensor(np.array([-1.0, 0.5], np.float16)))
    assert out.dtype is mstype.float16
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), [np.expm1(-1.0), 0.5], rtol=1e-3)


@pytest.mark.parametrize("dtype", [mstype.int8, mstype.int16, mstype.uint8, mstype.uint16])
def test_relu_on_small_ints_widens_losslessly_and_keeps_the_dtype(dtype):
    info = np.iinfo(dtype.np_dtype)
    a = np.array([info.min, -1 if info.min < 0 else 0, 0, 1, info.max], dtype.np_dtype)
    sel = select_kernel("ReLU", "CPU", (dtype,))
    assert sel.input_dtypes != (dtype,)
    assert mstype.can_cast_losslessly(dtype, sel.input_dtypes[0])
    out = ops.ReLU()(Tensor(a))
    assert out.dtype is dtype
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(a, 0))


def test_relu_on_int8_selects_the_int32_kernel():
    sel = select_kernel("ReLU", "CPU", (mstype.int8,))
    assert sel.input_dtypes == (mstype.int32,)
    assert sel.entry.attr.inputs == (mstype.int32,)


def test_widening_prefers_the_cheapest_lossless_cast():
    name = "SelProbeCheapest"
    for d in (mstype.float64, mstype.float32):
        register_kernel(name, "CPU", unary(d))(lambda x: x)
    assert select_kernel(name, "CPU", (mstype.float16,)).input_dtypes == (mstype.float32,)
    assert select_kernel(name, "CPU", (mstype.float32,)).input_dtypes == (mstype.float32,)
    assert select_kernel(name, "CPU", (mstype.int32,)).input_dtypes == (mstype.float64,)


def test_widened_call_casts_inputs_and_results():
    seen = []

    @register_kernel("SelProbeWiden", "CPU", unary(mstype.float32))
    def double(x):
        seen.append(x.dtype)
        return x * np.float32(2)

    out = user_op("SelProbeWiden")()(Tensor(np.array([1.5, -3.0], np.float16)))
    assert seen == [np.dtype(np.float32)]
    assert out.dtype is mstype.float16
    assert np.asarray(out).dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), np.array([3.0, -6.0], np.float16))


# ---------------------------------------------------------------------------------------------
# No lossy cast, and the miss message


def test_no_lossy_cast_float32_to_float16_kernel():
    register_kernel("SelProbeF16", "CPU", unary(mstype.float16))(lambda x: x)
    with pytest.raises(KernelNotFoundError) as info:
        user_op("SelProbeF16")()(Tensor(np.ones(2, np.float32)))
    assert str(info.value) == (
        "For 'SelProbeF16', no CPU kernel accepts inputs (Float32 -> Float32), even after a lossless widening cast.\n"
        "Registered CPU kernels:\n"
        "  Float16 -> Float16\n"
        "Closest: Float16 -> Float16"
    )


@pytest.mark.parametrize("dtype", [mstype.complex64, mstype.complex128, mstype.uint64])
def test_miss_message_lists_every_kernel(dtype):
    with pytest.raises(KernelNotFoundError) as info:
        ops.ReLU()(Tensor(np.zeros(3, dtype.np_dtype)))
    text = str(info.value)
    assert text.startswith(
        f"For 'ReLU', no CPU kernel accepts inputs ({dtype} -> {dtype}), even after a lossless widening cast.\n"
        "Registered CPU kernels:\n"
    )
    for entry in kernels_for("ReLU", "CPU"):
        assert f"\n  {entry.attr.short()}" in text
    assert "\nClosest: " in text
    assert isinstance(info.value, TypeError)


def test_miss_message_closest_candidate():
    name = "SelProbeClosest"
    attrs = [
        KernelAttr([mstype.float32, mstype.float32], [mstype.float32]),
        KernelAttr([mstype.float64, mstype.int32], [mstype.float64]),
    ]
    register_kernel(name, "CPU", attrs)(lambda x, y: x)
    with pytest.raises(KernelNotFoundError) as info:
        select_kernel(name, "CPU", (mstype.complex64, mstype.int32))
    text = str(info.value)
    assert "inputs (Complex64, Int32)" in text
    assert "  Float32, Float32 -> Float32\n  Float64, Int32 -> Float64\n" in text
    assert text.endswith("Closest: Float64, Int32 -> Float64")


def test_nothing_registered_for_the_operator():
    with pytest.raises(
        KernelNotFoundError,
        match=r"^For 'SelProbeNothing', nothing is registered for the CPU backend: no op info and no kernel\.$",
    ):
        user_op("SelProbeNothing")()(Tensor(np.ones(1, np.float32)))


def test_op_info_without_kernel_is_a_miss_with_received_dtypes():
    op_info_register(
        CpuRegOp("SelProbeInfoOnly")
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .get_op_info()
    )
    with pytest.raises(
        KernelNotFoundError,
        match=r"^For 'SelProbeInfoOnly', no CPU kernel is registered \(received inputs: Float32 -> Float32\)\.$",
    ):
        user_op("SelProbeInfoOnly")()(Tensor(np.ones(1, np.float32)))


# ---------------------------------------------------------------------------------------------
# Cache invalidation


def test_register_kernel_invalidates_the_selection_cache():
    name = "SelProbeCache"
    register_kernel(name, "CPU", unary(mstype.float32))(lambda x: x)
    first = select_kernel(name, "CPU", (mstype.float16,))
    assert first.input_dtypes == (mstype.float32,)
    assert select_kernel(name, "CPU", (mstype.float16,)) is first  # cached

    register_kernel(name, "CPU", unary(mstype.float16))(lambda x: x)
    second = select_kernel(name, "CPU", (mstype.float16,))
    assert second.input_dtypes == (mstype.float16,)
    assert second.entry.attr.inputs == (mstype.float16,)


def test_a_miss_is_not_cached():
    name = "SelProbeMissThenHit"
    register_kernel(name, "CPU", unary(mstype.float16))(lambda x: x)
    prim = user_op(name)()
    x = Tensor(np.array([2.0], np.float32))
    with pytest.raises(KernelNotFoundError):
        prim(x)
    register_kernel(name, "CPU", unary(mstype.float32))(lambda x: x + np.float32(1))
    np.testing.assert_array_equal(prim(x).asnumpy(), [3.0])


def test_call_plans_pick_up_a_better_kernel_registered_later():
    name = "SelProbeStalePlan"
    calls = []
    register_kernel(name, "CPU", unary(mstype.float32))(lambda x: calls.append("f32") or x)
    cls = user_op(name)
    x = Tensor(np.array([2.0], np.float16))
    prim = cls()
    prim(x)
    register_kernel(name, "CPU", unary(mstype.float16))(lambda x: calls.append("f16") or x)
    prim(x)
    cls()(x)
    assert calls == ["f32", "f16", "f16"]


def test_selection_respects_the_inferred_output_dtype():
    a = np.array([0, 1, 2, -3], np.int32)
    out = ops.Cast()(Tensor(a), mstype.float16)
    assert out.dtype is mstype.float16
    np.testing.assert_array_equal(out.asnumpy(), a.astype(np.float16))


# ---------------------------------------------------------------------------------------------
# Backends


def test_no_silent_fallback_to_another_backend():
    name = "SelProbeGpuOnly"
    register_kernel(name, "GPU", unary(mstype.float32))(lambda x: x)
    assert kernels_for(name, "GPU") and not kernels_for(name, "CPU")
    with pytest.raises(
        KernelNotFoundError,
        match=r"^For 'SelProbeGpuOnly', nothing is registered for the CPU backend: no op info and no kernel\.$",
    ):
        user_op(name)()(Tensor(np.ones(2, np.float32)))
    with pytest.raises(KernelNotFoundError, match="For 'SelProbeGpuOnly'"):
        select_kernel(name, "CPU", (mstype.float32,))
    assert select_kernel(name, "GPU", (mstype.float32,)).entry.backend == "GPU"


def test_cpu_kernels_are_never_selected_for_gpu():
    register_kernel("SelProbeCpuOnly", "CPU", unary(mstype.float32))(lambda x: x)
    with pytest.raises(KernelNotFoundError, match=r"^For 'SelProbeCpuOnly', nothing is registered for the GPU backend"):
        select_kernel("SelProbeCpuOnly", "GPU", (mstype.float32,))
