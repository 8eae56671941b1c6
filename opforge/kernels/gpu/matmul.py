"""GPU kernels of MatMul and BatchMatMul (batch dims broadcast): the GPU runtime's library GEMM (cuBLAS
through CuPy), with the transposes passed to it rather than copied. A floating-point product whose batch dims
are equal or absent on one side is one GEMM step of a call launched from C (``gemm_step``: cuBLAS's own
functions, no Python frame), bfloat16's between its widening casts; an integer one ``IntMatMulKernel`` of
``csrc/kernels/cuda/matmul.cu`` (cuBLAS has no wrapping integer GEMM), an empty one a fill of zeros. Batch dims
that broadcast partly (``(2, 1)`` against ``(1, 3)``) are a GEMM step per index of the leading dims that do,
each batched over the rest (``_gemms``), or past ``MAX_GEMM_STEPS`` such steps one GEMM of the operands
broadcast into temporaries; an integer one takes any broadcast in its one launch.

As on the CPU (csrc/kernels/cpu/matmul.cc): float32 and float64 as themselves, integers wrapping,
an empty inner dimension giving zeros. float16 is cuBLAS's own half GEMM, which sums in float32 and
rounds once, like the CPU kernel (through float32 it ran 5-15x slower than cupy.matmul on an H200);
bfloat16 is widened to float32 by the GPU's Cast kernels, multiplied and rounded back.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge.errors import KernelError
from opforge.kernels import registry
from opforge.kernels.gpu.broadcast_to import broadcast_steps
from opforge.kernels.gpu.cast import widen
from opforge.kernels.gpu.cuda import CudaKernel, ctype, register_cuda_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.loops import broadcast_index
from opforge.kernels.gpu.support import StepPlan, device_launch, step_1d

__all__ = ["GEMM_VIA_FLOAT32"]

GEMM_VIA_FLOAT32 = (mstype.bfloat16,)  # GEMM in float32: no bfloat16 GEMM through CuPy


def _matmul_loop(spec, function, kernel):
    """``out[m, n] = op(x1) @ op(x2)``; the primitive checked the shapes. ``function``: the integer kernel, or
    None for cuBLAS's types."""
    device, runtime = spec.device, spec.device.runtime
    ta, tb = bool(spec.attrs.get("transpose_a", False)), bool(spec.attrs.get("transpose_b", False))
    shape, dtype = tuple(spec.out_shapes[0]), spec.entry.attr.outputs[0]
    a_shape, b_shape = (tuple(s) for s in spec.in_shapes)
    k = a_shape[-2 if ta else -1]
    half = dtype in GEMM_VIA_FLOAT32
    if k == 0 or math.prod(shape) == 0:  # nothing to compute, or an empty sum: zeros
        return device_launch(spec, [(shape, dtype.np_dtype)], fill_steps(runtime, shape, dtype.np_dtype, 0, ("out", 0)))
    if function is not None:
        launch = _int_launch(spec, function, a_shape, b_shape, shape, k, ta, tb)
    else:
        plan = StepPlan(runtime, np.float32 if half else dtype.np_dtype)
        finish = widen(plan, spec, 2) if half else None
        _gemms(plan, a_shape, b_shape, shape, ta, tb)
        if finish is not None:
            finish()
        launch = plan.launch(spec, [(shape, dtype.np_dtype)])
    if launch is not None:
        return launch

    def run(arrays):  # batch dims broadcast over more than MAX_BROADCAST_DIMS merged dims: the runtime's matmul
        a, b = arrays
        if half:
            a, b = device.cast(a, np.float32), device.cast(b, np.float32)
            out = device.empty(shape, np.float32)
            runtime.matmul(a, b, out, ta, tb)
            return device.cast(out, dtype.np_dtype)
        out = device.empty(shape, dtype.np_dtype)
        runtime.matmul(a, b, out, ta, tb)
        return out

    return run


MAX_GEMM_STEPS = 1024  # GEMM steps of one partly broadcast product; past it, one GEMM of broadcast copies


