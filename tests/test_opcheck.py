"""``opforge.testing.opcheck``: passes on correct operators (built-in and a user's), and catches a
kernel with wrong values, an ``infer_shape`` that disagrees with the kernel, a wrong bprop and an
error message that does not name the operator; ``opforge doctor --import`` checks a user's module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import opforge
from opforge import dtype as mstype
from opforge import ops
from opforge.bprop import bprop_getters
from opforge.kernels import KernelAttr, KernelOverrideWarning, register_kernel
from opforge.op_info import CpuRegOp, DataType, op_info_register
from opforge.primitives import PrimitiveWithInfer, prim_attr_register, validator
from opforge.testing import ErrorInput, OpCheckError, Sample, opcheck

F32, F64 = mstype.float32, mstype.float64


def _elu_ref(alpha):
    return lambda x: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


def _away_from_zero(rng, shape):
    return rng.uniform(0.1, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


# ---------------------------------------------------------------------------------------------
# Built-in operators


def test_builtin_elu_passes_on_every_kernel_and_backend(rng):
    samples = [Sample((rng.uniform(-3, 3, (4, 5)),)), (rng.uniform(-3, 3, ()),), (np.zeros((0, 2)),)]
    grad_samples = [(_away_from_zero(rng, (2, 3)),)]
    errors = [ErrorInput("int32", lambda: ops.Elu()(opforge.Tensor(np.ones(2, np.int32))), TypeError, "input_x")]
    report = opcheck(
        ops.Elu(alpha=0.7),
        samples,
        _elu_ref(0.7),
        grad_samples=grad_samples,
        check_double_grad=True,
        error_inputs=errors,
    )
    counts = report.counts()
    # float16, bfloat16, float32, float64 on the CPU and on the GPU (the tests' emulation or a real one)
    assert counts["selection"] == (8, 8) and counts["forward"] == (24, 24)
    assert counts["gradient"] == (2, 2) and counts["double_grad"] == (2, 2) and counts["error"] == (1, 1)
    kernels = {r.kernel for r in report.results if r.check == "forward"}
    assert "Elu-GPU-BFloat16->BFloat16" in kernels and "Elu-CPU-Float16->Float16" in kernels


def test_builtin_binary_and_reduction_ops_pass(rng):
    x, y = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,))
    opcheck(ops.Add(), [(x, y), (x, 2)], lambda a, b: a + b, backends=["CPU"])
    opcheck(
        ops.ReduceSum(keep_dims=True), [(x, 1), (x, ())], lambda a, axis: np.sum(a, axis=axis or None, keepdims=True)
    )


def test_inplace_ops_may_write_their_parameter(rng):
    var, value = rng.uniform(-2, 2, (3,)), rng.uniform(-2, 2, (3,))
    report = opcheck(ops.AssignSub(), [(var, value)], lambda v, d: v - d, check_grad=False, backends=["CPU"])
    assert report.counts()["forward"][1] > 0


# ---------------------------------------------------------------------------------------------
# A user's operator: y = x^3 with a Python kernel, its op info and a bprop


class OpcheckCube(PrimitiveWithInfer):
    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, [F32, F64], self.name)


def _unary_attrs():
    return [KernelAttr().add_input_attr(t).add_output_attr(t) for t in (F32, F64)]


def _register_op_info(name):
    op_info_register(
        CpuRegOp(name)
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .dtype_format(DataType.F64_Default, DataType.F64_Default)
        .get_op_info()
    )


@pytest.fixture
def cube(isolated_registries):
    """OpcheckCube with a correct kernel and bprop; the test may replace either."""
    _register_op_info("OpcheckCube")

    @register_kernel("OpcheckCube", "CPU", _unary_attrs())
    def cube_kernel(x):
        return x * x * x

    mul = ops.Mul()

    @bprop_getters.register(OpcheckCube)
    def get_bprop_cube(self):
        def bprop(x, out, dout):
            return (mul(dout, mul(3.0, mul(x, x))),)

        return bprop

    yield OpcheckCube()
    bprop_getters.unregister(OpcheckCube)


def _cube_samples(rng):
    return [(rng.uniform(-2, 2, (3, 4)),), (rng.uniform(-2, 2, ()),), (np.zeros((0,)),)]


def _not_a_tensor():
    return OpcheckCube()([1.0, 2.0])


def test_a_correct_user_op_passes(cube, rng):
    errors = [ErrorInput("list", _not_a_tensor, TypeError, "OpcheckCube")]
    report = opcheck(cube, _cube_samples(rng), lambda x: x**3, error_inputs=errors, check_double_grad=True)
    assert report.passed
    counts = report.counts()
    assert counts["selection"] == (2, 2) and counts["forward"] == (6, 6)  # CPU only: no GPU kernel
    assert counts["gradient"] == (3, 3) and counts["double_grad"] == (3, 3)
    assert {r.kernel for r in report.results if r.check == "gradient"} == {"CPU Float64"}
    assert "passed" in report.summary()


def test_a_kernel_with_wrong_values_is_caught(cube, rng):
    with pytest.warns(KernelOverrideWarning):

        @register_kernel("OpcheckCube", "CPU", _unary_attrs()[:1])  # float32 only: float64 stays right
        def wrong(x):
            return x * x * x + np.float32(0.01)

    with pytest.raises(OpCheckError) as info:
        opcheck(cube, _cube_samples(rng)[:1], lambda x: x**3, check_grad=False)
    failures = info.value.report.failures
    assert [(f.check, f.kernel) for f in failures] == [("forward", "OpcheckCube-CPU-Float32->Float32")]
    assert "values out of tolerance" in failures[0].message
    assert "OpcheckCube-CPU-Float32->Float32" in str(info.value)


def test_an_infer_shape_that_disagrees_with_the_kernel_is_caught(cube, rng, monkeypatch):
    monkeypatch.setattr(OpcheckCube, "infer_shape", lambda self, x_shape: list(x_shape) + [1])
    report = opcheck(cube, _cube_samples(rng)[:1], lambda x: x**3, check_grad=False, raise_on_failure=False)
    assert [f.check for f in report.failures] == ["forward", "forward"]  # both dtypes
    assert "as inferred" in report.failures[0].message  # the kernel's [3, 4] is not the inferred [3, 4, 1]


def test_an_infer_shape_that_disagrees_with_the_reference_is_caught(cube, rng):
    # The kernel follows the (wrong) inference, so only the reference tells: [3] is not x's [3, 4].
    with pytest.warns(KernelOverrideWarning):

        @register_kernel("OpcheckCube", "CPU", _unary_attrs())
        def first_row(x):
            return (x * x * x)[0] if x.ndim else x * x * x

    OpcheckCube.infer_shape, original = (lambda self, s: list(s[1:])), OpcheckCube.infer_shape
    try:
        report = opcheck(cube, _cube_samples(rng)[:1], lambda x: x**3, check_grad=False, raise_on_failure=False)
    finally:
        OpcheckCube.infer_shape = original
    assert len(report.failures) == 2
    assert "the reference's is (3, 4)" in report.failures[0].message


def test_a_wrong_bprop_is_caught(cube, rng):
    mul = ops.Mul()

    @bprop_getters.register(OpcheckCube)
    def get_bprop_wrong(self):
        def bprop(x, out, dout):
            return (mul(dout, mul(2.0, mul(x, x))),)  # 2x^2: not the derivative of x^3

        return bprop

    report = opcheck(cube, _cube_samples(rng)[:2], lambda x: x**3, raise_on_failure=False)
    assert {f.check for f in report.failures} == {"gradient"}
    assert "differs from finite differences" in report.failures[0].message
    assert report.counts()["forward"] == (4, 4)  # the forward checks still ran and passed


def test_an_error_message_that_does_not_name_the_op_is_caught(cube):
    def raises_anonymously():
        raise TypeError("the input must be a Tensor")

    errors = [
        ErrorInput("anonymous", raises_anonymously, TypeError),
        ErrorInput("wrong type", _not_a_tensor, ValueError),
        ErrorInput("no error", lambda: None, TypeError),
        ErrorInput("fragment", _not_a_tensor, TypeError, "must be a float"),
    ]
    report = opcheck(cube, [], error_inputs=errors, check_grad=False, raise_on_failure=False)
    messages = {f.sample: f.message for f in report.failures if f.check == "error"}
    assert "does not name the op 'OpcheckCube'" in messages["anonymous"]
    assert messages["wrong type"].startswith("expected ValueError, got TypeError")
    assert "nothing was raised" in messages["no error"]
    assert "expected 'must be a float' in the message" in messages["fragment"]


def test_every_failure_is_listed_and_an_op_without_kernels_fails(isolated_registries, rng):
    with pytest.raises(OpCheckError, match="no kernel is registered for 'OpcheckCube'") as info:
        opcheck(OpcheckCube(), _cube_samples(rng), lambda x: x**3)
    assert not info.value.report.passed
    with pytest.raises(TypeError, match="For 'opcheck', the 'op' must be a Primitive instance"):
        opcheck(OpcheckCube, _cube_samples(rng))


# ---------------------------------------------------------------------------------------------
# opforge doctor --import


USER_MODULE = """
from opforge import dtype as mstype
from opforge.kernels import KernelAttr, KernelOverrideWarning, register_kernel
from opforge.op_info import CpuRegOp, DataType, op_info_register
from opforge.primitives import PrimitiveWithInfer, prim_attr_register


