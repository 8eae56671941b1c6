"""The kernel registry with many authors: replacement in place, disabling, the version, op info agreement,
snapshots. (Libraries loaded twice or replacing each other: tests/test_kernel_library.py.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import user_op

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelNotFoundError
from opforge.kernels import (
    KernelAttr,
    KernelOverrideWarning,
    OpInfoMismatchError,
    disable,
    disabled,
    enable,
    is_disabled,
    kernels_for,
    register_kernel,
    registry,
    select_kernel,
)
from opforge.op_info import CpuRegOp, DataType, get_op_info, op_info_register
from opforge.tools import cli

pytestmark = pytest.mark.usefixtures("isolated_registries")

F16, F32, F64 = (
    KernelAttr().add_input_attr(t).add_output_attr(t) for t in (mstype.float16, mstype.float32, mstype.float64)
)


def _kernel(result):
    """A Python kernel returning ``x * 0 + result``: its output says which kernel ran."""
    return lambda x: np.zeros_like(x) + x.dtype.type(result)


def _source(fn) -> str:
    return f"python:{fn.__module__}.{fn.__qualname__}"


def _op_info(name, *rows):
    builder = CpuRegOp(name).input(0, "x").output(0, "y")
    for row in rows:
        builder.dtype_format(row, row)
    return builder.get_op_info()


# ---------------------------------------------------------------------------------------------
# A later registration replaces the earlier one, in place, with a warning


def test_a_later_python_kernel_replaces_the_earlier_one_in_place():
    name = "RegProbeReplace"
    first, second, third = _kernel(1), _kernel(2), _kernel(3)
    register_kernel(name, "CPU", F32)(first)
    register_kernel(name, "CPU", F64)(second)
    prim = user_op(name)()
    x = Tensor(np.zeros(2, np.float32))
    assert prim(x).asnumpy().tolist() == [1.0, 1.0]

    with pytest.warns(KernelOverrideWarning) as record:
        register_kernel(name, "CPU", F32)(third)
    (warning,) = record
    assert str(warning.message) == (
        f"For '{name}', the CPU kernel Float32 -> Float32 from {_source(third)} replaces the one from {_source(first)}."
    )
    assert warning.filename == __file__  # points at the registration, not at the registry
    assert [(e.attr, e.impl) for e in kernels_for(name, "CPU")] == [(F32, third), (F64, second)]
    assert prim(x).asnumpy().tolist() == [3.0, 3.0]  # the primitive's plan was dropped


def test_a_python_kernel_replaces_a_builtin_one_until_restore():
    relu_f32 = next(e for e in kernels_for("ReLU", "CPU") if e.attr == F32)
    position = kernels_for("ReLU", "CPU").index(relu_f32)
    x = Tensor(np.array([-1.0, 2.0], np.float32))
    saved = registry.snapshot()
    with pytest.warns(KernelOverrideWarning, match=r"from python:.* replaces the one from builtin\.$"):
        register_kernel("ReLU", "CPU", F32)(_kernel(7))
    assert kernels_for("ReLU", "CPU")[position].kind == "python"
    assert ops.ReLU()(x).asnumpy().tolist() == [7.0, 7.0]
    registry.restore(saved)
    assert kernels_for("ReLU", "CPU")[position] is relu_f32
    assert ops.ReLU()(x).asnumpy().tolist() == [0.0, 2.0]


def test_registering_the_same_kernel_again_changes_nothing():
    name = "RegProbeSame"
    fn = _kernel(1)
    register_kernel(name, "CPU", [F32, F64])(fn)
    version = registry.version()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_kernel(name, "CPU", F32)(fn)
    assert registry.version() == version
    assert len(kernels_for(name, "CPU")) == 2


def test_overrides_turned_into_errors_leave_the_registry_unchanged():
    name = "RegProbeStrict"
    first = _kernel(1)
    register_kernel(name, "CPU", F32)(first)
    version = registry.version()
    with warnings.catch_warnings():
        warnings.simplefilter("error", KernelOverrideWarning)  # an application that forbids overrides
        with pytest.raises(KernelOverrideWarning):
            register_kernel(name, "CPU", [F64, F32])(_kernel(2))
    assert [(e.attr, e.impl) for e in kernels_for(name, "CPU")] == [(F32, first)]  # the float64 one neither
    assert registry.version() == version


# ---------------------------------------------------------------------------------------------
# Disable and enable


def test_a_disabled_kernel_is_skipped_by_selection_until_enabled():
    name = "RegProbeDisable"
    register_kernel(name, "CPU", F32)(_kernel(32))
    register_kernel(name, "CPU", F64)(_kernel(64))
    prim = user_op(name)()
    x = Tensor(np.zeros(1, np.float32))
    assert prim(x).asnumpy().tolist() == [32.0]

    entry = disable(name, "CPU", F32)
    assert entry.attr == F32 and is_disabled(entry) and is_disabled(name, "CPU", F32)
    assert [e.attr for e in kernels_for(name, "CPU")] == [F64]
    assert [e.attr for e in kernels_for(name, "CPU", include_disabled=True)] == [F32, F64]
    assert select_kernel(name, "CPU", (mstype.float32,)).entry.attr == F64  # widened to the enabled kernel
    out = prim(x)
    assert out.dtype is mstype.float32 and out.asnumpy().tolist() == [64.0]

    assert enable(entry) is entry
    assert not is_disabled(entry)
    assert [e.attr for e in kernels_for(name, "CPU")] == [F32, F64]  # back in its place
    assert prim(x).asnumpy().tolist() == [32.0]


def test_disabling_a_builtin_kernel_widens_to_another():
    x = Tensor(np.array([-1.5, 2.5], np.float32))
    with disabled("ReLU", "CPU", F32) as entry:
        assert entry.source == "builtin"
        assert select_kernel("ReLU", "CPU", (mstype.float32,)).entry.attr == F64
        out = ops.ReLU()(x)
        assert out.dtype is mstype.float32 and out.asnumpy().tolist() == [0.0, 2.5]
    assert not is_disabled(entry)
    assert select_kernel("ReLU", "CPU", (mstype.float32,)).entry is entry


def test_the_disabled_block_leaves_a_kernel_disabled_before_it_disabled():
    name = "RegProbeBlock"
    register_kernel(name, "CPU", [F32, F64])(_kernel(0))
    disable(name, "CPU", F32)
    with disabled(name, "CPU", F32):
        pass
    assert is_disabled(name, "CPU", F32)
    with pytest.raises(RuntimeError, match="inside"), disabled(name, "CPU", F64):
        raise RuntimeError("inside")
    assert not is_disabled(name, "CPU", F64)


def test_opforge_ops_counts_disabled_kernels(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    n_relu = len(kernels_for("ReLU", "CPU"))
    with disabled("ReLU", "CPU", F32):
        assert cli.main(["ops", "--op", "ReLU"]) == 0
        out = capsys.readouterr().out
    assert " Float16, BFloat16, Float32, Float64, Int32, Int64 " in out  # a disabled kernel is still listed
    assert "cpp (1 disabled)" in out
    assert "kernels. 1 disabled.\n" in out
    assert cli.main(["ops", "--op", "ReLU"]) == 0
    assert "disabled" not in capsys.readouterr().out
    assert len(kernels_for("ReLU", "CPU")) == n_relu


def test_when_every_kernel_is_disabled_the_message_says_so():
    name = "RegProbeAllOff"
    register_kernel(name, "CPU", F32)(_kernel(0))
    disable(name, "CPU", F32)
    with pytest.raises(
        KernelNotFoundError,
        match=rf"^For '{name}', every CPU kernel is disabled \(1 registered; received inputs: Float32\)\.$",
    ):
        select_kernel(name, "CPU", (mstype.float32,))


def test_a_miss_lists_the_disabled_kernels():
    name = "RegProbeMissOff"
    register_kernel(name, "CPU", [F16, F64])(_kernel(0))
    disable(name, "CPU", F64)
    with pytest.raises(KernelNotFoundError) as info:
        select_kernel(name, "CPU", (mstype.float32,))
    assert str(info.value).endswith("Closest: Float16 -> Float16\nDisabled: Float64 -> Float64")


def test_a_replacement_of_a_disabled_kernel_is_enabled():
    name = "RegProbeReplaceOff"
    register_kernel(name, "CPU", F32)(_kernel(1))
    disable(name, "CPU", F32)
    with pytest.warns(KernelOverrideWarning, match=r"\(it was disabled; the new kernel is enabled\)\.$"):
        register_kernel(name, "CPU", F32)(_kernel(2))
    assert not is_disabled(name, "CPU", F32)
    assert user_op(name)()(Tensor(np.zeros(1, np.float32))).asnumpy().tolist() == [2.0]


def test_disable_and_enable_name_what_does_not_exist():
    name = "RegProbeMissing"
    register_kernel(name, "CPU", F32)(_kernel(1))
    with pytest.raises(
        ValueError,
        match=rf"^For 'disable', no CPU kernel of '{name}' is registered for KernelAttr\(inputs=\[Float64\], "
        r"outputs=\[Float64\]\); registered: Float32 -> Float32\.$",
    ):
        disable(name, "CPU", F64)
    with pytest.raises(
        ValueError, match=r"^For 'enable', no GPU kernel of 'RegProbeMissing' is registered for .*\)\.$"
    ):
        enable(name, "GPU", F32)
    with pytest.raises(
        ValueError, match=r"^For 'disable', the 'backend' must be one of \('CPU', 'GPU'\), but got 'TPU'"
    ):
        disable(name, "TPU", F32)
    with pytest.raises(TypeError, match=r"^For 'disable', the 'kernel_attr' must be a KernelAttr, but got 'float32'"):
        disable(name, "CPU", "float32")
    with pytest.raises(TypeError, match=r"^For 'disable', the 'kernel' must be an operator name or a KernelEntry"):
        disable(3, "CPU", F32)
    (entry,) = kernels_for(name, "CPU")
    with pytest.raises(TypeError, match="give a KernelEntry alone"):
        disable(entry, "CPU")
    with pytest.warns(KernelOverrideWarning):
        register_kernel(name, "CPU", F32)(_kernel(2))
    with pytest.raises(
        ValueError, match=rf"^For 'disable', the CPU kernel .* of '{name}' from python:.* was replaced by"
    ):
        disable(entry)


# ---------------------------------------------------------------------------------------------
# The version


def test_every_change_moves_the_version_and_nothing_else_does():
    name = "RegProbeVersion"
    seen = [registry.version()]

    def moved() -> bool:
        seen.append(registry.version())
        return seen[-1] > seen[-2]

    saved = registry.snapshot()
    register_kernel(name, "CPU", F32)(_kernel(1))
    assert moved()
    with pytest.warns(KernelOverrideWarning):
        register_kernel(name, "CPU", F32)(_kernel(2))
    assert moved()
    disable(name, "CPU", F32)
    assert moved()
    disable(name, "CPU", F32)  # already disabled
    assert not moved()
    enable(name, "CPU", F32)
    assert moved()
    enable(name, "CPU", F32)
    assert not moved()
    registry.restore(registry.snapshot())  # the same state
    assert not moved()
    registry.restore(saved)
    assert moved()  # forward, never back to the snapshot's number: caches built since are stale
    assert seen[-1] > max(seen[:-1])


def test_on_change_listeners_run_after_every_change():
    name = "RegProbeListener"
    versions = []
    registry.on_change(lambda: versions.append(registry.version()))
    try:
        register_kernel(name, "CPU", [F32, F64])(_kernel(1))  # one change for the whole list
        disable(name, "CPU", F32)
        enable(name, "CPU", F32)
    finally:
        registry._listeners.pop()
    assert len(versions) == 3 and versions == sorted(versions) and versions[-1] == registry.version()


def test_a_selection_is_never_served_after_a_change():
    name = "RegProbeStale"
    register_kernel(name, "CPU", [F32, F64])(_kernel(1))
    first = select_kernel(name, "CPU", (mstype.float32,))
    assert select_kernel(name, "CPU", (mstype.float32,)) is first  # cached while nothing changes
    disable(name, "CPU", F32)
    assert select_kernel(name, "CPU", (mstype.float32,)).entry.attr == F64
    enable(name, "CPU", F32)
    with pytest.warns(KernelOverrideWarning):
        register_kernel(name, "CPU", F32)(_kernel(2))
    replaced = select_kernel(name, "CPU", (mstype.float32,))
    assert replaced.entry.attr == F32 and replaced.entry is not first.entry


# ---------------------------------------------------------------------------------------------
# Op info and kernels agree whichever is registered first


def test_a_kernel_its_op_info_does_not_declare_is_refused_with_the_list_unregistered():
    name = "RegProbeUndeclared"
    op_info_register(_op_info(name, DataType.F32_Default, DataType.F16_Default))
    fn = _kernel(1)
    with pytest.raises(OpInfoMismatchError) as info:
        register_kernel(name, "CPU", [F32, F64])(fn)
    assert str(info.value) == (
        f"For '{name}' on CPU, the kernel KernelAttr(inputs=[Float64], outputs=[Float64]) from {_source(fn)} is not "
        "declared by the op info: its dtype_format rows are (Float32) -> (Float32), (Float16) -> (Float16)."
    )
    assert isinstance(info.value, ValueError)
    assert kernels_for(name, "CPU", include_disabled=True) == []  # the declared float32 one neither
    register_kernel(name, "CPU", F32)(fn)  # declared: fine; the float16 row may stay without a kernel
    assert [e.attr for e in kernels_for(name, "CPU")] == [F32]


def test_op_info_that_does_not_declare_a_registered_kernel_is_refused():
    name = "RegProbeLateInfo"
    fn = _kernel(1)
    register_kernel(name, "CPU", [F32, F64])(fn)
    disable(name, "CPU", F64)  # disabled kernels are still registered, so they must be declared too
    with pytest.raises(OpInfoMismatchError) as info:
        op_info_register(_op_info(name, DataType.F32_Default))
    assert str(info.value) == (
        f"For '{name}' on CPU, the kernel KernelAttr(inputs=[Float64], outputs=[Float64]) from {_source(fn)} is not "
        "declared by the op info: its dtype_format rows are (Float32) -> (Float32)."
    )
    assert get_op_info(name, "CPU") is None
    op_info_register(_op_info(name, DataType.F32_Default, DataType.F64_Default))
    assert get_op_info(name, "CPU") is not None


def test_builtin_kernels_are_each_declared_by_their_op_info():
    checked = 0
    for entry in registry.all_kernels(include_disabled=True):
        info = get_op_info(entry.op_name, entry.backend)
        if entry.source == "builtin" and info is not None:
            assert info.covers(entry.attr), entry
            checked += 1
    assert checked > 400


# ---------------------------------------------------------------------------------------------
# Snapshots


def test_restore_puts_back_kernels_and_the_disabled_set():
    name = "RegProbeSnapshot"
    register_kernel(name, "CPU", [F32, F64])(_kernel(1))
    disable(name, "CPU", F64)
    saved = registry.snapshot()
    enable(name, "CPU", F64)
    disable(name, "CPU", F32)
    with pytest.warns(KernelOverrideWarning):
        register_kernel(name, "CPU", F64)(_kernel(2))
    register_kernel(name, "CPU", F16)(_kernel(3))
    registry.restore(saved)
    assert [e.attr for e in kernels_for(name, "CPU", include_disabled=True)] == [F32, F64]
    assert is_disabled(name, "CPU", F64) and not is_disabled(name, "CPU", F32)
    prim = user_op(name)()
    assert prim(Tensor(np.zeros(1, np.float32))).asnumpy().tolist() == [1.0]
    with pytest.raises(KernelNotFoundError, match="Disabled: Float64 -> Float64"):
        prim(Tensor(np.zeros(1, np.float64)))  # the float64 kernel is disabled again, and nothing else fits
