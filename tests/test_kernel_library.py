"""A kernel library built separately (as a user's extension will be) joins the same registry.

It includes only the public headers, registers with the same macro as the built-in kernels, is
compiled into its own shared library, and is loaded with ``opforge.kernels.load_library``: once per
file, replacing (with a warning) kernels registered before it, refused when its op info disagrees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import opforge
from opforge import _C
from opforge import dtype as mstype
from opforge.kernels import KernelAttr, KernelOverrideWarning, OpInfoMismatchError, kernels_for, load_library, registry
from opforge.kernels.custom import include_dir
from opforge.op_info import CpuRegOp, DataType, get_op_info, op_info_register
from opforge.op_info import registry as info_registry
from opforge.primitives import PrimitiveWithInfer, prim_attr_register

SOURCE = r"""
#include "opforge/kernel.h"

using namespace opforge;

// y = scale * x + 1, a kernel the core has never seen.
template <typename T>
class ScaleShiftKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    scale_ = ctx.GetFloat("scale");
    n_ = ctx.input(0).numel();
    OPF_CHECK(scale_ != 0.0, "For '" << ctx.op_name() << "', the 'scale' must not be 0, but got 0.");
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = static_cast<T>(scale_) * x[i] + T(1);
  }

 private:
  double scale_ = 1.0;
  int64_t n_ = 0;
};

MS_REG_CPU_KERNEL(LibScaleShift, KernelAttr().AddInputAttr(kNumberTypeFloat32).AddOutputAttr(kNumberTypeFloat32),
                  ScaleShiftKernel<float>);
MS_REG_CPU_KERNEL(LibScaleShift, KernelAttr().AddInputAttr(kNumberTypeFloat64).AddOutputAttr(kNumberTypeFloat64),
                  ScaleShiftKernel<double>);
"""


class LibScaleShift(PrimitiveWithInfer):
    """y = scale * x + 1. dtypes: float32, float64 (kernels from a separately built library)."""

    @prim_attr_register
    def __init__(self, scale=2.0):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])


def _compile(source: str, lib) -> None:
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    src = lib.with_suffix(".cc")
    src.write_text(source)
    cmd = [
        compiler,
        "-std=c++17",
        "-O2",
        "-shared",
        "-fPIC",
        "-fvisibility=hidden",
        "-Wall",
        "-Wextra",
        "-Werror",
        f"-I{include_dir()}",
        str(src),
        "-o",
        str(lib),
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def library_path(tmp_path_factory):
    lib = tmp_path_factory.mktemp("kernel_library") / "libscale_shift.so"
    _compile(SOURCE, lib)
    return lib


@pytest.fixture(scope="module")
def library(library_path):
    kernels, infos = registry.snapshot(), info_registry.snapshot()
    entries = load_library(library_path)
    op_info_register(
        CpuRegOp("LibScaleShift")
        .input(0, "x")
        .output(0, "y")
        .attr("scale", "optional", "float")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .dtype_format(DataType.F64_Default, DataType.F64_Default)
        .get_op_info()
    )
    yield entries
    registry.restore(kernels)
    info_registry.restore(infos)


def test_library_kernels_join_the_registry(library):
    assert [e.attr for e in library] == [
        KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32),
        KernelAttr().add_input_attr(mstype.float64).add_output_attr(mstype.float64),
    ]
    assert all(e.kind == "cpp" and e.source.endswith("libscale_shift.so") for e in library)
    assert len(kernels_for("LibScaleShift", "CPU")) == 2


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_library_kernel_runs_through_a_primitive(library, np_dtype):
    x = np.array([[1.0, -2.0], [0.5, 3.0]], np_dtype)
    y = LibScaleShift(scale=3.0)(opforge.Tensor(x))
    assert y.dtype is mstype.to_dtype(np_dtype)
    np.testing.assert_allclose(y.asnumpy(), 3.0 * x + 1.0)


def test_library_kernel_errors_reach_python(library):
    with pytest.raises(opforge.KernelError, match="the 'scale' must not be 0"):
        LibScaleShift(scale=0.0)(opforge.Tensor(np.ones(3, np.float32)))


def test_loading_a_library_without_kernels_is_a_clear_error(tmp_path):
    src = tmp_path / "empty.cc"
    src.write_text('extern "C" int nothing_here() { return 0; }\n')
    lib = tmp_path / "libempty.so"
    subprocess.run(["g++", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    with pytest.raises(RuntimeError, match="registers no kernels"):
        load_library(lib)


def test_loading_a_missing_library_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="cannot load kernel library"):
        load_library(tmp_path / "missing.so")


# ---------------------------------------------------------------------------------------------
# Many libraries: each file loaded once, later kernels replace earlier ones, op info agrees


def _cpp_factory_size() -> int:
    """How many kernel definitions the C++ factory holds: it grows only when a library is dlopened."""
    return len(_C.kernel_defs())


def test_loading_the_same_file_again_registers_nothing(library, library_path, tmp_path):
    version, size = registry.version(), _cpp_factory_size()
    link = tmp_path / "link.so"
    link.symlink_to(library_path)
    hard = tmp_path / "hard.so"
    os.link(library_path, hard)
    for path in (library_path, str(library_path), link, hard):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no KernelOverrideWarning: nothing is replaced
            assert load_library(path) == library
    assert kernels_for("LibScaleShift", "CPU") == library
    assert registry.version() == version
    assert _cpp_factory_size() == size


SHIFT_SOURCE = r"""
#include "opforge/kernel.h"

