"""A kernel library built separately (as a user's extension will be) joins the same registry.

It includes only the public headers, registers with the same macro as the built-in kernels, is
compiled into its own shared library, and is loaded with ``opforge.kernels.load_library``.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import opforge
from opforge import dtype as mstype
from opforge.kernels import KernelAttr, kernels_for, load_library, registry
from opforge.kernels.custom import include_dir
from opforge.op_info import CpuRegOp, DataType, op_info_register
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


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    folder = tmp_path_factory.mktemp("kernel_library")
    (folder / "scale_shift.cc").write_text(SOURCE)
    lib = folder / "libscale_shift.so"
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
        str(folder / "scale_shift.cc"),
        "-o",
        str(lib),
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    kernels, infos = registry.snapshot(), info_registry.snapshot()
    entries = load_library(lib)
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