def _gemms(plan: StepPlan, a_shape: tuple, b_shape: tuple, shape: tuple, ta: bool, tb: bool) -> None:
    """``out = op(a) @ op(b)`` as GEMM steps of ``plan``: one (strided-batched) where each operand's batch dims
    are the output's or absent; where they broadcast partly, one for each index of the leading batch dims that
    do, batched over the trailing ones that each operand has whole or not at all, at the operands' offsets."""
    nb = len(shape) - 2
    batch = shape[:-2]
    a_batch, b_batch = (_padded(s[:-2], nb) for s in (a_shape, b_shape))
    j = nb  # batch[j:]: each operand has those dims all or none of them
    while j > 0 and all(x[j - 1 :] == batch[j - 1 :] or set(x[j - 1 :]) == {1} for x in (a_batch, b_batch)):
        j -= 1
    inner = (a_batch[j:], b_batch[j:], batch[j:])
    a_mat, b_mat, o_mat = (math.prod(s[-2:]) for s in (a_shape, b_shape, shape))
    outer = list(np.ndindex(*batch[:j]))
    if len(outer) > MAX_GEMM_STEPS:
        _one_gemm_of_broadcasts(plan, a_shape, b_shape, shape, ta, tb)
        return
    for index in outer:
        offsets = (
            _flat(index, a_batch[:j]) * math.prod(inner[0]) * a_mat,
            _flat(index, b_batch[:j]) * math.prod(inner[1]) * b_mat,
            _flat(index, batch[:j]) * math.prod(inner[2]) * o_mat,
        )
        plan.gemm(("in", 0), (*inner[0], *a_shape[-2:]), ("in", 1), (*inner[1], *b_shape[-2:]), ("out", 0),
                  (*inner[2], *shape[-2:]), transpose_a=ta, transpose_b=tb, offsets=offsets)  # fmt: skip


def _one_gemm_of_broadcasts(plan: StepPlan, a_shape: tuple, b_shape: tuple, shape: tuple, ta: bool, tb: bool):
    """``out = op(a) @ op(b)`` as one strided-batched GEMM step, each operand whose batch dims broadcast partly
    first broadcast to the output's batch dims in a temporary (PyTorch's expand then bmm); the plan fails
    where a broadcast needs more dims than the kernels' index holds."""
    operands = []
    for i, op_shape in enumerate((a_shape, b_shape)):
        op_batch = _padded(op_shape[:-2], len(shape) - 2)
        if op_batch == tuple(shape[:-2]) or set(op_batch) <= {1}:
            operands.append((("in", i), op_shape))
            continue
        full = (*shape[:-2], *op_shape[-2:])
        try:
            operands.append((broadcast_steps(plan, "BatchMatMul", ("in", i), op_shape, full), full))
        except KernelError:
            plan.failed = True
            return
    (a, a_full), (b, b_full) = operands
    plan.gemm(a, a_full, b, b_full, ("out", 0), shape, transpose_a=ta, transpose_b=tb)


def _padded(batch: tuple, n: int) -> tuple:
    return (1,) * (n - len(batch)) + tuple(batch)


def _flat(index: tuple, dims: tuple) -> int:
    """The row-major position of ``index`` in ``dims``, a dim of 1 broadcast (read at 0)."""
    flat = 0
    for i, d in zip(index, dims):
        flat = flat * d + (i if d != 1 else 0)
    return flat


def _int_launch(spec, function, a_shape, b_shape, shape, k, ta, tb):
    """``IntMatMulKernel<T>`` as a call launched from C (any broadcast of the batch dims: the elementwise kernels'
    ``BroadcastIndex`` over the operands' matrices), or None where the batch dims broadcast over more than
    ``MAX_BROADCAST_DIMS`` dims after merging."""
    batch, (m, n) = math.prod(shape[:-2]), shape[-2:]
    try:
        index = broadcast_index(spec.op_name, a_shape[:-2], b_shape[:-2], shape[:-2])
    except KernelError:  # too many dims for the index: the runtime's matmul takes it
        return None
    sizes = (np.int64(v) for v in (batch, m, n, k))
    params = [("in", 0), ("in", 1), ("out", 0), *sizes, index, np.int64(ta), np.int64(tb)]
    steps = step_1d(spec.device.runtime, function, batch * m * n, params)
    return device_launch(spec, [(shape, spec.entry.attr.outputs[0].np_dtype)], steps)


def _register() -> None:
    library = CudaKernel("cuBLAS", "", _matmul_loop)  # a library routine: no CUDA source
    for op in ("MatMul", "BatchMatMul"):  # BatchMatMul: the leading dims are batch dims of the same GEMM
        kernels = {}
        for entry in registry.kernels_for(op, "CPU", include_disabled=True):
            if entry.source != "builtin":
                continue
            attr = entry.attr
            integer = np.dtype(attr.inputs[0].np_dtype).kind in "iu"
            kernels[attr] = (
                CudaKernel("matmul.cu", f"opforge::cuda::IntMatMulKernel<{ctype(attr.inputs[0])}>", _matmul_loop)
                if integer
                else library
            )
        register_cuda_kernels(op, kernels)


_register()
