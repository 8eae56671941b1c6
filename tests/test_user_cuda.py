"""A user's CUDA kernel joins the GPU backend like the built-in ones: a .cu file of their own,
registered by KernelAttr, compiled with the same headers (NVRTC through CuPy on a GPU; the host
emulation in the tests), checked for sm_80 and sm_90 by the same NVRTC check, its compile errors
shown with the compiler's messages."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor
from opforge.kernels import KernelAttr
from opforge.kernels.gpu import loops
from opforge.kernels.gpu.cuda import CudaKernel, register_cuda_kernels
from opforge.primitives import PrimitiveWithInfer, prim_attr_register
from opforge.tools import cuda_check

SOURCE = r"""
#include "opforge/cuda.h"
#include "opforge/math.h"
#include "my_scale.h"  // a header of the user's own, next to the source

// y = x > 0 ? x : alpha * (exp(x) - 1), written by a user; half types load as float.
template <typename T>
__global__ void MyElu(const T* x, T* y, int64_t n, float alpha) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    const auto v = opforge::Load(x[i]);
    using C = decltype(v);
    y[i] = opforge::Store<T>(v > C(0) ? v : C(MY_SCALE) * static_cast<C>(alpha) * opforge::math::expm1(v));
  }
}
"""


class MyEluCuda(PrimitiveWithInfer):
    @prim_attr_register
    def __init__(self, alpha=1.0):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x):
        return x

    def infer_dtype(self, x):
        return x


def _register(folder, scale="1"):
    (folder / "my_scale.h").write_text(f"#pragma once\n#define MY_SCALE {scale}\n")
    source = folder / "my_elu.cu"
    source.write_text(SOURCE)
    kernels = {}
    for dtype, ctype in ((opforge.float32, "float"), (opforge.float16, "opforge::float16")):
        attr = KernelAttr().add_input_attr(dtype).add_output_attr(dtype)
        kernels[attr] = CudaKernel(str(source), f"MyElu<{ctype}>", loops.simple(("alpha", "float32")))
    register_cuda_kernels("MyEluCuda", kernels)
    return source


def test_a_user_cuda_kernel_runs_on_the_gpu(tmp_path, isolated_registries):
    _register(tmp_path)
    x = np.linspace(-2, 2, 5000, dtype=np.float32)
    for dtype in (np.float32, np.float16):
        y = MyEluCuda(alpha=0.5)(Tensor(x.astype(dtype), device="GPU"))
        assert y.device == "GPU" and y.dtype is opforge.dtype.nptype_to_dtype(np.dtype(dtype))
        expected = np.where(x > 0, x, 0.5 * np.expm1(x.astype(np.float64)))
        np.testing.assert_allclose(y.asnumpy().astype(np.float64), expected, rtol=2e-3, atol=1e-3)


def test_a_user_cuda_kernel_compiles_for_both_architectures(tmp_path, isolated_registries):
    source = _register(tmp_path)
    results = cuda_check.compile_all(sources={str(source)})
    assert {r.arch for r in results} == set(cuda_check.ARCHITECTURES)
    assert all(r.ok for r in results), [r.log for r in results]


def test_a_compile_error_in_a_user_cuda_kernel_shows_the_messages(tmp_path, isolated_registries):
    source = _register(tmp_path)
    source.write_text(SOURCE.replace("opforge::math::expm1(v)", "undefined_function(v)"))
    results = cuda_check.compile_all(sources={str(source)})
    assert results and not any(r.ok for r in results)
    assert "undefined_function" in results[0].log
    with pytest.raises(Exception, match="undefined_function"):
        MyEluCuda()(Tensor(np.ones(3, np.float32), device="GPU"))