class DoctorTwice(PrimitiveWithInfer):
    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])


op_info_register(
    CpuRegOp("DoctorTwice").input(0, "x").output(0, "y")
    .dtype_format(DataType.F32_Default, DataType.F32_Default)
    {extra_dtype}
    .get_op_info()
)


@register_kernel("DoctorTwice", "CPU", [KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)])
def twice(x):
    return x * 2
{extra_code}
"""

ORPHAN = """

class DoctorOrphan(PrimitiveWithInfer):
    @prim_attr_register
    def __init__(self):
        pass
"""


def _doctor(tmp_path, name, **parts):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(USER_MODULE.format(**parts)))
    cmd = [sys.executable, "-m", "opforge", "doctor", "--import", name]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})


def test_doctor_imports_a_consistent_user_module(tmp_path):
    result = _doctor(tmp_path, "good_ops", extra_dtype="", extra_code="")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "imported good_ops: 1 primitives, 1 kernels, 1 op infos, 0 bprops (DoctorTwice)" in result.stdout
    assert "agree" in result.stdout


def test_doctor_reports_the_problems_of_a_user_module(tmp_path):
    result = _doctor(
        tmp_path, "bad_ops", extra_dtype=".dtype_format(DataType.F64_Default, DataType.F64_Default)", extra_code=ORPHAN
    )
    assert result.returncode == 1
    assert "DoctorOrphan: the Primitive is defined but no kernel is registered for it" in result.stdout
    assert "DoctorTwice (CPU): op info declares (Float64) -> (Float64) but no kernel is registered" in result.stdout


def test_doctor_says_when_the_module_does_not_import(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "opforge", "doctor", "--import", "no_such_module_here"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "importing no_such_module_here: ModuleNotFoundError" in result.stdout
