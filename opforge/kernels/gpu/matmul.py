"""GPU kernels of MatMul and BatchMatMul (batch dims broadcast): the GPU runtime's library GEMM (cuBLAS
through CuPy), with the transposes passed to it rather than copied. A floating-point product whose batch dims
are equal or absent on one side is one GEMM step of a call launched from C (``gemm_step``: cuBLAS's own
functions, no Python frame), bfloat16's between its widening casts; the rest (integers, partly broadcast
batches, empty products) goes through ``runtime.matmul``.

As on the CPU (csrc/kernels/cpu/matmul.cc): float32 and float64 as themselves, integers wrapping,
an empty inner dimension giving zeros. float16 is cuBLAS's own half GEMM, which sums in float32 and
rounds once, like the CPU kernel (through float32 it ran 5-15x slower than cupy.matmul on an H200);
bfloat16 is widened to float32 by the GPU's Cast kernels, multiplied and rounded back.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge.kernels import registry
from opforge.kernels.gpu.cast import widen
from opforge.kernels.gpu.cuda import CudaKernel, register_cuda_kernels
from opforge.kernels.gpu.support import StepPlan

__all__ = ["GEMM_VIA_FLOAT32"]

GEMM_VIA_FLOAT32 = (mstype.bfloat16,)  # GEMM in float32: no bfloat16 GEMM through CuPy


def _matmul_loop(spec, function, kernel):
    """``out[m, n] = op(x1) @ op(x2)``; the primitive checked the shapes."""
    device, runtime = spec.device, spec.device.runtime
    ta, tb = bool(spec.attrs.get("transpose_a", False)), bool(spec.attrs.get("transpose_b", False))
    shape, dtype = tuple(spec.out_shapes[0]), spec.entry.attr.outputs[0]
    k = spec.in_shapes[0][-2 if ta else -1]
    half = dtype in GEMM_VIA_FLOAT32
    if k > 0 and math.prod(shape) > 0:
        plan = StepPlan(runtime, np.float32 if half else dtype.np_dtype)
        finish = widen(plan, spec, 2) if half else None
        a_shape, b_shape = (tuple(s) for s in spec.in_shapes)
        plan.gemm(("in", 0), a_shape, ("in", 1), b_shape, ("out", 0), shape, transpose_a=ta, transpose_b=tb)
        if finish is not None:
            finish()
        launch = plan.launch(spec, [(shape, dtype.np_dtype)])
        if launch is not None:
            return launch

    def run(arrays):
        a, b = arrays
        if math.prod(shape) == 0 or k == 0:  # nothing to compute, or an empty sum: zeros
            return device.full(shape, 0, dtype.np_dtype)
        if half:
            a, b = device.cast(a, np.float32), device.cast(b, np.float32)
            out = device.empty(shape, np.float32)
            runtime.matmul(a, b, out, ta, tb)
            return device.cast(out, dtype.np_dtype)
        out = device.empty(shape, dtype.np_dtype)
        runtime.matmul(a, b, out, ta, tb)
        return out

    return run


def _register() -> None:
    kernel = CudaKernel("cuBLAS", "", _matmul_loop)  # a library routine: no CUDA source
    for op in ("MatMul", "BatchMatMul"):  # BatchMatMul: the leading dims are batch dims of the same GEMM
        cpu = [e.attr for e in registry.kernels_for(op, "CPU", include_disabled=True) if e.source == "builtin"]
        register_cuda_kernels(op, {a: kernel for a in cpu})


_register()