using namespace opforge;

// y = x + SHIFT: two builds differ only by SHIFT, so the output tells which library's kernel ran.
template <typename T>
class ShiftKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override { n_ = ctx.input(0).numel(); }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = x[i] + T(SHIFT);
  }

 private:
  int64_t n_ = 0;
};

MS_REG_CPU_KERNEL(LibShift, KernelAttr().AddInputAttr(kNumberTypeFloat32).AddOutputAttr(kNumberTypeFloat32),
                  ShiftKernel<float>);
MS_REG_CPU_KERNEL(LibShift, KernelAttr().AddInputAttr(kNumberTypeFloat64).AddOutputAttr(kNumberTypeFloat64),
                  ShiftKernel<double>);
"""


class LibShift(PrimitiveWithInfer):
    """y = x + a shift compiled into the library. dtypes: float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])


@pytest.fixture(scope="module")
def shift_libraries(tmp_path_factory):
    """Two builds of LibShift's kernels: y = x + 1 and y = x + 2."""
    folder = tmp_path_factory.mktemp("shift_libraries")
    libs = []
    for shift in (1, 2):
        lib = folder / f"libshift{shift}.so"
        _compile(SHIFT_SOURCE.replace("SHIFT", str(shift)), lib)
        libs.append(lib)
    return libs


def _shift(np_dtype=np.float32):
    return LibShift()(opforge.Tensor(np.array([1.0, 2.0], np_dtype))).asnumpy().tolist()


def test_a_later_library_replaces_the_kernels_in_place_with_a_warning(shift_libraries, isolated_registries):
    one, two = shift_libraries
    first = load_library(one)
    assert _shift() == [2.0, 3.0]

    with pytest.warns(KernelOverrideWarning) as record:
        second = load_library(two)
    messages = [str(w.message) for w in record]
    assert len(messages) == 2
    assert messages[0] == (
        f"For 'LibShift', the CPU kernel Float32 -> Float32 from {os.path.realpath(two)} replaces the one from "
        f"{os.path.realpath(one)}."
    )
    assert all(w.filename == __file__ for w in record)  # the warning points at the load_library call
    assert kernels_for("LibShift", "CPU") == second
    assert [e.attr for e in second] == [e.attr for e in first]  # the same places, in the same order
    assert _shift() == [3.0, 4.0] and _shift(np.float64) == [3.0, 4.0]  # the plan was rebuilt

    version = registry.version()
    assert load_library(one) == first  # loaded already: a no-op, even though its kernels were replaced
    assert registry.version() == version
    assert _shift() == [3.0, 4.0]


def test_restore_forgets_a_library_and_loading_it_again_does_not_dlopen_again(shift_libraries):
    one, _ = shift_libraries
    kernels, infos = registry.snapshot(), info_registry.snapshot()
    try:
        load_library(one)
        size = _cpp_factory_size()
        registry.restore(kernels)
        assert kernels_for("LibShift", "CPU") == []
        with pytest.raises(opforge.KernelNotFoundError):
            _shift()
        entries = load_library(one)  # registered again, from the definitions read the first time
        assert kernels_for("LibShift", "CPU") == entries
        assert _cpp_factory_size() == size
        assert _shift() == [2.0, 3.0]
    finally:
        registry.restore(kernels)
        info_registry.restore(infos)


def test_a_library_its_op_info_does_not_declare_is_refused_whole(shift_libraries, isolated_registries):
    one, _ = shift_libraries
    op_info_register(
        CpuRegOp("LibShift")
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .get_op_info()
    )
    with pytest.raises(OpInfoMismatchError) as info:
        load_library(one)
    assert str(info.value) == (
        "For 'LibShift' on CPU, the kernel KernelAttr(inputs=[Float64], outputs=[Float64]) from "
        f"{os.path.realpath(one)} is not declared by the op info: its dtype_format rows are (Float32) -> (Float32)."
    )
    assert kernels_for("LibShift", "CPU") == []  # not even the declared float32 kernel


def test_op_info_that_does_not_declare_a_loaded_librarys_kernel_is_refused(shift_libraries, isolated_registries):
    one, _ = shift_libraries
    load_library(one)
    narrow = (
        CpuRegOp("LibShift")
        .input(0, "x")
        .output(0, "y")
        .dtype_format(DataType.F64_Default, DataType.F64_Default)
        .get_op_info()
    )
    with pytest.raises(OpInfoMismatchError, match=r"^For 'LibShift' on CPU, the kernel KernelAttr\(inputs=\[Float32\]"):
        op_info_register(narrow)
    assert get_op_info("LibShift", "CPU") is None
