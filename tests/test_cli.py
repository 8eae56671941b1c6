"""The ``opforge`` command: ``ops`` (the operator table) and ``doctor`` (registry consistency)."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import opforge.op_info.cpu
from opforge import Tensor
from opforge import dtype as mstype
from opforge.kernels import KernelAttr, register_kernel, registry
from opforge.kernels.selection import select_kernel
from opforge.op_info import CpuRegOp, DataType, OpInfo, OpInfoMismatchError, op_info_register
from opforge.op_info import registry as op_info_registry
from opforge.primitives import PrimitiveWithInfer, prim_attr_register
from opforge.tools import cli
from opforge.tools.op_reference import describe_kernels


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    """rich wraps the table to the terminal width; keep every cell on one line."""
    monkeypatch.setenv("COLUMNS", "250")


def _builtin_op_infos() -> dict:
    """The op infos declared by opforge's own op_info/cpu modules, by (op, backend)."""
    infos = {}
    for mod in pkgutil.iter_modules(opforge.op_info.cpu.__path__):
        module = importlib.import_module(f"opforge.op_info.cpu.{mod.name}")
        for value in vars(module).values():
            # an operator's own module holds its OpInfo; a family's module (scatter_reduce) a tuple of them
            for info in value if isinstance(value, tuple) else (value,):
                if isinstance(info, OpInfo):
                    infos[info.op_name, info.backend] = info
    return infos


def _builtin_kernels() -> dict:
    """The kernels compiled into opforge (C++ 'builtin') or registered by opforge's own modules."""
    table = {}
    for key, entries in registry._table.items():
        keep = [e for e in entries if e.source == "builtin" or e.source.startswith("python:opforge.")]
        if keep:
            table[key] = keep
    return table


@pytest.fixture
def builtin_registry(monkeypatch):
    """Only opforge's own op infos and kernels, whatever other tests registered."""
    monkeypatch.setattr(registry, "_table", _builtin_kernels())
    monkeypatch.setattr(op_info_registry, "_infos", _builtin_op_infos())
    select_kernel.cache_clear()
    yield
    select_kernel.cache_clear()


# ---------------------------------------------------------------------------------------------
# ops


def test_ops_lists_every_operator(capsys, builtin_registry):
    assert cli.main(["ops"]) == 0
    out = capsys.readouterr().out
    for name in ("ReLU", "Elu", "Exp", "Log", "Sigmoid", "Tanh", "Neg", "ReluGrad", "EluGrad", "TanhGrad"):
        assert f" {name} " in out, name
    assert "Float32" in out and "BFloat16" in out
    assert "(T) -> T" in out
    assert "(T, T) -> T" in out
    n_pairs = len(registry._table)
    n_kernels = sum(len(v) for v in registry._table.values())
    assert f"{n_pairs} operator/backend pairs, {n_kernels} kernels." in out
    assert "opforge 0.1.0" in out


def test_ops_single_operator(capsys, builtin_registry):
    assert cli.main(["ops", "--op", "Elu"]) == 0
    out = capsys.readouterr().out
    assert " Elu " in out
    assert "Float16, BFloat16, Float32, Float64" in out
    assert "ReLU" not in out and "EluGrad" not in out
    assert "1 operator/backend pairs" in out


def test_ops_summarises_kernels_that_are_not_homogeneous():
    entries = registry.kernels_for("ReLU", "CPU")
    assert describe_kernels(entries) == ("(T) -> T", "Float16, BFloat16, Float32, Float64, Int32, Int64")

    class E:
        def __init__(self, attr):
            self.attr = attr

    mixed = [E(KernelAttr([mstype.float32, mstype.int32], [mstype.float32]))]
    assert describe_kernels(mixed) == ("per kernel", "Float32, Int32 -> Float32")
    pairs = [E(KernelAttr([a], [b])) for a in mstype.float_type for b in mstype.int_type]
    pattern, text = describe_kernels(pairs)
    assert pattern == "any pair"
    assert text == "16 pairs of: BFloat16, Float16, Float32, Float64"


def test_command_is_required():
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["bogus"])


# ---------------------------------------------------------------------------------------------
# doctor


def test_doctor_returns_0_when_consistent(capsys, monkeypatch):
    """A registry where op info and kernels agree: the ReLU and Elu entries only."""
    keep = {("ReLU", "CPU"), ("Elu", "CPU")}
    monkeypatch.setattr(registry, "_table", {k: v for k, v in _builtin_kernels().items() if k in keep})
    monkeypatch.setattr(op_info_registry, "_infos", {k: v for k, v in _builtin_op_infos().items() if k in keep})
    assert cli.doctor_problems() == []
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "ok 2 op infos and 10 kernels agree;" in out
    assert "primitive classes import." in out


def test_builtin_op_info_and_kernels_agree(builtin_registry):
    assert cli.doctor_problems() == []


def test_doctor_detects_op_info_without_kernel_and_kernel_without_op_info(capsys, isolated_registries):
    info = (
        CpuRegOp("DoctorProbe")
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .dtype_format(DataType.F64_Default, DataType.F64_Default)
        .get_op_info()
    )
    f16 = KernelAttr().add_input_attr(mstype.float16).add_output_attr(mstype.float16)
    f64 = KernelAttr().add_input_attr(mstype.float64).add_output_attr(mstype.float64)
    op_info_register(info)
    register_kernel("DoctorProbe", "CPU", f64)(lambda x: x)
    with pytest.raises(OpInfoMismatchError):  # registration refuses an undeclared kernel...
        register_kernel("DoctorProbe", "CPU", f16)(lambda x: x)
    register_kernel("DoctorProbeKernelOnly", "CPU", f16)(lambda x: x)
    register_kernel("DoctorProbeUndeclared", "CPU", f16)(lambda x: x)
    # ... so put an op info that misses it behind the registry's back, as a stale table would.
    op_info_registry._infos["DoctorProbeUndeclared", "CPU"] = (
        CpuRegOp("DoctorProbeUndeclared")
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F64_Default, DataType.F64_Default)
        .get_op_info()
    )

    problems = cli.doctor_problems()
    assert "DoctorProbe (CPU): op info declares (Float32) -> (Float32) but no kernel is registered for it" in problems
    assert "DoctorProbeUndeclared (CPU): kernel (Float16) -> (Float16) is not declared in its op info" in problems
    assert "DoctorProbeKernelOnly (CPU): 1 kernels are registered but there is no op info" in problems
    assert "DoctorProbe: kernels are registered but no Primitive class named 'DoctorProbe' is defined" in problems
    assert (
        "DoctorProbeKernelOnly: kernels are registered but no Primitive class named "
        "'DoctorProbeKernelOnly' is defined" in problems
    )
    assert not any("(Float64)" in p for p in problems if p.startswith("DoctorProbe "))  # declared and registered

    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "DoctorProbe (CPU): op info declares (Float32) -> (Float32)" in out
    assert "DoctorProbeKernelOnly (CPU): 1 kernels are registered but there is no op info" in out
    assert f"{len(problems)} problems" in out

    class DoctorProbe(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

    problems = cli.doctor_problems()
    assert not any("no Primitive class named 'DoctorProbe'" in p for p in problems)
    result = DoctorProbe()(Tensor(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(result.asnumpy(), [1.0, 2.0])
